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
// (internal/sim/state.go), so no violation reachable within the bounds is lost.
import (
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/internal/statehash"
	"github.com/leasecheck/leasecheck/model"
)

// tkey identifies a transition across paths: its move by what it does
// (sim.World.MoveKey) mixed with its non-default choice values
// (position:value), the holder it touches alone (-1: shared state), and
// whether it spends the network's deviation budget.
type tkey struct {
	id   uint64
	node int32
	dev  bool
}

func (k tkey) independent(o tkey) bool {
	if k.node < 0 || o.node < 0 || k.node == o.node {
		return false
	}
	// Two transitions that both spend the network's deviation budget do not
	// commute: the first may leave none for the second.
	return !k.dev || !o.dev
}

func keyOf(m sim.Move, moveKey uint64, vc *vecChooser) tkey {
	k := tkey{id: moveKey, node: m.Node}
	for i, c := range vc.taken {
		if c.Value != 0 {
			k.dev = true
			k.id = statehash.Finalize(k.id ^ (uint64(i+1)<<32 | uint64(c.Value)))
		}
	}
	return k
}

// item is a state waiting to be expanded: 40 bytes, with its path and
// visited entry the whole cost of a waiting state that re-runs.
type item struct {
	base *snap // the world to re-run from; nil: build it anew from the root
	path *path
	fp   uint64
	// sl, when set, is the sleep set (a state without a visited entry) and
	// the transitions a re-expansion explores.
	sl    *sleeps
	depth int32
	own   bool // base is this state's own world, which no other item uses
	entry bool // the visited entry of fp holds the sleep set
	// kids (set by claim) says where the children's worlds come from.
	kids kidWorlds
}

type sleeps struct {
	sleep []tkey
	only  []tkey // a re-expansion: just these transitions (non-nil)
}

func (it *item) sleep() []tkey {
	if it.sl == nil {
		return nil
	}
	return it.sl.sleep
}

