package explore

// Breadth-first and depth-first search over an enumerable world, with state
// hashing and sleep sets.
//
// A transition is a move of World.Moves together with the values of the
// choice points it meets while it runs (a message's delay, its loss): the
// explorer enumerates those by running the move on a copy of the state
// once per combination, odometer-fashion, each run telling the next.
//
// The partial-order reduction is sleep sets (Godefroid 1996): after
// exploring transition t from a state, t is put to sleep in the states
// reached by transitions independent of it (sim.Move.Independent: steps of
// two different holders at one instant), since both orders lead to the same
// state; a sleeping transition is not explored. With state caching, a
// state is pruned when it was seen before with a sleep set contained in the
// current one; when it was seen with transitions asleep that are awake now,
// exactly those are explored from it again, and its stored sleep set
// shrinks to the intersection. This is the sound combination of sleep sets
// with a visited set (Godefroid, Holzmann, Pirottin, "State-space caching
// revisited", 1995): every transition of every reachable state is explored
// from some visit of that state unless it commutes with one that was, and
// two states with one digest have the same futures and verdicts
// (sim/state.go), so no violation reachable within the bounds is lost.

import (
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// tkey identifies a transition while its move waits: the move (an event by
// its sequence number, a fault or a request by its index) and its
// non-default choice values (position:value, in order).
type tkey struct {
	kind sim.MoveKind
	id   uint64
	dev  string
	node int32
}

func (k tkey) independent(o tkey) bool {
	if k.node < 0 || o.node < 0 || k.node == o.node {
		return false
	}
	// Two transitions that both spend the network's deviation budget do not
	// commute: the first may leave none for the second.
	return k.dev == "" || o.dev == ""
}

func keyOf(m sim.Move, vc *vecChooser) tkey {
	k := tkey{kind: m.Kind, node: m.Node}
	if m.Kind == sim.MoveEvent {
		k.id = m.Seq
	} else {
		k.id = uint64(m.Index)
	}
	for i, c := range vc.taken {
		if c.Value != 0 {
			k.dev += strconv.Itoa(i) + ":" + strconv.Itoa(c.Value) + ","
		}
	}
	return k
}

// entry is a visited state: the sleep set it was (or will be) expanded with.
type entry struct {
	sleep    []tkey
	expanded bool
}

// path is a path's choices, shared with its parent's: a state stores only
// the choices of its last move.
type path struct {
	parent *path
	cs     []scenario.Choice
}

// flat returns every choice from the root, in order.
func (p *path) flat() []scenario.Choice {
	var parts [][]scenario.Choice
	n := 0
	for q := p; q != nil; q = q.parent {
		parts = append(parts, q.cs)
		n += len(q.cs)
	}
	out := make([]scenario.Choice, 0, n)
	for i := len(parts) - 1; i >= 0; i-- {
		out = append(out, parts[i]...)
	}
	return out
}

// item is a state waiting to be expanded.
type item struct {
	w     *sim.World // nil: re-run the path from the root
	path  *path
	depth int
	sleep []tkey
	only  []tkey // a re-expansion: just these transitions
	e     *entry
}

func contains(ks []tkey, k tkey) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func subset(a, b []tkey) bool {
	for _, k := range a {
		if !contains(b, k) {
			return false
		}
	}
	return true
}

func (x *explorer) outOfBudget() bool {
	if x.stop {
		return true
	}
	if x.o.MaxStates > 0 && x.rep.DistinctStates >= x.o.MaxStates {
		x.rep.Stopped, x.stop = "max-states", true
		return true
	}
	// The wall clock and the heap are read every 256 expansions: they only
	// end the search, never steer it, so the counts of a search that ends
	// by exhaustion do not depend on them.
	if x.polls++; x.polls%256 != 0 {
		return false
	}
	heap := heapBytes()
	x.rep.PeakHeap = max(x.rep.PeakHeap, heap)
	if x.deadline.IsZero() && x.o.MaxMemory <= 0 && x.o.Progress == nil {
		return false
	}
	now := time.Now()
	if !x.deadline.IsZero() && now.After(x.deadline) {
		x.rep.Stopped, x.stop = "timeout", true
		return true
	}
	if x.o.MaxMemory > 0 && heap > uint64(x.o.MaxMemory) {
		x.rep.Stopped, x.stop = "max-memory", true
		return true
	}
	if x.o.Progress != nil && now.Sub(x.lastProg) >= 100*time.Millisecond {
		x.lastProg = now
		x.o.Progress(Progress{States: x.rep.States, Distinct: x.rep.DistinctStates, Depth: x.rep.MaxDepth, Elapsed: now.Sub(x.start), HeapBytes: heap})
	}
	return false
}

// heapBytes is the Go heap's object bytes (live and not yet swept).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// bfsChunk is how many waiting states breadth-first search expands at
// once, in parallel on Options.Workers goroutines, before merging what they
// found into the visited set in queue order. It is a constant, not the
// number of workers: the states of a chunk are expanded with the sleep sets
// their visited entries had when the chunk began, so the counts and the
// counterexample depend on the chunk, never on the workers or GOMAXPROCS.
const bfsChunk = 64

func (x *explorer) bfs(root *sim.World) {
	x.rep.DistinctStates++
	queue := []*item{{w: root, e: x.remember(root, nil)}}
	workers := max(x.o.Workers, 1)
	var chunk []*item
	var sleeps [][]tkey
	var results [][]cand
	for len(queue) > 0 && !x.outOfBudget() {
		n := min(len(queue), bfsChunk)
		chunk = append(chunk[:0], queue[:n]...)
		clear(queue[:n])
		queue = queue[n:]
		sleeps = sleeps[:0]
		for _, it := range chunk {
			sleeps = append(sleeps, x.claim(it))
		}
		results = append(results[:0], make([][]cand, n)...)
		if workers == 1 || n == 1 {
			for i, it := range chunk {
				results[i] = x.expandPure(it, sleeps[i])
			}
		} else {
			var next atomic.Int64
			var wg sync.WaitGroup
			for range min(workers, n) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
						results[i] = x.expandPure(chunk[i], sleeps[i])
					}
				}()
			}
			wg.Wait()
		}
		for i, it := range chunk {
			if i > 0 && x.outOfBudget() {
				break
			}
			x.apply(it, results[i], func(c *item) { queue = append(queue, c) })
			results[i] = nil
		}
	}
}

