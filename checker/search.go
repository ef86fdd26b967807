package checker

import (
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// The depth-first search for a linearization: the last resort in memory,
// when the sweeps (sweep.go) cannot decide a key within their beam, and the
// narrator of small violations (its longest path is the story the goldens
// tell). It holds a key's every op and its cache, so a stream does without
// it. It never recurses: its frames live on an explicit stack.
//
// It is a depth-first search for a linearization in the style of Wing & Gong
// and Lowe's just-in-time linearization, as porcupine does it, with one
// change that matters for real histories: an operation that never returned
// is not a node the search must place. Porcupine treats it as an ordinary
// operation with an infinite window and two outcomes, so its cache (keyed by
// the set of placed operations) doubles with every such operation, and a
// non-linearizable history with a dozen timeouts never finishes. Here the
// completed operations are the ones to place, and unknown ones are optional
// effects the search may apply between any two of them, at most once each.
// Three facts keep those choices few:
//
//   - Equal unknown ops (same kind, owner, ttl, fence, value, clock reading)
//     form a class, and only the class's earliest available member is ever
//     applied: its window opens first, so the state it leaves is the most
//     flexible (a smaller clock bound, an earlier possible expiry), and once
//     applied, its clock bound lies past every member applied before, which
//     makes them interchangeable. So the cache remembers how many of each
//     class were applied, not which — a holder retrying the same acquire
//     forty times costs forty counts, not 2^40 subsets.
//   - A class is "dead" once its fence can no longer match (fences only
//     grow): its count is then ignored in the cache key.
//   - Applying an op that changes nothing is never tried.
//
// And a fact the history gives for free: an unknown op applied before the
// remaining completed ops read the coordinator's clock no later than any of
// them, which bounds its effect (a renew's new expiry) instead of leaving it
// open-ended.
//
// The cache key holds the set of placed completed ops and the applied counts
// per class as 128-bit Zobrist hashes instead of bitsets, which keeps the
// memory per cached node constant; a false "already seen" would need a
// 128-bit collision.

type hash128 [2]uint64

func (h hash128) xor(o hash128) hash128 { return hash128{h[0] ^ o[0], h[1] ^ o[1]} }

type memoKey struct {
	placed, applied hash128
	state           timed.State
}

// entry is a call or return event in the doubly linked list of not yet
// placed completed ops, sorted by time, calls before returns at equal times.
type entry struct {
	op         int
	isReturn   bool
	time       int64
	match      *entry // the call's return entry
	prev, next *entry
}

type unknownOp struct {
	in    timed.Input
	op    int // index in KeyOps
	call  int64
	class int // equal ops share a class
	// deathFence: the op can no longer apply once the relevant fence (the
	// coordinator's, or the resource's highest for fenced-storage writes) is
	// above it. -1: never dies.
	deathFence int64
	resource   bool
}

// unknownClass is a set of equal unknown ops.
type unknownClass struct {
	size       int
	deathFence int64 // as unknownOp's
	resource   bool
	// zob[n] is the hash of "n members applied"; zob[0] is zero.
	zob []hash128
}

// applied records which unknown ops took effect on the current path: the
// members (to pick the next one) and the count per class (the cache key).
type applied struct {
	bits   []uint64
	counts []int32
	hash   hash128
}

func (a *applied) has(ui int) bool { return hasBit(a.bits, ui) }

// with returns a copy with unknown op ui of class c applied.
func (a *applied) with(ui, c int, ks *keySearch) *applied {
	b := &applied{bits: setBit(a.bits, ui, len(ks.unknown)), counts: make([]int32, len(ks.classes))}
	copy(b.counts, a.counts)
	z := ks.classes[c].zob
	b.hash = a.hash.xor(z[b.counts[c]]).xor(z[b.counts[c]+1])
	b.counts[c]++
	return b
}

type pathNode struct {
	op      int // index in KeyOps
	unknown bool
	// kept: on the deepest path, which the result reports, so not reused
	// when its frame is popped.
	kept   bool
	state  timed.State // after the op
	parent *pathNode
}

type keySearch struct {
	budget  *budget
	rules   timed.Rules
	u       int64
	inputs  []timed.Input
	calls   []int64 // per input: call time
	rets    []int64 // per input: return time (completed only)
	pred    []int32 // per input: its process predecessor at a tie (tiePredecessors)
	placed  []bool  // per input: placed on the current path
	zob     []hash128
	done    []int // completed op indices into inputs
	unknown []unknownOp
	classes []unknownClass
	head    *entry
	memo    map[memoKey]struct{}
	charged int64 // bytes charged to budget, all told
	// memoCharged is the part of charged that is for memo.
	memoCharged int64
	steps       int
	nodes       int
	// maxNodes > 0 bounds the nodes visited (a deterministic budget, for
	// searches whose result must not depend on the machine's speed).
	maxNodes int
	slab     []pathNode
	// spare holds the nodes of popped frames for reuse: the search keeps
	// the nodes of the path it is on and of the deepest path, not one per
	// step, or a search of many steps would hold them all.
	spare   []*pathNode
	aborted bool
	reason  string // why it aborted

	deepest      int
	deepestState timed.State
	deepestPath  *pathNode
	found        *pathNode
}

type searchResult struct {
	verdict Verdict
	// path is the linearization found (Holds) or the longest partial one
	// (Violated, Unknown), last op first.
	path     *pathNode
	state    timed.State // the state after path
	depth    int         // completed ops placed in path
	complete int         // completed ops in the key
	nodes    int
	reason   string // Unknown: why
}

// tiePredecessors returns, for each of a key's ops, the op of its own
// process that must precede it although neither real time says so: the
// previous completed op of the process (in file order) that returned at the
// very time this one was called. docs/specification.md §2: "a precedes b" when a
// returned before b was called, or a comes before b in one process's order
// — a process is sequential, so its next call follows its last return even
// when the clock reads the same. An op that returned earlier than the call
// is ordered by real time already, and one that never returned precedes
// nothing (its request may have been applied at any later time). -1: none.
// ops that are never placed (a failed read) are skipped over: precedence
// through them is transitive.
func tiePredecessors(h *model.History, ko *timed.KeyOps) []int32 {
	pred := make([]int32, len(ko.Index))
	last := map[string]int32{} // process -> its last placed, completed op
	for i, idx := range ko.Index {
		op := &h.Ops[idx]
		pred[i] = -1
		if j, ok := last[op.Process]; ok && h.Ops[ko.Index[j]].Return == op.Call {
			pred[i] = j
		}
		if op.Returned && mustPlace(ko.Inputs[i]) {
			last[op.Process] = int32(i)
		}
	}
	return pred
}

// dfsOptions tune one depth-first search.
type dfsOptions struct {
	maxNodes int // > 0: stop (Unknown) past this many nodes
}

// searchKey decides whether one key's operations are linearizable, by the
// exact depth-first search.
func searchKey(b *budget, h *model.History, ko *timed.KeyOps, o dfsOptions) searchResult {
	sem := h.Header.Semantics
	ks := &keySearch{
		budget:   b,
		rules:    timed.RulesOf(h.Header),
		u:        h.Header.ClockUncertainty,
		inputs:   ko.Inputs,
		calls:    make([]int64, len(ko.Inputs)),
		rets:     make([]int64, len(ko.Inputs)),
		pred:     tiePredecessors(h, ko),
		placed:   make([]bool, len(ko.Inputs)),
		zob:      make([]hash128, len(ko.Inputs)),
		memo:     map[memoKey]struct{}{},
		maxNodes: o.maxNodes,
	}
	defer func() { b.credit(ks.charged) }()
	// A fixed seed: the hashes only need to be independent of the history.
	rng := rand.New(rand.NewPCG(0x6c65617365, uint64(len(ko.Inputs))))
	for i, idx := range ko.Index {
		op := &h.Ops[idx]
		ks.calls[i], ks.rets[i] = op.Call, op.Return
		ks.zob[i] = hash128{rng.Uint64(), rng.Uint64()}
	}
	observed := observedValues(ko)
	lowRejected := lowestRejectedWrite(ko)
	classes := map[timed.Input]int{}
	for i := range ko.Inputs {
		in := ko.Inputs[i]
		switch {
		case mustPlace(in):
			ks.done = append(ks.done, i)
			if in.Unknown {
				ks.rets[i] = timed.Inf
			}
		case in.Kind == model.Read:
			// A read that failed or never answered observes nothing.
		case in.Kind == model.Write && !observed[in.Value] &&
			(sem == model.Seed || lowRejected[in.Value] == 0):
			// An unknown write whose value nobody read has no observable
			// effect under seed semantics (it changes only the data). Under
			// fenced storage it also raises the resource's highest fence, so
			// it is dropped only if no rejected write might be explained by it.
		default:
			key := in
			key.Lo = 0 // Hi stays: an op with a known clock reading is not interchangeable
			class, ok := classes[key]
			if !ok {
				class = len(classes)
				classes[key] = class
				ks.classes = append(ks.classes, unknownClass{deathFence: -1})
			}
			ks.classes[class].size++
			u := unknownOp{in: in, op: i, call: ks.calls[i], class: class, deathFence: -1}
			u.in.Unknown, u.in.OK = false, true
			switch {
			case in.Kind == model.Write && sem == model.FencedStorage:
				u.deathFence, u.resource = in.Fence, true
			case in.Kind == model.Write && in.Fence != 0, in.Fence != 0 && (in.Kind == model.Renew || in.Kind == model.Release):
				u.deathFence = in.Fence
			}
			ks.unknown = append(ks.unknown, u)
		}
	}
	for _, u := range ks.unknown {
		c := &ks.classes[u.class]
		c.deathFence, c.resource = u.deathFence, u.resource
	}
	for ci := range ks.classes {
		c := &ks.classes[ci]
		c.zob = make([]hash128, c.size+1)
		for n := 1; n <= c.size; n++ {
			c.zob[n] = hash128{rng.Uint64(), rng.Uint64()}
		}
	}
	// Earliest window first, so that the first op of a class the search
	// meets is the most flexible one.
	sort.SliceStable(ks.unknown, func(a, b int) bool { return ks.unknown[a].in.Lo < ks.unknown[b].in.Lo })
	ks.buildList()
	res := searchResult{complete: len(ks.done)}
	ok := ks.run()
	res.nodes = ks.nodes
	switch {
	case ok:
		res.verdict, res.path, res.depth = Holds, ks.found, len(ks.done)
	case ks.aborted:
		res.verdict, res.path, res.state, res.depth, res.reason = Unknown, ks.deepestPath, ks.deepestState, ks.deepest, ks.reason
	default:
		res.verdict, res.path, res.state, res.depth = Violated, ks.deepestPath, ks.deepestState, ks.deepest
	}
	return res
}

// mustPlace reports whether the search must place the op: a completed op
// with an answer that constrains the state, or an op that never returned
// but carries `at` — the coordinator did apply it, at that reading, so it
// took effect with whichever outcome the state gave (exact mode makes that
// outcome determined, so such ops cost no branching at all).
func mustPlace(in timed.Input) bool {
	if in.Kind == model.Read {
		return !in.Unknown && in.OK
	}
	return !in.Unknown || in.Hi < timed.Inf
}

func observedValues(ko *timed.KeyOps) map[timed.Value]bool {
	seen := map[timed.Value]bool{}
	for _, in := range ko.Inputs {
		if in.Kind == model.Read && in.OK && !in.Unknown && in.Value != timed.NoValue {
			seen[in.Value] = true
		}
	}
	return seen
}

// lowestRejectedWrite marks, per unknown write value, whether some completed
// write with a lower fence was rejected: under fenced storage that rejection
// may be the unknown write's only trace.
func lowestRejectedWrite(ko *timed.KeyOps) map[timed.Value]int {
	minRejected := int64(timed.Inf)
	for _, in := range ko.Inputs {
		if in.Kind == model.Write && !in.Unknown && !in.OK {
			minRejected = min(minRejected, in.Fence)
		}
	}
	out := map[timed.Value]int{}
	for _, in := range ko.Inputs {
		if in.Kind == model.Write && in.Unknown && in.Fence > minRejected {
			out[in.Value] = 1
		}
	}
	return out
}

func (ks *keySearch) buildList() {
	entries := make([]*entry, 0, 2*len(ks.done))
	for _, i := range ks.done {
		ret := &entry{op: i, isReturn: true, time: ks.rets[i]}
		call := &entry{op: i, time: ks.calls[i], match: ret}
		entries = append(entries, call, ret)
	}
	sort.SliceStable(entries, func(a, b int) bool {
		if entries[a].time != entries[b].time {
			return entries[a].time < entries[b].time
		}
		return !entries[a].isReturn && entries[b].isReturn
	})
	root := &entry{op: -1}
	prev := root
	for _, e := range entries {
		prev.next, e.prev = e, prev
		prev = e
	}
	ks.head = root
}

func (ks *keySearch) lift(call *entry) {
	ks.placed[call.op] = true
	call.prev.next = call.next
	if call.next != nil {
		call.next.prev = call.prev
	}
	ret := call.match
	ret.prev.next = ret.next
	if ret.next != nil {
		ret.next.prev = ret.prev
	}
}

func (ks *keySearch) unlift(call *entry) {
	ks.placed[call.op] = false
	ret := call.match
	ret.prev.next = ret
	if ret.next != nil {
		ret.next.prev = ret
	}
	call.prev.next = call
	if call.next != nil {
		call.next.prev = call
	}
}

// chainStride: see the cache comment in enter.
const chainStride = 8

// frame is one node of the depth-first search, kept on an explicit stack:
// the search never recurses, so a key of millions of ops cannot overflow
// the goroutine's stack.
type frame struct {
	s      timed.State
	placed hash128
	app    *applied
	depth  int
	path   *pathNode
	cands  []*entry // the completed ops that may come next, by clock window
	minRet int64
	bound  int64 // the clock bound of an unknown op applied here
	ci     int   // next candidate to expand
	buf    [4]timed.State
	next   []timed.State // successors of cands[ci-1], or of unknown[ui-1]
	si     int           // next successor to try
	lifted *entry
	ui     int   // next unknown op to try (after the candidates)
	tried  []int // classes tried at this node
}

// run is the depth-first search, iterative. It reports whether a
// linearization exists; ks.aborted says when the budget stopped it.
func (ks *keySearch) run() bool {
	var stack []*frame
	var free []*frame
	push := func(s timed.State, placed hash128, app *applied, depth int, path *pathNode) {
		var f *frame
		if n := len(free); n > 0 {
			f, free = free[n-1], free[:n-1]
			cands, tried := f.cands[:0], f.tried[:0]
			*f = frame{cands: cands, tried: tried}
			f.next = f.buf[:0]
		} else {
			f = &frame{}
		}
		f.s, f.placed, f.app, f.depth, f.path = s, placed, app, depth, path
		stack = append(stack, f)
	}
	pop := func() {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.lifted != nil {
			ks.unlift(f.lifted)
			f.lifted = nil
		}
		if f.path != nil && !f.path.kept {
			ks.spare = append(ks.spare, f.path)
		}
		free = append(free, f)
	}
	push(timed.InitialState(), hash128{}, &applied{counts: make([]int32, len(ks.classes))}, 0, nil)
	entered := false
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		if !entered {
			switch ks.enter(f) {
			case enterFound:
				return true
			case enterAbort:
				return false
			case enterDead:
				pop()
				entered = true
				continue
			}
		}
		entered = false
		if f.lifted != nil { // back from the child of a candidate
			ks.unlift(f.lifted)
			f.lifted = nil
		}
		// The next child: the successors of each candidate in turn, then
		// the unknown ops that may take effect here.
		if ks.nextCandidateChild(f) {
			c := f.cands[f.ci-1]
			ns := f.next[f.si-1]
			f.next[f.si-1] = timed.State{}
			ks.lift(c)
			f.lifted = c
			push(ns, f.placed.xor(ks.zob[c.op]), f.app, f.depth+1, ks.node(pathNode{op: c.op, state: ns, parent: f.path}))
			continue
		}
		if ui, ns, ok := ks.nextUnknownChild(f); ok {
			u := &ks.unknown[ui]
			push(ns, f.placed, f.app.with(ui, u.class, ks), f.depth, ks.node(pathNode{op: u.op, unknown: true, state: ns, parent: f.path}))
			continue
		}
		pop()
		entered = true // the parent resumes where it left off
	}
	return false
}

