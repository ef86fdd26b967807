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
	"strconv"
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

func (x *explorer) bfs(root *sim.World) {
	x.rep.DistinctStates++
	queue := []*item{{w: root, e: x.remember(root, nil)}}
	for len(queue) > 0 && !x.outOfBudget() {
		it := queue[0]
		queue[0] = nil
		queue = queue[1:]
		x.expand(it, func(c *item) { queue = append(queue, c) })
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
		x.expand(it, func(c *item) { kids = append(kids, c) })
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

// expand runs every transition of it's state that is not asleep, judges the
// states reached, and hands on those not seen before.
func (x *explorer) expand(it *item, push func(*item)) {
	w := x.materialize(it)
	if w == nil {
		return
	}
	sleep := it.sleep
	if it.e != nil {
		sleep = it.e.sleep
		it.e.expanded = true
	}
	x.rep.MaxDepth = max(x.rep.MaxDepth, it.depth)
	ms := w.Moves()
	if len(ms) == 0 || it.depth >= x.o.MaxDepth {
		if len(ms) > 0 {
			x.rep.DepthCut++
		}
		x.rep.Paths++
		x.judgeLeaf(w, it.path, it.depth)
		return
	}
	moves := append([]sim.Move(nil), ms...)
	// Each transition runs on a copy of the state, but the last one when no
	// move can meet a choice point (its only combination is the defaults):
	// that one runs on the state itself, which is not needed afterwards.
	reuse := x.rep.Cloning && w.ChoiceFree()
	var explored []tkey
	for i, m := range moves {
		var prefix []int
		for {
			var c *sim.World
			if reuse && i == len(moves)-1 {
				c = w
			} else {
				c = x.child(w, it)
			}
			vc := &vecChooser{prefix: prefix}
			c.SetChooser(vc)
			c.Do(i)
			k := keyOf(m, vc)
			if contains(sleep, k) || it.only != nil && !contains(it.only, k) {
				if contains(sleep, k) {
					x.rep.PrunedSleep++
				}
			} else {
				x.successor(it, c, i, len(moves), vc, k, sleep, explored, push)
				explored = append(explored, k)
				if x.stop {
					return
				}
			}
			var ok bool
			if prefix, ok = vc.next(); !ok {
				break
			}
		}
	}
}

func (x *explorer) successor(it *item, c *sim.World, i, n int, vc *vecChooser, k tkey, sleep, explored []tkey, push func(*item)) {
	x.rep.States++
	var cs []scenario.Choice
	if n > 1 {
		cs = append(cs, scenario.Choice{Label: "next", Value: i})
	}
	cs = append(cs, vc.taken...)
	path := &path{parent: it.path, cs: cs}
	depth := it.depth + 1
	x.rep.MaxDepth = max(x.rep.MaxDepth, depth)
	if flags := c.Monitor().(*monitor).take(c); len(flags) > 0 || x.o.JudgeEveryState {
		if x.o.JudgeEveryState {
			flags = []string{"linearizable"}
		}
		if x.judgeFlagged(c, flags, path, depth) {
			return
		}
	}
	var childSleep []tkey
	if !x.o.NoPOR {
		for _, z := range sleep {
			if z.independent(k) {
				childSleep = append(childSleep, z)
			}
		}
		for _, z := range explored {
			if z.independent(k) {
				childSleep = append(childSleep, z)
			}
		}
	}
	var e *entry
	if !x.o.NoHash {
		h := c.StateHash()
		if old, seen := x.visited[h]; seen {
			if x.o.NoPOR || subset(old.sleep, childSleep) {
				x.rep.PrunedSeen++
				return
			}
			var redo, keep []tkey
			for _, z := range old.sleep {
				if contains(childSleep, z) {
					keep = append(keep, z)
				} else {
					redo = append(redo, z)
				}
			}
			old.sleep = keep
			if !old.expanded {
				x.rep.PrunedSeen++
				return // it will be expanded with the smaller sleep set
			}
			push(&item{w: x.keep(c), path: path, depth: depth, sleep: childSleep, only: redo})
			return
		}
		e = &entry{sleep: childSleep}
		x.visited[h] = e
	}
	x.rep.DistinctStates++
	push(&item{w: x.keep(c), path: path, depth: depth, sleep: childSleep, e: e})
}

// keep returns the world to store with a waiting item: the state itself, or
// nil when states cannot be copied (the item is re-run from the root).
func (x *explorer) keep(c *sim.World) *sim.World {
	if x.rep.Cloning {
		return c
	}
	return nil
}

// child returns a copy of w to run one transition on.
func (x *explorer) child(w *sim.World, it *item) *sim.World {
	if x.rep.Cloning {
		return w.Clone()
	}
	c, err := x.newWorld(it.path, it.depth)
	if err != nil {
		x.err, x.stop = err, true
		return w
	}
	return c
}

// materialize returns the item's world, re-running its path when states
// are not copied.
func (x *explorer) materialize(it *item) *sim.World {
	if it.w != nil {
		return it.w
	}
	w, err := x.newWorld(it.path, it.depth)
	if err != nil {
		x.err, x.stop = err, true
		return nil
	}
	return w
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