func (x *explorer) dfs(root *sim.World) {
	x.rep.DistinctStates++
	var visit func(it *item)
	visit = func(it *item) {
		if x.outOfBudget() {
			return
		}
		var kids []*item
		x.apply(it, x.expandPure(it, x.claim(it)), func(c *item) { kids = append(kids, c) })
		for _, c := range kids {
			visit(c)
			if x.stop {
				return
			}
		}
	}
	visit(&item{w: root, e: x.remember(root, nil)})
}

// remember records root-like states in the visited set.
func (x *explorer) remember(w *sim.World, sleep []tkey) *entry {
	if x.o.NoHash {
		return &entry{sleep: sleep}
	}
	e := &entry{sleep: sleep}
	x.visited[w.StateHash()] = e
	return e
}

// claim marks it's state expanded and returns the sleep set it is expanded
// with: its visited entry's (which later visits may have shrunk), or its
// own.
func (x *explorer) claim(it *item) []tkey {
	if it.e != nil {
		it.e.expanded = true
		return it.e.sleep
	}
	return it.sleep
}

// cand is one transition of an expanded state as a worker found it, for
// the merge (apply) to count, judge and remember in order. A leaf cand is
// the state itself, judged at the end of its path.
type cand struct {
	err        error
	leaf, cut  bool // the state ends its path (cut: by the depth bound)
	asleep     bool // the transition is asleep: pruned
	c          *sim.World
	k          tkey
	cs         []scenario.Choice
	childSleep []tkey
	hash       uint64
	judged     bool // a monitor flagged the state: v is the full judges'
	v          verdict
	ever       uint64
}

// expandPure runs every transition of it's state that is not asleep and
// judges the states a monitor flags, touching nothing shared: workers run
// it in parallel. It stops after a confirmed violation (the merge stops
// there).
func (x *explorer) expandPure(it *item, sleep []tkey) []cand {
	w, err := x.materializePure(it)
	if err != nil {
		return []cand{{err: err}}
	}
	ms := w.Moves()
	if len(ms) == 0 || it.depth >= x.o.MaxDepth {
		m := w.Monitor().(*monitor)
		full := x.o.FullLeaves || m.diverged
		ever := m.ever
		v, err := x.judgePure(w, full)
		return []cand{{err: err, leaf: true, cut: len(ms) > 0, v: v, ever: ever}}
	}
	moves := append([]sim.Move(nil), ms...)
	// Each transition runs on a copy of the state, but the last one when no
	// move can meet a choice point (its only combination is the defaults):
	// that one runs on the state itself, which is not needed afterwards.
	cloning := w.CanClone()
	reuse := cloning && w.ChoiceFree()
	var out []cand
	var explored []tkey
	for i, m := range moves {
		var prefix []int
		for {
			var c *sim.World
			if reuse && i == len(moves)-1 {
				c = w
			} else if cloning {
				c = w.Clone()
			} else if c, err = x.newWorld(it.path, it.depth); err != nil {
				return append(out, cand{err: err})
			}
			vc := &vecChooser{prefix: prefix}
			c.SetChooser(vc)
			c.Do(i)
			k := keyOf(m, vc)
			switch {
			case contains(sleep, k):
				out = append(out, cand{asleep: true})
			case it.only != nil && !contains(it.only, k):
			default:
				cd := cand{c: c, k: k}
				if len(moves) > 1 {
					cd.cs = append(cd.cs, scenario.Choice{Label: "next", Value: i})
				}
				cd.cs = append(cd.cs, vc.taken...)
				mon := c.Monitor().(*monitor)
				if flags := mon.take(c); len(flags) > 0 || x.o.JudgeEveryState {
					if x.o.JudgeEveryState {
						flags = []string{"linearizable"}
					}
					jw := c.Clone()
					if jw == nil {
						if jw, err = x.newWorld(&path{parent: it.path, cs: cd.cs}, it.depth+1); err != nil {
							return append(out, cand{err: err})
						}
					}
					cd.judged, cd.ever = true, mon.ever
					if cd.v, err = x.judgePure(jw, needsChecker(flags) || mon.diverged); err != nil {
						return append(out, cand{err: err})
					}
					if len(cd.v.failed) > 0 {
						return append(out, cd)
					}
				}
				if !x.o.NoPOR {
					for _, z := range sleep {
						if z.independent(k) {
							cd.childSleep = append(cd.childSleep, z)
						}
					}
					for _, z := range explored {
						if z.independent(k) {
							cd.childSleep = append(cd.childSleep, z)
						}
					}
				}
				if !x.o.NoHash {
					cd.hash = c.StateHash()
				}
				if !cloning {
					cd.c = nil
				}
				out = append(out, cd)
				explored = append(explored, k)
			}
			var ok bool
			if prefix, ok = vc.next(); !ok {
				break
			}
		}
	}
	return out
}