const (
	enterExpand = iota
	enterFound
	enterDead
	enterAbort
)

// enter visits a new node: the budget, the goal, the cache, and the
// candidates to expand.
func (ks *keySearch) enter(f *frame) int {
	if ks.aborted {
		return enterAbort
	}
	ks.steps++
	if ks.steps&1023 == 0 {
		if ks.budget.expired() {
			ks.aborted, ks.reason = true, ks.budget.reason("searching for a linearization")
			return enterAbort
		}
		want := int64(len(ks.memo)) * memoEntryBytes
		ok := ks.budget.charge(want - ks.memoCharged)
		ks.charged += want - ks.memoCharged
		ks.memoCharged = want
		if !ok {
			ks.aborted, ks.reason = true, ks.budget.memReason("searching for a linearization")
			return enterAbort
		}
	}
	if ks.maxNodes > 0 && ks.nodes >= ks.maxNodes {
		ks.aborted, ks.reason = true, "the search's node budget ran out"
		return enterAbort
	}
	if f.depth == len(ks.done) {
		ks.found = f.path
		return enterFound
	}
	s := f.s
	// The candidates: every op called before the earliest pending return
	// whose process predecessor (at a tie) is placed.
	f.cands = f.cands[:0]
	f.minRet = timed.Inf
	for e := ks.head.next; e != nil; e = e.next {
		if e.isReturn {
			f.minRet = e.time
			break
		}
		if p := ks.pred[e.op]; p >= 0 && !ks.placed[p] {
			continue
		}
		f.cands = append(f.cands, e)
	}
	// An op whose clock window has closed can never be placed: the
	// coordinator's clock does not run backwards. Without this, an op that
	// never returned (so no return forces it early) would only be found
	// stranded at the very end, after the search walked the rest.
	for e := ks.head.next; e != nil && !e.isReturn; e = e.next {
		if ks.inputs[e.op].Hi < s.NowLo {
			return enterDead
		}
	}
	// A node with one way forward need not always be remembered: coming back
	// to it costs no more than the chain up to the next remembered node. So
	// along such chains only every chainStride-th node is cached: a revisit
	// (common when the search backtracks over a violation) walks at most
	// that far before it meets the cache, and a long exact-mode history,
	// where most nodes are chain links, keeps a small cache.
	if len(f.cands) > 1 || len(ks.unknown) > 0 || f.depth%chainStride == 0 {
		key := memoKey{placed: f.placed, applied: ks.canonicalApplied(s, f.app), state: s}
		if _, seen := ks.memo[key]; seen {
			return enterDead
		}
		ks.memo[key] = struct{}{}
	}
	ks.nodes++
	if f.depth > ks.deepest || ks.deepestPath == nil && f.depth == 0 {
		ks.keepDeepest(f.path)
		ks.deepest, ks.deepestState, ks.deepestPath = f.depth, s, f.path
	}
	// Try them in the order of their clock windows: in exact mode the first
	// is the right one, and the others fail at once (the coordinator's clock
	// cannot go backwards).
	if len(f.cands) > 1 {
		sort.Slice(f.cands, func(a, b int) bool {
			return ks.inputs[f.cands[a].op].Lo < ks.inputs[f.cands[b].op].Lo
		})
	}
	f.bound = f.minRet
	if f.bound < timed.Inf {
		f.bound += ks.u
	}
	return enterExpand
}