func (it *item) only() []tkey {
	if it.sl == nil {
		return nil
	}
	return it.sl.only
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

// expandBuf is where a depth-first expansion lays its transitions, its
// children's own worlds and its children, reused by the next expansion at
// the same depth (dfs).
type expandBuf struct {
	out   []cand
	snaps []snap
	kids  []item
	// ops is the history of the Result judged last, whose room the next
	// judged Result takes: a verdict is drawn from its Result at once,
	// and nothing reads the Result afterwards.
	ops []model.Op
	// cs holds the expansion's transitions' choices, one slice of it a
	// transition (a slice a transition was a sixth of the objects a
	// depth-first state allocated); a path copies them (pathSlab).
	cs []scenario.Choice
}

// judgeOps is the room for the next judged Result's history (nil: none).
func (b *expandBuf) judgeOps() []model.Op {
	if b == nil {
		return nil
	}
	return b.ops
}

// judged takes back the room of a judged Result's history.
func (b *expandBuf) judged(r *sim.Result) {
	if b != nil {
		b.ops = r.History.Ops[:0]
	}
}

// rootItem records the root state.
func (x *explorer) rootItem(root *sim.World) item {
	it := item{}
	if x.rep.Cloning {
		x.root = &snap{w: root.Clone()}
		it.base, it.own = &snap{w: root}, true
	}
	if !x.o.NoHash {
		it.fp, it.entry = x.digest(root), true
		x.visited.add(it.fp, nil, 0)
	}
	return it
}

// claim marks it's state expanded and returns the sleep set it is expanded
// with: its visited entry's (which later visits may have shrunk), or its
// own. It also decides where its children's worlds will come from.
func (x *explorer) claim(it *item) []tkey {
	switch {
	case it.base == nil || x.reuse == 0:
		it.kids = kidsOwn
	case x.reuse >= rootOnly:
		it.kids = kidsRoot
	case it.own || int(it.depth)-it.base.depth >= x.reuse:
		it.kids = kidsShare
	default:
		it.kids = kidsInherit
	}
	if it.entry {
		s := x.visited.get(it.fp)
		s.setExpanded(true)
		return x.visited.sleep(s)
	}
	return it.sleep()
}

// cand is one transition of an expanded state as a worker found it, for
// the merge (apply) to count, judge and remember in order. A leaf cand is
// the state itself, judged at the end of its path.
type cand struct {
	err error
	// The flags side by side: a cand is made per transition, and a
	// padded flag would cost a word each.
	leaf, cut  bool // the state ends its path (cut: by the depth bound)
	asleep     bool // the transition is asleep: pruned
	own        bool
	judged     bool // a monitor flagged the state: v is the full judges'
	base       *snap
	k          tkey
	cs         []scenario.Choice
	childSleep []tkey
	hash       uint64
	v          verdict
	ever       uint64
}

// expandPure runs every transition of it's state that is not asleep and
// judges the states a monitor flags, touching nothing shared: workers run
// it in parallel. It stops after a confirmed violation (the merge stops
// there).
func (x *explorer) expandPure(it *item, sleep []tkey, buf *expandBuf) []cand {
	if x.pastViolationLevel(it) { // [shard hook] counterexample rule (shard.go)
		return nil
	}
	w, err := x.materializePure(it)
	if err != nil {
		return []cand{{err: err}}
	}
	ms := w.Moves()
	depth := int(it.depth)
	if len(ms) == 0 || depth >= x.o.MaxDepth {
		m := w.Monitor().(Monitor)
		full := x.o.FullLeaves || m.Diverged()
		ever := m.Ever()
		h := x.digest(w)                     // [shard hook] the violating state's digest orders counterexamples
		if err := digestErr(w); err != nil { // VerifyDigests found a stale digest
			return []cand{{err: err}}
		}
		r := w.ResultInto(buf.judgeOps())
		v, err := x.judgePure(r, full)
		buf.judged(r)
		leaf := cand{err: err, leaf: true, cut: len(ms) > 0, v: v, ever: ever, hash: h}
		if buf != nil {
			buf.out = append(buf.out[:0], leaf)
			return buf.out
		}
		return []cand{leaf}
	}
	only := it.only()
	var movesBuf [8]sim.Move // most states have a few moves: no allocation
	moves := append(movesBuf[:0], ms...)
	mkeys := make([]uint64, len(moves))
	for i, m := range moves {
		mkeys[i] = w.MoveKey(m)
	}
	// Each transition runs on a copy of the state, but the last one when no
	// move can meet a choice point (its only combination is the defaults)
	// and the children do not re-run from this state's world: that one runs
	// on the state itself, which is not needed afterwards.
	cloning := it.base != nil
	reuse := cloning && w.ChoiceFree() && it.kids != kidsShare
	var shared *snap
	switch it.kids {
	case kidsShare:
		shared = &snap{w: w, depth: depth}
	case kidsInherit:
		shared = it.base
	case kidsRoot:
		shared = x.root
	}
	var out []cand
	var cs []scenario.Choice
	if buf != nil {
		out, cs = buf.out[:0], buf.cs[:0]
		defer func() { buf.out, buf.cs = out[:0], cs[:0] }()
	} else {
		out = make([]cand, 0, len(moves))
		cs = make([]scenario.Choice, 0, 2*len(moves))
	}
	var explored []tkey
	// One chooser for every transition (each run takes what it needs of it
	// before the next: its key, its choices), taken from a pool (no world
	// keeps it past its move), and the children's own worlds in one block:
	// a state's expansion allocates per state, not per move.
	vc := choosers.Get().(*vecChooser)
	defer choosers.Put(vc)
	var snaps []snap
	switch {
	case buf != nil:
		snaps = buf.snaps[:0]
		defer func() { buf.snaps = snaps[:0] }()
	case it.kids == kidsOwn && cloning:
		snaps = make([]snap, 0, len(moves))
	}
	for i, m := range moves {
		var prefix []int
		for {
			var c *sim.World
			if reuse && i == len(moves)-1 {
				c = w
			} else if cloning {
				c = w.CloneInto(x.spare.take())
			} else if c, err = x.newWorld(it.path, depth); err != nil {
				return append(out, cand{err: err})
			}
			vc.reset(prefix)
			c.SetChooser(vc)
			c.Do(i)
			c.SetChooser(defaults{}) // vc's buffers serve the next move
			k := keyOf(m, mkeys[i], vc)
			switch {
			case contains(sleep, k):
				out = append(out, cand{asleep: true})
			case only != nil && !contains(only, k):
			default:
				cd := cand{k: k}
				start := len(cs)
				if len(moves) > 1 {
					cs = append(cs, scenario.Choice{Label: "next", Value: i})
				}
				cs = append(cs, vc.taken...)
				cd.cs = cs[start:len(cs):len(cs)]
				mon := c.Monitor().(Monitor)
				if flags := mon.Take(c); len(flags) > 0 || x.o.JudgeEveryState {
					cd.judged, cd.ever = true, mon.Ever()
					r := c.ResultSoFar(buf.judgeOps())
					cd.v, err = x.judgePure(r, x.o.JudgeEveryState || x.o.Judges.NeedsChecker(flags) || mon.Diverged())
					buf.judged(r)
					if err != nil {
						return append(out, cand{err: err})
					}
					if len(cd.v.Failed) > 0 && x.o.Strategy != BFS { // [shard hook] BFS finishes the level (shard.go)
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
				if !x.o.NoHash || len(cd.v.Failed) > 0 {
					cd.hash = x.digest(c)
					if err := digestErr(c); err != nil { // VerifyDigests found a stale digest
						return append(out, cand{err: err})
					}
				}
				switch {
				case !cloning:
				case it.kids == kidsOwn:
					// A pointer into snaps stays valid when append moves
					// the block: the old block lives on, never written again.
					snaps = append(snaps, snap{w: c, depth: depth + 1})
					cd.base, cd.own = &snaps[len(snaps)-1], true
				default:
					cd.base = shared
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
func (x *explorer) apply(it *item, cands []cand, push func(item)) {
	if x.pastViolationLevel(it) { // [shard hook] counterexample rule (shard.go)
		x.stop = true
		return
	}
	x.rep.MaxDepth = max(x.rep.MaxDepth, int(it.depth))
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
			x.record(cd.v, it.path, int(it.depth), cd.ever, true, cd.hash)
			return
		case cd.asleep:
			x.rep.PrunedSleep++
			continue
		}
		x.rep.States++
		p := x.paths.next(it.path, cd.cs)
		depth := int(it.depth) + 1
		x.rep.MaxDepth = max(x.rep.MaxDepth, depth)
		if cd.judged {
			x.rep.Judged++
			if x.record(cd.v, p, depth, cd.ever, false, cd.hash) {
				if x.stop {
					return
				}
				continue // [shard hook] BFS finishes the level (shard.go)
			}
		}
		kid := item{base: cd.base, own: cd.own, path: p, depth: int32(depth), fp: cd.hash}
		if !x.o.NoHash {
			if old := x.visited.get(cd.hash); old != nil {
				if x.visited.keepDepths && depth < int(old.depth) {
					// Depth-first, a state reached in fewer moves than
					// before: from here its paths run further before the
					// depth bound than they could from there, so it is
					// explored afresh, with this visit's sleep set; a
					// deeper visit still waiting is skipped (dfs).
					old.depth = uint32(depth)
					x.visited.setSleep(old, cd.childSleep)
					old.setExpanded(false)
					x.rep.Shallower++
					kid.entry = true
					push(kid)
					continue
				}
				if x.o.NoPOR || subset(x.visited.sleepOf(old), cd.childSleep) {
					x.rep.PrunedSeen++
					continue
				}
				var redo, keep []tkey
				for _, z := range x.visited.sleepOf(old) {
					if contains(cd.childSleep, z) {
						keep = append(keep, z)
					} else {
						redo = append(redo, z)
					}
				}
				x.visited.setSleep(old, keep)
				if !old.expanded() {
					x.rep.PrunedSeen++
					continue // it will be expanded with the smaller sleep set
				}
				if redo == nil {
					redo = []tkey{}
				}
				kid.sl = &sleeps{sleep: cd.childSleep, only: redo}
				push(kid)
				continue
			}
			e := x.visited.add(cd.hash, cd.childSleep, depth)
			x.rep.DistinctStates++
			// [shard hook] A new state another part owns (Options.Admit,
			// shard.go) is remembered here, as expanded there, never explored.
			if x.o.Admit != nil && !x.o.Admit(depth, cd.hash) {
				e.setExpanded(true)
				continue
			}
			kid.entry = true
			push(kid)
			continue
		} else {
			if len(cd.childSleep) > 0 {
				kid.sl = &sleeps{sleep: cd.childSleep}
			}
		}
		x.rep.DistinctStates++ // without hashing (never sharded: Admit needs digests)
		push(kid)
	}
}