// apply merges an expansion's transitions into the search, in order: the
// counts, the flagged states' verdicts (the first violation stops the
// search), the visited set and its sleep sets (search.go's header), and
// the states to explore further.
func (x *explorer) apply(it *item, cands []cand, push func(*item)) {
	x.rep.MaxDepth = max(x.rep.MaxDepth, it.depth)
	for i := range cands {
		cd := &cands[i]
		switch {
		case cd.err != nil:
			x.err, x.stop = cd.err, true
			return
		case cd.leaf:
			if cd.cut {
				x.rep.DepthCut++
			}
			x.rep.Paths++
			x.rep.Judged++
			x.record(cd.v, it.path, it.depth, cd.ever, true)
			return
		case cd.asleep:
			x.rep.PrunedSleep++
			continue
		}
		x.rep.States++
		p := &path{parent: it.path, cs: cd.cs}
		depth := it.depth + 1
		x.rep.MaxDepth = max(x.rep.MaxDepth, depth)
		if cd.judged {
			x.rep.Judged++
			if x.record(cd.v, p, depth, cd.ever, false) {
				return
			}
		}
		var e *entry
		if !x.o.NoHash {
			if old, seen := x.visited[cd.hash]; seen {
				if x.o.NoPOR || subset(old.sleep, cd.childSleep) {
					x.rep.PrunedSeen++
					continue
				}
				var redo, keep []tkey
				for _, z := range old.sleep {
					if contains(cd.childSleep, z) {
						keep = append(keep, z)
					} else {
						redo = append(redo, z)
					}
				}
				old.sleep = keep
				if !old.expanded {
					x.rep.PrunedSeen++
					continue // it will be expanded with the smaller sleep set
				}
				push(&item{w: cd.c, path: p, depth: depth, sleep: cd.childSleep, only: redo})
				continue
			}
			e = &entry{sleep: cd.childSleep}
			x.visited[cd.hash] = e
			if x.o.Owns != nil && !x.o.Owns(cd.hash) {
				x.rep.Foreign++
				continue
			}
		}
		x.rep.DistinctStates++
		push(&item{w: cd.c, path: p, depth: depth, sleep: cd.childSleep, e: e})
	}
}

// materializePure returns the item's world, re-running its path when
// states are not copied.
func (x *explorer) materializePure(it *item) (*sim.World, error) {
	if it.w != nil {
		return it.w, nil
	}
	return x.newWorld(it.path, it.depth)
}

// newWorld builds the explored world and runs p for steps moves.
func (x *explorer) newWorld(p *path, steps int) (*sim.World, error) {
	var o sim.Options
	if x.o.Sim != nil {
		o = *x.o.Sim
	}
	rc := &vecChooser{}
	for _, c := range p.flat() {
		rc.prefix = append(rc.prefix, c.Value)
	}
	o.Chooser, o.NoTrace, o.Monitor = rc, true, &monitor{blind: x.o.blindMonitor}
	w, err := sim.NewWorld(x.sc, &o)
	if err != nil {
		return nil, err
	}
	w.EnableHashing()
	for w.Steps() < steps && w.Step() {
	}
	if w.Err() != nil {
		return nil, w.Err()
	}
	w.Monitor().(*monitor).take(w)
	return w, nil
}

// vecChooser is the Picker of one transition's run: the prefix's values,
// then the defaults; it records what was asked, so next can count on.
type vecChooser struct {
	prefix []int
	taken  []scenario.Choice
	doms   []int
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

// exportVisited hands every visited state to Options.Visited, in
// increasing order of digest.
func (x *explorer) exportVisited() {
	fps := make([]uint64, 0, len(x.visited))
	for fp := range x.visited {
		fps = append(fps, fp)
	}
	slices.Sort(fps)
	for _, fp := range fps {
		x.o.Visited(fp, x.visited[fp].expanded)
	}
}