// nextCandidateChild advances f to its next (candidate, successor) pair:
// f.cands[f.ci-1] and f.next[f.si-1]. It reports false when there is none.
func (ks *keySearch) nextCandidateChild(f *frame) bool {
	for {
		if f.si < len(f.next) {
			f.si++
			return true
		}
		if f.ci >= len(f.cands) {
			return false
		}
		in := &ks.inputs[f.cands[f.ci].op]
		f.ci++
		f.bound = min(f.bound, in.Hi)
		f.next = timed.StepAnyOutcome(ks.rules, f.s, in, f.buf[:0])
		f.si = 0
	}
}

// nextUnknownChild finds the next unknown op that may take effect at f and
// a state it leads to: called, not yet applied, after every completed op
// that returned before its call (and after its process predecessor), of
// each class only the earliest such member (see the top of this file), and
// changing something. Its successors are tried one per call: f.si counts
// them for the op at f.ui-1.
func (ks *keySearch) nextUnknownChild(f *frame) (int, timed.State, bool) {
	if f.ci < len(f.cands) {
		return 0, timed.State{}, false
	}
	for {
		if f.ui > 0 && f.si < len(f.next) {
			ns := f.next[f.si]
			f.si++
			if sameButTime(ns, f.s) {
				continue // changed nothing: not applying it is at least as good
			}
			return f.ui - 1, ns, true
		}
		if f.ui >= len(ks.unknown) {
			return 0, timed.State{}, false
		}
		ui := f.ui
		f.ui++
		f.next, f.si = f.buf[:0], 0
		u := &ks.unknown[ui]
		if u.call > f.minRet || f.app.has(ui) || ks.dead(f.s, u.deathFence, u.resource) {
			continue
		}
		if p := ks.pred[u.op]; p >= 0 && !ks.placed[p] {
			continue
		}
		if slices.Contains(f.tried, u.class) {
			continue
		}
		f.tried = append(f.tried, u.class)
		in := u.in
		in.Hi = min(in.Hi, f.bound)
		f.next = timed.StepApplied(ks.rules, f.s, &in, f.buf[:0])
	}
}

