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
	"fmt"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// A waiting state does not keep a world of its own when memory is short: it
// keeps its path and a base, the world of an ancestor shared by its
// descendants, and is re-run from there when its turn comes (re-running a
// path is exact: the world is deterministic). How far a state may be from
// its base grows as the heap fills (reuseDistance), so the frontier costs a
// path and a share of a world per state instead of a world; it never
// steers the search, so the counts do not depend on it.

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
			k.id = machine.Finalize(k.id ^ (uint64(i+1)<<32 | uint64(c.Value)))
		}
	}
	return k
}

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

// snap is a world waiting states are re-run from; never changed once made
// (each use runs on a copy), but for an own world.
type snap struct {
	w     *sim.World
	depth int
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

type kidWorlds uint8

const (
	kidsOwn     kidWorlds = iota // each child keeps the copy its move ran on
	kidsShare                    // the children re-run from this state's world
	kidsInherit                  // the children re-run from this state's base
	kidsRoot                     // the children re-run from the root's world
)

// fifo is the breadth-first queue, in blocks of fifoBlock items: a level of
// tens of millions of waiting states grows by a block at a time, never by
// copying the whole queue into one twice its size (which held three times
// the queue at once at the moment of growth).
type fifo struct {
	blocks [][]item // blocks[0][head:] is the head; each block but the last is full
	head   int
	n      int
}

const fifoBlock = 1 << 14

func (q *fifo) len() int { return q.n }

func (q *fifo) push(it item) {
	if k := len(q.blocks); k == 0 || len(q.blocks[k-1]) == fifoBlock {
		q.blocks = append(q.blocks, make([]item, 0, fifoBlock))
	}
	k := len(q.blocks) - 1
	q.blocks[k] = append(q.blocks[k], it)
	q.n++
}

// take moves up to n items from the head into dst.
func (q *fifo) take(dst []item, n int) []item {
	dst = dst[:0]
	for len(dst) < n && q.n > 0 {
		b := q.blocks[0]
		k := min(n-len(dst), len(b)-q.head)
		dst = append(dst, b[q.head:q.head+k]...)
		clear(b[q.head : q.head+k])
		q.head += k
		q.n -= k
		if q.head == len(b) { // spent (a block not full is the last: the queue is empty)
			q.blocks[0] = nil
			q.blocks = q.blocks[1:]
			q.head = 0
		}
	}
	return dst
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

// bfsChunk is how many waiting states breadth-first search expands at
// once, in parallel on Options.Workers goroutines, before merging what they
// found into the visited set in queue order. It is a constant, not the
// number of workers: the states of a chunk are expanded with the sleep sets
// their visited entries had when the chunk began, so the counts and the
// counterexample depend on the chunk, never on the workers or GOMAXPROCS.
const bfsChunk = 64

func (x *explorer) bfs(root *sim.World) {
	x.rep.DistinctStates++
	x.reuse = max(x.o.reuse, 0)
	var queue fifo
	queue.push(x.rootItem(root))
	workers := max(x.o.Workers, 1)
	var chunk []item
	var sleeps [][]tkey
	var results [][]cand
	for queue.len() > 0 && !x.outOfBudget() {
		chunk = queue.take(chunk, bfsChunk)
		n := len(chunk)
		sleeps = sleeps[:0]
		for i := range chunk {
			sleeps = append(sleeps, x.claim(&chunk[i]))
		}
		results = append(results[:0], make([][]cand, n)...)
		if workers == 1 || n == 1 {
			for i := range chunk {
				results[i] = x.expandPure(&chunk[i], sleeps[i], nil)
			}
		} else {
			var next atomic.Int64
			var wg sync.WaitGroup
			for range min(workers, n) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
						results[i] = x.expandPure(&chunk[i], sleeps[i], nil)
					}
				}()
			}
			wg.Wait()
		}
		for i := range chunk {
			if i > 0 && x.outOfBudget() {
				break
			}
			x.apply(&chunk[i], results[i], queue.push)
			results[i] = nil
		}
		clear(chunk)
	}
}

