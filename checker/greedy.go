package checker

import (
	"cmp"
	"slices"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// The greedy witness: the fast path for a correct history, tried on every
// key held in memory before the sweeps. One pass over the key's events in
// time order keeps one order of the ops placed so far and the few model
// states it can have reached — no frontier of configurations, no cache:
//
//   - each answered op is placed when it is due (its return), after the
//     pending ops whose clock window closes before its own opens (they
//     must come first), at the end of the order;
//   - where it does not fit there, it is tried after one other pending op,
//     then earlier in the order (before ops placed since it was called,
//     the placements after it replayed);
//   - an op that never answered is "not applied" until an op cannot be
//     placed without it: then the most recently called of those that may
//     take effect is applied just before, or earlier in the order.
//
// In a correct history almost every op fits at the end, so the pass costs
// a few model steps per op. Where it gets stuck (a wrong history, or a
// correct one whose explanation needs more than these local repairs) it
// gives up within its allowance and the sweeps and the search decide
// (keycheck.go). It is never its own judge: the order it proposes is
// replayed through the timed model by timed.VerifyLinearization, written
// apart from it, before a key is declared linearizable.

// greedyBack is how far back in the order a placement may be revised: the
// states before each of the last greedyBack placements are kept.
const greedyBack = 256

// greedyTries bounds the positions tried for one unanswered op.
const greedyTries = 4

// greedyStates bounds the states the pass follows for its one order;
// past it the latest are dropped (a witness stays a witness).
const greedyStates = 4

// greedyCandidates bounds the unanswered ops tried to unstick one op, the
// most recently called first.
const greedyCandidates = 16

// greedyAllowance is the model steps the pass may spend on a key of n ops.
func greedyAllowance(n int) int { return 32*n + 1<<12 }

type gstep struct {
	k       *kop
	applied bool
	hi      int64 // applied: the latest clock reading it may have taken effect at
}

type stateSet struct {
	n int
	s [greedyStates]timed.State
}

type greedyPass struct {
	rules   timed.Rules
	log     []gstep
	cps     []stateSet // cps[i%len(g.cps)]: the states before log[i] (fewer for a small key)
	cur     stateSet
	placed  []bool // by kop.pos
	pending []*kop // placed-role ops called and not yet placed (some may be placed: filtered lazily)
	pool    []*kop // unanswered ops called and not applied (likewise)
	work    int
	// pin: no state whose fence counter has reached it can explain the
	// successful acquires still to be placed, each of which presents a
	// fence above the counter (fenceFacts.pinAhead, and the pending ones).
	pin     int64
	pinning []*kop // the pending successful acquires that present a fence
	stuck   *kop   // the op the pass could not place (nil: it placed all)
	// scratch, reused
	forced  []*kop
	cands   []*kop
	classes []classKey
	replay  []stateSet
	his     []int64
	seq     []gstep
	rep     repairState
}

// greedyWitness tries to find a linearization of one key's events in one
// pass (ahead: pinsAhead of the events; nops: the key's ops). It returns
// the pass: its order when g.stuck is nil, else the op it could not place.
func greedyWitness(b *budget, rules timed.Rules, events []event, ahead []int64, nops int) *greedyPass {
	g := &greedyPass{rules: rules, placed: make([]bool, nops), log: make([]gstep, 0, nops), cps: make([]stateSet, min(greedyBack, nops+1))}
	g.cur.n, g.cur.s[0] = 1, timed.InitialState()
	allowance := greedyAllowance(nops)
	for i, e := range events {
		k := e.k
		if i&4095 == 4095 && b.expired() {
			g.stuck = k
			return g
		}
		if e.kind == evCall {
			switch k.role {
			case rolePlaced:
				g.pending = append(g.pending, k)
			case roleOptional:
				g.pool = append(g.pool, k)
			}
			continue
		}
		if k.role != rolePlaced || g.placed[k.pos] {
			continue
		}
		g.pin = timed.Inf
		if rules.Fences != model.NoFences {
			g.pin = ahead[i]
		}
		if !g.place(k) || g.work > allowance {
			g.stuck = k
			return g
		}
	}
	return g
}

// step returns the states set reaches by st.
func (g *greedyPass) step(set *stateSet, st *gstep) stateSet {
	var out stateSet
	var buf [2 * greedyStates]timed.State
	succ := buf[:0]
	in := st.k.in
	if st.applied {
		in.Unknown, in.OK, in.Hi = false, true, min(in.Hi, st.hi)
	}
	for _, s := range set.s[:set.n] {
		g.work++
		switch {
		case st.applied:
			succ = timed.StepApplied(g.rules, s, &in, succ)
		case in.Unknown:
			succ = timed.StepAnyOutcome(g.rules, s, &in, succ)
		default:
			succ = timed.Step(g.rules, s, &in, succ)
		}
	}
	for _, s := range succ {
		if !g.unpinned(&s, st.k) {
			continue
		}
		s = normal(s)
		kept := true
		for i := 0; i < out.n; i++ {
			if dominates(out.s[i], s) {
				kept = false
				break
			}
			if dominates(s, out.s[i]) {
				out.n--
				out.s[i] = out.s[out.n]
				i--
			}
		}
		if kept && out.n < greedyStates {
			out.s[out.n] = s
			out.n++
		}
	}
	return out
}

// unpinned reports whether s's fence counter is still below every fence a
// successful acquire placed later presents (but placing, which it may
// have just granted).
func (g *greedyPass) unpinned(s *timed.State, placing *kop) bool {
	if s.Fence >= g.pin {
		return false
	}
	for _, y := range g.pinning {
		if y != placing && !g.placed[y.pos] && s.Fence >= y.in.Fence {
			return false
		}
	}
	return true
}

// ready reports whether k's process predecessor (at a tie) is placed.
func (g *greedyPass) ready(k *kop) bool { return k.pred == nil || g.placed[k.pred.pos] }

// push places st at the end of the order, if it fits there.
func (g *greedyPass) push(st gstep) bool {
	if !g.ready(st.k) {
		return false
	}
	next := g.step(&g.cur, &st)
	if next.n == 0 {
		return false
	}
	g.cps[len(g.log)%len(g.cps)] = g.cur
	g.log = append(g.log, st)
	g.cur = next
	g.placed[st.k.pos] = true
	return true
}

// undo takes the order back to its first n steps, whose states were s.
func (g *greedyPass) undo(n int, s stateSet) {
	for _, st := range g.log[n:] {
		g.placed[st.k.pos] = false
	}
	g.log = g.log[:n]
	g.cur = s
}

// precedes reports whether y must come before x (docs/specification.md §2): y returned
// before x was called, or y is x's process predecessor at a tie.
func precedes(y, x *kop) bool {
	return y.op.Returned && y.op.Return < x.op.Call || x.pred == y
}

// insert places st at position j of the order and replays the steps after
// it, then (when then is set) places then at the end; it changes nothing
// unless all of that fits.
func (g *greedyPass) insert(j int, st gstep, then *gstep) bool {
	s := g.cps[j%len(g.cps)]
	g.replay = g.replay[:0]
	g.replay = append(g.replay, s)
	s = g.step(&s, &st)
	if s.n == 0 {
		return false
	}
	// Placed from here on (a grant it made no longer pins what follows).
	was := g.placed[st.k.pos]
	g.placed[st.k.pos] = true
	for i := j; i < len(g.log); i++ {
		g.replay = append(g.replay, s)
		s = g.step(&s, &g.log[i])
		if s.n == 0 {
			g.placed[st.k.pos] = was
			return false
		}
	}
	var last stateSet
	if then != nil {
		if !g.ready(then.k) && then.k.pred != st.k {
			g.placed[st.k.pos] = was
			return false
		}
		last = s
		s = g.step(&s, then)
		if s.n == 0 {
			g.placed[st.k.pos] = was
			return false
		}
	}
	g.log = slices.Insert(g.log, j, st)
	for i, set := range g.replay {
		g.cps[(j+i)%len(g.cps)] = set
	}
	g.placed[st.k.pos] = true
	if then != nil {
		g.cps[len(g.log)%len(g.cps)] = last
		g.log = append(g.log, *then)
		g.placed[then.k.pos] = true
	}
	g.cur = s
	return true
}

// insertBack tries st at each position from the end of the order back to
// the first op that must precede it (or as far back as states are kept),
// then (when set) then at the end. hi: an applied st's clock bound is also
// at most the window end of every op placed after it.
func (g *greedyPass) insertBack(st gstep, then *gstep, hi int64) bool {
	for j := len(g.log) - 1; j > len(g.log)-len(g.cps) && j >= 0; j-- {
		y := g.log[j].k
		if precedes(y, st.k) {
			return false
		}
		hi = min(hi, y.in.Hi)
		if st.applied {
			st.hi = hi
		}
		if g.insert(j, st, then) {
			return true
		}
	}
	return false
}

// compact drops what has been placed from the pending list. (The pool
// keeps its applied ops: candidates skips them, and looks only at the most
// recent poolWindow, so a pass never rescans it whole.)
func (g *greedyPass) compact() {
	g.pending = slices.DeleteFunc(g.pending, func(k *kop) bool { return g.placed[k.pos] })
}

// poolWindow is how many of the most recently called unanswered ops
// candidates looks through.
const poolWindow = 512

// place places x, which is due, and the pending ops that must come before
// it.
func (g *greedyPass) place(x *kop) bool {
	g.compact()
	g.forced = g.forced[:0]
	g.pinning = g.pinning[:0]
	for _, y := range g.pending {
		if g.pin < timed.Inf && pins(y) {
			g.pinning = append(g.pinning, y)
		}
	}
	for _, y := range g.pending {
		if y != x && !g.placed[y.pos] && y.in.Hi < x.in.Lo {
			g.forced = append(g.forced, y)
		}
	}
	if len(g.forced) > 1 {
		slices.SortFunc(g.forced, func(a, b *kop) int { return compareLo(a, b) })
	}
	for _, y := range g.forced {
		if !g.placed[y.pos] && !g.placeOne(y) {
			return false
		}
	}
	return g.placeOne(x)
}

func compareLo(a, b *kop) int {
	switch {
	case a.in.Lo < b.in.Lo:
		return -1
	case a.in.Lo > b.in.Lo:
		return 1
	}
	return a.pos - b.pos
}

// pendingHi is the earliest window end of the pending ops not placed: an
// op applied now reads the clock no later.
func (g *greedyPass) pendingHi() int64 {
	hi := timed.Inf
	for _, y := range g.pending {
		if !g.placed[y.pos] {
			hi = min(hi, y.in.Hi)
		}
	}
	return hi
}

// placeOne places x: at the end, after one other pending op, earlier in
// the order, or after an unanswered op taking effect.
func (g *greedyPass) placeOne(x *kop) bool {
	n0, s0 := len(g.log), g.cur
	xs := gstep{k: x}
	if g.push(xs) {
		return true
	}
	for _, y := range g.pending {
		if y == x || g.placed[y.pos] {
			continue
		}
		if g.push(gstep{k: y}) {
			if g.push(xs) {
				return true
			}
			g.undo(n0, s0)
		}
	}
	if g.ready(x) && g.insertBack(xs, nil, timed.Inf) {
		return true
	}
	// An unanswered op that took effect: as early as it can (an earlier
	// renew or grant may expire sooner), else just before x.
	hi := min(g.pendingHi(), x.in.Hi)
	for _, u := range g.candidates(x) {
		if g.insertEarliest(gstep{k: u, applied: true}, &xs, hi) {
			return true
		}
		if g.mayMatter(u) && g.push(gstep{k: u, applied: true, hi: hi}) {
			if g.push(xs) {
				return true
			}
			g.undo(n0, s0)
		}
	}
	for _, span := range [...]int{6, 16, 40} {
		if g.repair(x, span) {
			return true
		}
	}
	if g.moveApplied(&xs) {
		return true
	}
	// The last unanswered op applied may have been placed too late (a
	// grant whose expiry came too late for x): from just before it.
	// From before the ops placed ahead of it that read the clock later
	// than its window opens: they raised the bound its grant started from.
	for i := len(g.log) - 1; i >= 0 && i > len(g.log)-repairSpan; i-- {
		if g.log[i].applied {
			u := g.log[i].k
			j := i - 1
			for k := i - 1; k >= 0 && k > len(g.log)-repairSpan && !precedes(g.log[k].k, u); k-- {
				if g.log[k].k.in.Lo >= u.in.Lo {
					j = k - 1
				}
			}
			return len(g.log)-j > 40 && g.repair(x, len(g.log)-max(j, 0))
		}
	}
	return false
}

// repairSpan bounds the placements one repair may revise (the elements of
// its search are at most 64).
const repairSpan = 56

// moves are where moveApplied tries the last applied op, relative to
// where it is.
var moves = [...]int{1, 2, 3, 4, 6, 8, 12, 16, 24, -1, -2, -3, -4, -6, -8}

// moveApplied moves the last unanswered op applied (among the placements
// whose states are kept) a few places later or earlier, the placements
// after it replayed, then places then at the end: an op applied as early
// as it fitted may have had to read the clock later (its lease ran out
// too soon for an op placed since), or earlier.
func (g *greedyPass) moveApplied(then *gstep) bool {
	i := len(g.log) - 1
	for i >= 0 && i > len(g.log)-len(g.cps)+1 && !g.log[i].applied {
		i--
	}
	if i < 0 || i <= len(g.log)-len(g.cps)+1 {
		return false
	}
	u := g.log[i]
	for _, d := range moves {
		p := i + d // u's new position, among the others
		if p < 0 || p >= len(g.log) || p <= len(g.log)-len(g.cps)+1 {
			continue
		}
		if d < 0 {
			if slices.ContainsFunc(g.log[p:i], func(st gstep) bool { return precedes(st.k, u.k) }) {
				continue
			}
		}
		j := min(i, p)
		g.seq = g.seq[:0]
		for k := j; k < len(g.log); k++ {
			if k != i {
				g.seq = append(g.seq, g.log[k])
			}
		}
		g.seq = slices.Insert(g.seq, p-j, u)
		if g.tryOrder(j, g.seq, then) {
			return true
		}
	}
	return false
}

// tryOrder replaces the placements from j on by seq, each applied op's
// clock bound recomputed, then places then at the end; it changes nothing
// unless all of that fits.
func (g *greedyPass) tryOrder(j int, seq []gstep, then *gstep) bool {
	if !g.ready(then.k) {
		return false
	}
	hi := min(g.pendingHi(), then.k.in.Hi)
	for k := len(seq) - 1; k >= 0; k-- {
		if seq[k].applied {
			seq[k].hi = hi
		}
		hi = min(hi, seq[k].k.in.Hi)
	}
	s := g.cur
	if j < len(g.log) {
		s = g.cps[j%len(g.cps)]
	}
	g.replay = g.replay[:0]
	for k := range seq {
		g.replay = append(g.replay, s)
		if s = g.step(&s, &seq[k]); s.n == 0 {
			return false
		}
	}
	g.replay = append(g.replay, s)
	if s = g.step(&s, then); s.n == 0 {
		return false
	}
	g.log = append(g.log[:j], seq...)
	g.log = append(g.log, *then)
	for k, set := range g.replay {
		g.cps[(j+k)%len(g.cps)] = set
	}
	g.placed[then.k.pos] = true
	g.cur = s
	return true
}

// repairNodes bounds one repair's search.
const repairNodes = 512

// repair searches, depth first, for an order of the last span placements,
// x, the pending ops and the unanswered ops that may take effect among
// them, in which x and every op of those placements that had to be placed
// is placed: the local reorderings the single moves above miss (a release
// and a refusal swapped so that an unheard grant fits between them).
func (g *greedyPass) repair(x *kop, span int) bool {
	j := max(0, len(g.log)-span, len(g.log)-len(g.cps)+1)
	r := &g.rep
	r.list = r.list[:0]
	add := func(k *kop, applied, required bool) {
		if len(r.list) == 64 {
			return
		}
		for _, e := range r.list {
			if e.k == k {
				return
			}
		}
		r.list = append(r.list, repairElem{k, applied, required})
	}
	for _, st := range g.log[j:] {
		add(st.k, st.applied, !st.applied)
	}
	add(x, false, true)
	for _, y := range g.pending {
		if !g.placed[y.pos] {
			add(y, false, false)
		}
	}
	for _, u := range g.candidates(x) {
		add(u, true, false)
	}
	// By clock window: the search tries the earliest first, which keeps
	// the clock bound low for what follows.
	slices.SortStableFunc(r.list, func(a, b repairElem) int { return cmp.Compare(a.k.in.Lo, b.k.in.Lo) })
	var must uint64
	r.elems, r.applied = r.elems[:0], r.applied[:0]
	for i, e := range r.list {
		if e.required {
			must |= 1 << i
		}
		r.elems = append(r.elems, e.k)
		r.applied = append(r.applied, e.applied)
	}
	n := len(r.elems)
	r.before = r.before[:0]
	for a := 0; a < n; a++ {
		var m uint64
		for b := 0; b < n; b++ {
			if a != b && (precedes(r.elems[b], r.elems[a]) || r.elems[a].pred == r.elems[b]) {
				m |= 1 << b
			}
		}
		r.before = append(r.before, m)
	}
	// Those outside the span must be placed before it, which they are.
	for _, st := range g.log[j:] {
		g.placed[st.k.pos] = false
	}
	if r.seen == nil {
		r.seen = map[repairKey]struct{}{}
	}
	clear(r.seen)
	r.path = r.path[:0]
	r.nodes = 0
	start := g.cps[j%len(g.cps)]
	if j == len(g.log) {
		start = g.cur
	}
	end, ok := g.repairDFS(start, 0, must)
	if !ok {
		for _, st := range g.log[j:] {
			g.placed[st.k.pos] = true
		}
		return false
	}
	// Commit: the span replaced by the path found.
	g.log = g.log[:j]
	s := start
	for _, st := range r.path {
		g.cps[len(g.log)%len(g.cps)] = s
		s = g.step(&s, &st)
		g.log = append(g.log, st)
		g.placed[st.k.pos] = true
	}
	g.cur = end
	return true
}

type repairElem struct {
	k                 *kop
	applied, required bool
}

type repairKey struct {
	mask uint64
	set  stateSet
}

// repairState is a repair's scratch, reused.
type repairState struct {
	list    []repairElem
	elems   []*kop
	applied []bool   // an unanswered op (it may take effect, once)
	before  []uint64 // per element: the elements that must come first
	seen    map[repairKey]struct{}
	path    []gstep
	nodes   int
}

// repairDFS extends r.path from set, with the elements in mask placed, to
// one that places every element of must.
func (g *greedyPass) repairDFS(set stateSet, mask, must uint64) (stateSet, bool) {
	r := &g.rep
	if mask&must == must {
		return set, true
	}
	r.nodes++
	if r.nodes > repairNodes+8*len(r.elems) {
		return set, false
	}
	key := repairKey{mask, set}
	if _, ok := r.seen[key]; ok {
		return set, false
	}
	r.seen[key] = struct{}{}
	// The clock bound of an op applied here: every unplaced required or
	// pending element comes after it.
	hi := timed.Inf
	for i, e := range r.elems {
		if mask&(1<<i) == 0 && !r.applied[i] {
			hi = min(hi, e.in.Hi)
		}
	}
	// Completed ops first, by clock window; then unanswered ones.
	for pass := 0; pass < 2; pass++ {
		for i, e := range r.elems {
			bit := uint64(1) << i
			if mask&bit != 0 || r.applied[i] != (pass == 1) || r.before[i]&^mask != 0 || !g.ready(e) && !g.inMask(e.pred, mask) {
				continue
			}
			st := gstep{k: e, applied: r.applied[i], hi: hi}
			next := g.step(&set, &st)
			if next.n == 0 || st.applied && next.n == set.n && sameStates(&next, &set) {
				continue
			}
			r.path = append(r.path, st)
			g.placed[e.pos] = true // placed on this path: it no longer pins
			if end, ok := g.repairDFS(next, mask|bit, must); ok {
				return end, true
			}
			g.placed[e.pos] = false
			r.path = r.path[:len(r.path)-1]
			if r.nodes > repairNodes+8*len(r.elems) {
				return set, false
			}
		}
	}
	return set, false
}

// inMask reports whether k is one of the repair's elements placed in mask.
func (g *greedyPass) inMask(k *kop, mask uint64) bool {
	for i, e := range g.rep.elems {
		if e == k {
			return mask&(1<<i) != 0
		}
	}
	return false
}

// sameStates reports whether two sets hold the same states but for clock
// bounds: an unanswered op that changed nothing else is never worth
// applying.
func sameStates(a, b *stateSet) bool {
	for i := 0; i < a.n; i++ {
		if !sameButTime(a.s[i], b.s[i]) {
			return false
		}
	}
	return true
}

// insertEarliest tries st at the earliest position the order allows (after
// every op that must precede it, within the states kept), then later ones,
// a few in all, each followed by then at the end.
func (g *greedyPass) insertEarliest(st gstep, then *gstep, hi int64) bool {
	// The earliest position, and the clock bound of st at each.
	g.his = g.his[:0]
	j := len(g.log)
	for j > 0 && j > len(g.log)-len(g.cps)+1 {
		y := g.log[j-1].k
		if precedes(y, st.k) {
			break
		}
		j--
		hi = min(hi, y.in.Hi)
		g.his = append(g.his, hi)
	}
	// g.his[i] is the bound at position len(g.log)-1-i. A position where st
	// cannot take effect at all costs one step and is not counted: the
	// first where it can (just after a release, say) is the one that
	// matters.
	tries := 0
	for p := j; p < len(g.log) && tries < greedyTries; p++ {
		st.hi = g.his[len(g.log)-1-p]
		s := g.cps[p%len(g.cps)]
		if g.step(&s, &st).n == 0 {
			continue
		}
		tries++
		if g.insert(p, st, then) {
			return true
		}
	}
	return false
}

// candidates are the unanswered ops that may take effect before x, most
// recently called first, one of each class (alike but for their call),
// at most greedyCandidates.
func (g *greedyPass) candidates(x *kop) []*kop {
	g.cands, g.classes = g.cands[:0], g.classes[:0]
	for i := len(g.pool) - 1; i >= 0 && i >= len(g.pool)-poolWindow && len(g.cands) < greedyCandidates; i-- {
		u := g.pool[i]
		if g.placed[u.pos] || !g.ready(u) || precedes(x, u) {
			continue
		}
		ck := classKey{kind: u.in.Kind, owner: u.in.Owner, value: u.in.Value, ttl: u.in.TTL, fence: u.in.Fence}
		if slices.Contains(g.classes, ck) {
			continue
		}
		g.classes = append(g.classes, ck)
		g.cands = append(g.cands, u)
	}
	return g.cands
}

// mayMatter reports whether u can take effect in some current state (at
// the end of the order): a
// renew, a release and (under seed semantics) a write succeed only for the
// holder, under a fence still current.
func (g *greedyPass) mayMatter(u *kop) bool {
	fenced := g.rules.Semantics == model.FencedStorage && u.in.Kind == model.Write
	for _, s := range g.cur.s[:g.cur.n] {
		switch {
		case u.in.Kind == model.Acquire:
			return true
		case fenced:
			if u.in.Fence >= s.Highest {
				return true
			}
		case s.Holder == u.in.Owner && (u.in.Fence == 0 || u.in.Fence >= s.Fence):
			return true
		}
	}
	return false
}