// node allocates path nodes in slabs: the search makes one per step and
// frees none until it ends.
func (ks *keySearch) node(n pathNode) *pathNode {
	if k := len(ks.spare); k > 0 {
		p := ks.spare[k-1]
		ks.spare = ks.spare[:k-1]
		*p = n
		return p
	}
	if len(ks.slab) == cap(ks.slab) {
		ks.slab = make([]pathNode, 0, 1024)
		ks.budget.charge(1024 * pathNodeBytes)
		ks.charged += 1024 * pathNodeBytes
	}
	ks.slab = append(ks.slab, n)
	return &ks.slab[len(ks.slab)-1]
}

// keepDeepest makes path the deepest path: its nodes are kept when their
// frames are popped, and the nodes of the old deepest path that are not on
// it, all popped already (the search has left that branch: the new path is
// deeper, so it does not run through the old one's end), are reused.
func (ks *keySearch) keepDeepest(path *pathNode) {
	fork := path
	for ; fork != nil && !fork.kept; fork = fork.parent {
		fork.kept = true
	}
	for q := ks.deepestPath; q != nil && q != fork; q = q.parent {
		q.kept = false
		ks.spare = append(ks.spare, q)
	}
}

// dead reports whether ops of that death fence can no longer apply.
func (ks *keySearch) dead(s timed.State, deathFence int64, resource bool) bool {
	if deathFence < 0 {
		return false
	}
	if resource {
		return s.Highest > deathFence
	}
	return s.Fence > deathFence
}

// canonicalApplied counts a dead class as wholly applied: how many of it
// took effect makes no difference to anything that can still happen.
func (ks *keySearch) canonicalApplied(s timed.State, app *applied) hash128 {
	h := app.hash
	for ci := range ks.classes {
		c := &ks.classes[ci]
		if n := app.counts[ci]; int(n) < c.size && ks.dead(s, c.deathFence, c.resource) {
			h = h.xor(c.zob[n]).xor(c.zob[c.size])
		}
	}
	return h
}

func sameButTime(a, b timed.State) bool {
	a.NowLo = b.NowLo
	return a == b
}

func hasBit(bits []uint64, i int) bool {
	return i/64 < len(bits) && bits[i/64]&(1<<(i%64)) != 0
}

func setBit(bits []uint64, i, n int) []uint64 {
	out := make([]uint64, (n+63)/64)
	copy(out, bits)
	out[i/64] |= 1 << (i % 64)
	return out
}
