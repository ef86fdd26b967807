package explore

// Paths: a state is named by the choices that reach it from the root (a
// path), and re-created by re-running them (the world is deterministic);
// vecChooser replays a path's choice values and enumerates the next ones.

import (
	"fmt"
	"sync"

	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// path is a path's choice values, shared with its parent's: a state stores
// only the values of its last move (labels are recovered by replaying).
// 32 bytes, one allocation: the values are inline when there are at most
// three (most moves take one or two), else behind more. (A slice field
// beside an inline array would make it 48: a waiting state's live heap is
// mostly its path.)
type path struct {
	parent *path
	more   *[]int32 // the values, when more than fit inline
	inline [3]int32
	n      int32
}

// vals returns the values of p's last move.
func (p *path) vals() []int32 {
	if p.more != nil {
		return *p.more
	}
	return p.inline[:p.n]
}

func newPath(parent *path, cs []scenario.Choice) *path {
	var more *[]int32
	if len(cs) > len(path{}.inline) {
		vals := make([]int32, len(cs))
		more = &vals
	}
	return fillPath(&path{}, parent, cs, more)
}

// fillPath makes p the path of parent and one more move's choices: inline
// when they fit, else in more (a slice of len(cs) values). (The room is
// made by the caller, on the branch that needs it: a local slice whose
// address one branch took was moved to the heap on both, an allocation a
// state, a fifth of depth-first search's.)
func fillPath(p *path, parent *path, cs []scenario.Choice, more *[]int32) *path {
	p.parent, p.n, p.more = parent, int32(len(cs)), nil
	var vals []int32
	if len(cs) <= len(p.inline) {
		vals = p.inline[:len(cs)]
	} else {
		vals, p.more = *more, more
	}
	for i, c := range cs {
		vals[i] = int32(c.Value)
	}
	return p
}

// last returns the values of the last n moves of p, in order.
func (p *path) last(n int) []int {
	var parts [][]int32
	total := 0
	for q := p; q != nil && len(parts) < n; q = q.parent {
		parts = append(parts, q.vals())
		total += len(parts[len(parts)-1])
	}
	out := make([]int, 0, total)
	for i := len(parts) - 1; i >= 0; i-- {
		for _, v := range parts[i] {
			out = append(out, int(v))
		}
	}
	return out
}

// pathSlab hands out paths from blocks of pathBlock: a path a state, one
// allocation a block. Depth-first search only (nil: a path an
// allocation): it drops a finished subtree's paths together, so a block
// is soon free, while breadth-first search's pruned states would keep
// their blocks' waiting paths company.
//
// A move of more than three values (a path's more) takes its values and
// their slice from blocks too, where newPath allocates both.
type pathSlab struct {
	block []path
	more  [][]int32
	vals  []int32
}

const pathBlock = 256

func (s *pathSlab) next(parent *path, cs []scenario.Choice) *path {
	if s == nil {
		return newPath(parent, cs)
	}
	if len(s.block) == 0 {
		s.block = make([]path, pathBlock)
	}
	p := &s.block[0]
	s.block = s.block[1:]
	var more *[]int32
	if len(cs) > len(p.inline) {
		if len(s.more) == 0 {
			s.more = make([][]int32, pathBlock)
		}
		if len(s.vals) < len(cs) {
			s.vals = make([]int32, max(4*pathBlock, len(cs)))
		}
		s.more[0] = s.vals[:len(cs):len(cs)]
		s.vals = s.vals[len(cs):]
		more = &s.more[0]
		s.more = s.more[1:]
	}
	return fillPath(p, parent, cs, more)
}

// replay runs w to steps moves with the given choice values, taking the
// monitor's flags after each move as the search did (they were judged
// then).
func replay(w *sim.World, vals []int, steps int) error {
	w.SetChooser(&vecChooser{prefix: vals})
	for w.Steps() < steps && w.Step() {
		w.Monitor().(Monitor).Take(w)
	}
	if w.Err() != nil {
		return w.Err()
	}
	if w.Steps() != steps {
		return fmt.Errorf("explore: a path of %d moves re-ran to %d (the world is not deterministic)", steps, w.Steps())
	}
	return nil
}

// newWorld builds the explored world and runs p for steps moves.
func (x *explorer) newWorld(p *path, steps int) (*sim.World, error) {
	w, _, err := x.rerun(p, steps)
	return w, err
}

// rerun builds the explored world, runs p for steps moves and returns the
// chooser, which recorded the choices with their labels.
func (x *explorer) rerun(p *path, steps int) (*sim.World, *vecChooser, error) {
	var o sim.Options
	if x.o.Sim != nil {
		o = *x.o.Sim
	}
	rc := &vecChooser{prefix: p.last(steps)}
	o.Chooser, o.NoTrace, o.NoRunHash, o.NoFaultCounts, o.Monitor = rc, true, true, true, x.o.Judges.NewMonitor(MonitorConfig{Blind: x.o.blindMonitor, Verify: x.o.VerifyDigests})
	o.Pairs = &x.pairs
	w, err := sim.NewWorld(x.sc, &o)
	if err != nil {
		return nil, nil, err
	}
	w.EnableHashing()
	if x.o.VerifyDigests {
		w.VerifyDigests()
	}
	w.Monitor().(Monitor).Take(w)
	for w.Steps() < steps && w.Step() {
		w.Monitor().(Monitor).Take(w)
	}
	if w.Err() != nil {
		return nil, nil, w.Err()
	}
	return w, rc, nil
}

// labelled returns p's choices with their labels, for a counterexample.
func (x *explorer) labelled(p *path, steps int) ([]scenario.Choice, error) {
	_, rc, err := x.rerun(p, steps)
	if err != nil {
		return nil, err
	}
	return rc.taken, nil
}

// vecChooser is the Picker of one transition's run: the prefix's values,
// then the defaults; it records what was asked, so next can count on.
type vecChooser struct {
	prefix []int
	taken  []scenario.Choice
	doms   []int
}

// choosers keeps the expansions' choosers (expandPure), so an expansion
// allocates none.
var choosers = sync.Pool{New: func() any { return new(vecChooser) }}

// defaults is a Picker that takes every default: the chooser a world keeps
// between moves (whoever steps it next gives it its own first).
type defaults struct{}

func (defaults) Pick(int, string) int { return 0 }

func (defaults) Int64(lo, _ int64, _ string) int64 { return lo }

// reset makes v a fresh chooser of prefix, keeping its buffers.
func (v *vecChooser) reset(prefix []int) {
	v.prefix, v.taken, v.doms = prefix, v.taken[:0], v.doms[:0]
}

func (v *vecChooser) Pick(n int, label string) int {
	i := len(v.taken)
	val := 0
	if i < len(v.prefix) {
		val = v.prefix[i]
	}
	if val >= n {
		val = 0
	}
	v.taken = append(v.taken, scenario.Choice{Label: label, Value: val})
	v.doms = append(v.doms, n)
	return val
}

func (v *vecChooser) Int64(lo, hi int64, label string) int64 {
	if hi <= lo {
		return lo
	}
	return lo + int64(v.Pick(int(hi-lo+1), label))
}

// next returns the next combination of the choices just taken, or false.
func (v *vecChooser) next() ([]int, bool) {
	for p := len(v.taken) - 1; p >= 0; p-- {
		if v.taken[p].Value+1 < v.doms[p] {
			out := make([]int, p+1)
			for i := 0; i < p; i++ {
				out[i] = v.taken[i].Value
			}
			out[p] = v.taken[p].Value + 1
			return out, true
		}
	}
	return nil, false
}
