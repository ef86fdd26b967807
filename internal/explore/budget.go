package explore

// Memory and budgets: how a waiting state keeps its world (its own, a
// base shared with its siblings, or the root's), spare worlds for reuse,
// and the budgets that end a search early.

import (
	"runtime/metrics"
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/internal/sim"
)

// A waiting state does not keep a world of its own when memory is short: it
// keeps its path and a base, the world of an ancestor shared by its
// descendants, and is re-run from there when its turn comes (re-running a
// path is exact: the world is deterministic). How far a state may be from
// its base grows as the heap fills (reuseDistance), so the frontier costs a
// path and a share of a world per state instead of a world; it never
// steers the search, so the counts do not depend on it.

// snap is a world waiting states are re-run from; never changed once made
// (each use runs on a copy), but for an own world.
type snap struct {
	w     *sim.World
	depth int
}

type kidWorlds uint8

const (
	kidsOwn     kidWorlds = iota // each child keeps the copy its move ran on
	kidsShare                    // the children re-run from this state's world
	kidsInherit                  // the children re-run from this state's base
	kidsRoot                     // the children re-run from the root's world
)

func (x *explorer) outOfBudget() bool {
	if x.stop {
		return true
	}
	if x.o.MaxStates > 0 && x.rep.DistinctStates >= x.o.MaxStates {
		x.rep.Stopped, x.stop = "max-states", true
		return true
	}
	// The wall clock and the heap are read every 256 expansions: they only
	// end the search (or choose how waiting states keep their worlds),
	// never steer it, so the counts of a search that ends by exhaustion do
	// not depend on them.
	if x.polls++; x.polls%256 != 0 {
		return false
	}
	// How waiting states keep their worlds follows the live heap as of the
	// last collection. (It followed the heap's objects, garbage included:
	// under the command's GOGC of 400 those are up to five times the live
	// heap, so a search with a fifth of its budget in use re-ran every
	// state from the root, a hundred moves and more an expansion on the
	// 3-holder space. The memory limit, set to the budget, collects the
	// garbage before it matters.)
	heap := heapBytes()
	x.rep.PeakHeap = max(x.rep.PeakHeap, heap)
	x.reuse = reuseDistance(heap, x.o.MaxMemory)
	if x.o.reuse != 0 {
		x.reuse = max(x.o.reuse, 0)
	}
	if x.deadline.IsZero() && x.o.MaxMemory <= 0 && x.o.Progress == nil {
		return false
	}
	now := time.Now()
	if !x.deadline.IsZero() && now.After(x.deadline) {
		x.rep.Stopped, x.stop = "timeout", true
		return true
	}
	if x.o.MaxMemory > 0 && heap > uint64(x.o.MaxMemory)/10*9 {
		x.rep.Stopped, x.stop = "max-memory", true
		return true
	}
	if x.o.Progress != nil && now.Sub(x.lastProg) >= 100*time.Millisecond {
		x.lastProg = now
		x.o.Progress(Progress{States: x.rep.States, Distinct: x.rep.DistinctStates, Depth: x.rep.MaxDepth, Elapsed: now.Sub(x.start), HeapBytes: heap})
	}
	return false
}

// reuseDistance is how many moves a waiting state may be from the world it
// is re-run from, for a heap of heap bytes out of a budget of max: 0 (each
// keeps its own world: the fastest) while under a quarter of the budget is
// used, then 1, 4, 16, 64 and 256, and past 70% of the budget any distance
// (rootOnly: a waiting state re-runs from the root's world, and costs its
// path and its visited entry only). The distances past 16 keep a deep space
// finishing: re-running paths of 150 and more moves each from the root
// costs a whole path per state, while a world every 64 moves costs a 64th
// of one (docs/exploration.md, "Measured choices in the code").
func reuseDistance(heap uint64, max int64) int {
	if max <= 0 {
		return 0
	}
	f := float64(heap) / float64(max)
	switch {
	case f < 0.25:
		return 0
	case f < 0.35:
		return 1
	case f < 0.42:
		return 4
	case f < 0.5:
		return 16
	case f < 0.6:
		return 64
	case f < 0.7:
		return 256
	}
	return rootOnly
}

// rootOnly is the reuse distance at which every waiting state re-runs from
// the root's world.
const rootOnly = 1 << 30

// heapBytes returns the Go heap's live bytes, as the last collection
// marked them.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return s[0].Value.Uint64()
	}
	return 0
}

// spares are the worlds depth-first search is done with (sim.World.
// CloneInto reuses them). Candidates are gathered after an expansion
// (put), those still in use are struck off (keep), and the rest join the
// free list (flush): a world is spare only when no waiting state holds it.
type spares struct {
	free, cand []*sim.World
}

// maxSpares bounds the free list: a path's worth of worlds comes and goes
// at the top of the stack, so a few dozen serve.
const maxSpares = 64

// take returns a spare world, or nil (a copy is then a new world); nil
// spares (a strategy that does not reuse worlds) has none.
func (s *spares) take() *sim.World {
	if s == nil || len(s.free) == 0 {
		return nil
	}
	w := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	return w
}

func (s *spares) put(w *sim.World) {
	if s != nil && w != nil {
		s.cand = append(s.cand, w)
	}
}

// keep strikes w off the candidates: a waiting state holds it.
func (s *spares) keep(w *sim.World) {
	if s == nil || w == nil {
		return
	}
	for i, c := range s.cand {
		if c == w {
			s.cand[i] = nil
		}
	}
}

// flush moves the candidates left, each once, to the free list.
func (s *spares) flush() {
	if s == nil {
		return
	}
	for i, w := range s.cand {
		if w != nil && len(s.free) < maxSpares && !slices.Contains(s.cand[:i], w) {
			s.free = append(s.free, w)
		}
	}
	clear(s.cand)
	s.cand = s.cand[:0]
}

// world is the world an item keeps of its own (nil: it re-runs from a
// shared one).
func (it *item) world() *sim.World {
	if it.own && it.base != nil {
		return it.base.w
	}
	return nil
}

// world is the world a transition's run kept for its child (nil: none of
// its own).
func (cd *cand) world() *sim.World {
	if cd.own && cd.base != nil {
		return cd.base.w
	}
	return nil
}

// materializePure returns the item's world: its own, a copy of its base
// re-run along its path, or the root's re-run when states are not copied.
func (x *explorer) materializePure(it *item) (*sim.World, error) {
	switch {
	case it.base == nil:
		return x.newWorld(it.path, int(it.depth))
	case it.own:
		return it.base.w, nil
	}
	w := it.base.w.Clone()
	if err := replay(w, it.path.last(int(it.depth)-it.base.depth), int(it.depth)); err != nil {
		return nil, err
	}
	return w, nil
}