// dfs is depth-first search. With a visited set and a depth bound it
// keeps each state's fewest moves so far: a path cut at the bound below a
// state first reached deep would leave the same state's longer futures
// unexplored when it is reached again in fewer moves, and the search would
// still say complete while missing states. A state reached in fewer moves is
// explored again from there (apply), as SPIN's depth-bounded search does.
func (x *explorer) dfs(root *sim.World) {
	x.rep.DistinctStates++
	if !x.o.noSpares {
		x.spare = &spares{}
	}
	x.paths = &pathSlab{}
	// The buffers of the expansions, one set a depth: expansions at one
	// depth come one after another, each done (its children explored)
	// before the next, so the next reuses the buffers its children's
	// worlds and items lay in.
	var bufs []*expandBuf
	var visit func(it *item)
	visit = func(it *item) {
		if x.outOfBudget() {
			return
		}
		if it.entry && int(x.visited.get(it.fp).depth) < int(it.depth) {
			x.spare.put(it.world())
			return // reached in fewer moves since, and explored from there (apply)
		}
		sleep := x.claim(it)
		it.kids = kidsOwn // depth-first keeps only a path's worth of worlds
		for len(bufs) <= int(it.depth) {
			bufs = append(bufs, &expandBuf{})
		}
		buf := bufs[it.depth]
		cands := x.expandPure(it, sleep, buf)
		kids := buf.kids[:0]
		x.apply(it, cands, func(c item) { kids = append(kids, c) })
		buf.kids = kids
		if x.stop {
			return // a counterexample's or an error's worlds are left alone
		}
		// The worlds this expansion is done with: this state's, unless its
		// last move ran on it, and the children's that were not kept.
		x.spare.put(it.world())
		for i := range cands {
			x.spare.put(cands[i].world())
		}
		for i := range kids {
			x.spare.keep(kids[i].world())
		}
		x.spare.flush()
		for i := range kids {
			visit(&kids[i])
			if x.stop {
				return
			}
		}
	}
	it := x.rootItem(root)
	visit(&it)
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
	err        error
	leaf, cut  bool // the state ends its path (cut: by the depth bound)
	asleep     bool // the transition is asleep: pruned
	base       *snap
	own        bool
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
		m := w.Monitor().(*monitor)
		full := x.o.FullLeaves || m.diverged
		ever := m.ever
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
				mon := c.Monitor().(*monitor)
				if flags := mon.take(c); len(flags) > 0 || x.o.JudgeEveryState {
					if x.o.JudgeEveryState {
						flags = []string{"linearizable"}
					}
					cd.judged, cd.ever = true, mon.ever
					r := c.ResultSoFar(buf.judgeOps())
					cd.v, err = x.judgePure(r, needsChecker(flags) || mon.diverged)
					buf.judged(r)
					if err != nil {
						return append(out, cand{err: err})
					}
					if len(cd.v.failed) > 0 && x.o.Strategy != BFS { // [shard hook] BFS finishes the level (shard.go)
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
				if !x.o.NoHash || len(cd.v.failed) > 0 {
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

// replay runs w to steps moves with the given choice values, taking the
// monitor's flags after each move as the search did (they were judged
// then).
func replay(w *sim.World, vals []int, steps int) error {
	w.SetChooser(&vecChooser{prefix: vals})
	for w.Steps() < steps && w.Step() {
		w.Monitor().(*monitor).take(w)
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
	o.Chooser, o.NoTrace, o.NoRunHash, o.NoFaultCounts, o.Monitor = rc, true, true, true, &monitor{blind: x.o.blindMonitor, verify: x.o.VerifyDigests}
	w, err := sim.NewWorld(x.sc, &o)
	if err != nil {
		return nil, nil, err
	}
	w.EnableHashing()
	if x.o.VerifyDigests {
		w.VerifyDigests()
	}
	w.Monitor().(*monitor).take(w)
	for w.Steps() < steps && w.Step() {
		w.Monitor().(*monitor).take(w)
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

func (defaults) Pick(int, string) int              { return 0 }
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
