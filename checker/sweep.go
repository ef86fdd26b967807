package checker

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// The frontier sweep: linearizability decided in one pass over a key's
// events in time order, keeping only the set of configurations the
// operations so far can have reached — never the history.
//
// A configuration is a model state, the set of pending ops (called, not yet
// due) already placed, and — in the exact sweep — how many of each class of
// unknown ops have taken effect. At an op's call it becomes pending; at its
// return (its due time) every configuration must have placed it: those that
// have not place pending ops, in every order, until it is, and those that
// cannot die (Lowe's just-in-time linearization as a breadth-first sweep, as
// Knossos's linear checker does it). Unknown ops take effect only just
// before a completed op is placed, with a clock reading no later than any
// pending op's window allows (the ops placed after them read the clock no
// earlier). Time is linear in the number of ops when the concurrency and the
// frontier are bounded; memory is the frontier and the pending window.
//
// Two sweeps run over the same events:
//
//   - The exact sweep applies each unknown op at most once. Its frontier is
//     capped (a beam): a configuration that survives to the end is a real
//     linearization whatever was dropped, so it proves Holds; an empty
//     frontier proves Violated only if nothing was ever dropped.
//
//   - The relaxed sweep refutes. In its model an unknown op may take effect
//     any number of times, at any point after its call (Rules.Relaxed: an
//     unheard grant leaves only a lower bound on the fence). Every real
//     behaviour is a relaxed one — an op that took effect once took effect
//     some number of times — so a history the relaxed model cannot explain
//     is not linearizable. Relaxed configurations need no record of which
//     unknown ops took effect, and of ops alike but for their call time only
//     the earliest matters (its window is the widest, and applying it again
//     is allowed), so the unknown ops that count are few and the frontier
//     stays small: polynomial, where subsets of unknown ops are not. It is
//     never capped: dropping a configuration would make a refutation a
//     guess; past the memory budget the verdict is Unknown.
//
// Both exploit what the history gives: a renew or write by O can only take
// effect while O holds the lease (the model refuses it otherwise); an
// unknown op whose fence can no longer match is dead (fences only grow);
// a configuration in which a pending op's clock window has closed is dead
// (the coordinator's clock never runs backwards); and states that are worse
// in every respect than another of the same configuration are dropped
// (dominates: a smaller clock bound, an earlier possible expiry and a later
// latest one allow everything the other allows).
//
// When the clock uncertainty is many TTLs wide, almost every expiry is
// ambiguous and unheard grants can be assumed at almost any point, so
// configurations multiply by how many grants each assumed and which retries
// supplied them. Two cuts, exact: fence counters past every fence still to
// be presented are one (fenceFacts.maxFence), and a counter that has passed
// a fence a successful acquire has yet to be granted is dead
// (fenceFacts.pinAhead). And one merge in the capped exact sweep, a drop
// like the beam's: configurations alike but for counts of classes with
// plenty of retries left to take effect keep the one that applied fewer
// (sweep.alike).

const maxPending = 128 // pending slots: completed ops of one key in flight at once

type slotSet [2]uint64

func (s slotSet) has(i int) bool      { return s[i>>6]&(1<<(i&63)) != 0 }
func (s slotSet) with(i int) slotSet  { s[i>>6] |= 1 << (i & 63); return s }
func (s slotSet) minus(i int) slotSet { s[i>>6] &^= 1 << (i & 63); return s }
func (s slotSet) count() int          { return bits.OnesCount64(s[0]) + bits.OnesCount64(s[1]) }

// link is one step of a recorded linearization, last step first.
type link struct {
	k       *kop
	applied bool // an unknown op that took effect here
	parent  *link
}

type configKey struct {
	s      timed.State
	placed slotSet
	app    int32 // exact: the interned applied counts; relaxed: 0
}

type config struct {
	configKey
	last, grant *kop  // the last completed op, and the last acquire, placed
	path        *link // the linearization so far, when recording
}

// liveClass is a class of unknown ops alike but for their call time: same
// kind, owner, ttl, fence and value.
type liveClass struct {
	id         int32
	key        classKey
	settled    int    // members no configuration has applied start here
	touched    bool   // in sweep.touched
	members    []*kop // called, in call order
	deathFence int64  // -1: never dies; -2: its window has ended (observed)
	resource   bool   // its death is the resource's highest fence's doing
}

type classKey struct {
	kind  model.Kind
	owner int32
	value timed.Value
	ttl   int64
	fence int64
}

// sweepStop says why a sweep stopped early.
type sweepStop uint8

const (
	stopNone sweepStop = iota
	stopTime
	stopMemory
	stopWindow // more ops in flight at once than slots
	stopGuess  // past workCap, in a stream pass that has no survey's facts
	stopWork   // past workCap, in memory: the other searches take over
)

type sweep struct {
	relaxed bool
	rules   timed.Rules
	u       int64
	b       *budget
	record  bool // keep the linearization (in memory)
	// cap bounds the exact sweep's frontier and each event's exploration
	// (0: none). Past it the lowest-priority configurations are dropped.
	cap     int
	dropped bool
	stopped sweepStop
	work    int64 // configurations explored, over every event so far
	workCap int64 // past it, stop (workStop); 0: none
	// workStop is why a sweep past workCap stopped: stopGuess in a stream
	// pass without a survey, stopWork in memory.
	workStop sweepStop
	cmps     int64 // the closure's dominance comparisons not yet counted in work

	frontier []config
	w        *window
	// Reused from event to event.
	spare    []config
	next     frontierSet
	visited  keySet
	stack    []config
	unplaced []*kop
	cbuf     []appliedState // closure's, reused
	links    []link         // a slab for recorded linearizations

	classes map[classKey]*liveClass
	live    []*liveClass // in order of creation
	touched []*liveClass // classes with members called since the last due
	byID    map[int32]*liveClass
	nextID  int32
	app     *appTable

	// At death, what the explanation needs.
	dead  bool
	stuck *sweepStuck

	// unique reports whether one write alone writes a value (keyFacts);
	// nil: not known.
	unique func(string) bool

	// What the key's future says about fences (fenceFacts): past maxFence
	// every fence counter behaves alike, and one at or above pinAhead can
	// never explain the successful acquire that will present it.
	fences fenceFacts

	steps   int
	charged int64
	crowded bool // the frontier is past crowdedAt (sweep.alike)
}

// crowdedAt is the exact sweep's frontier size past which configurations
// that differ only in their applied counts are merged (sweep.alike).
const crowdedAt = 64

// fenceFacts is what the sweep knows of the fences a key's ops present,
// beyond the ops it has seen called. Both bounds cut only what no real
// behaviour can reach, so the sweep stays sound and complete; timed.Inf
// means "not known" (a stream without a first pass), which cuts nothing.
type fenceFacts struct {
	// maxFence is the largest fence any op of the key presents (0: none).
	// Nothing compares a fence counter with anything above it: a
	// successful acquire presenting f needs the counter below f, a renew,
	// release or write presenting f matches it or not, fenced storage
	// grants f iff f <= counter, and a class of unknown ops dies once the
	// counter passes its fence. So every counter above maxFence is the same
	// to every op still to come, and the sweep keeps them as maxFence+1 —
	// where a history whose clock is uncertain for many TTLs would
	// otherwise tell configurations apart by how many unheard grants they
	// assumed, one per possible expiry.
	maxFence int64
	// pinAhead is the lowest fence presented by a successful acquire not
	// yet called (kept current by the caller, event by event). Counters
	// only grow, so a configuration whose counter is already at or above
	// it can never place that acquire: it is dead now, not only when the
	// acquire comes. (Pending acquires are checked per configuration.)
	pinAhead int64
}

// noFenceFacts knows nothing.
var noFenceFacts = fenceFacts{maxFence: timed.Inf, pinAhead: timed.Inf}

// pins reports whether a placed op, once it succeeds, presents a fence the
// coordinator's counter must still be below: a successful acquire's.
func pins(k *kop) bool {
	return k.in.Kind == model.Acquire && k.in.OK && !k.in.Unknown && k.in.Fence > 0
}

// canon returns s as the sweep keeps it (normal, the fence counter clamped
// past maxFence), or false when its counter has passed a fence still to be
// granted (fenceFacts).
func (sw *sweep) canon(s timed.State) (timed.State, bool) {
	if sw.rules.Fences != model.NoFences {
		if s.Fence >= sw.fences.pinAhead {
			return s, false
		}
		if m := sw.fences.maxFence; m < timed.Inf && s.Fence > m+1 {
			s.Fence = m + 1
		}
	}
	return normal(s), true
}

// sweepStuck is the configuration that got furthest before the frontier
// died, and the op it could not place.
type sweepStuck struct {
	c      config
	placed int // completed ops placed
	due    *kop
	// pending: the ops that could have come next there.
	pending []*kop
}

// window is the pending ops of a key: the completed ops called and not yet
// due, each in a slot that configurations' placed sets refer to. The sweeps
// of a key share it.
type window struct {
	slots    []*kop // grown as needed, up to maxPending
	freeSlot []int
	pending  slotSet // slots in use
	retired  int     // completed ops retired (placed in every configuration)
}

func newWindow() *window { return &window{} }

// open gives k a slot; false when all are taken. The lowest free slot is
// reused first, so a key with little concurrency keeps few.
func (w *window) open(k *kop) bool {
	switch {
	case len(w.freeSlot) > 0:
		k.slot = w.freeSlot[len(w.freeSlot)-1]
		w.freeSlot = w.freeSlot[:len(w.freeSlot)-1]
	case len(w.slots) < maxPending:
		k.slot = len(w.slots)
		w.slots = append(w.slots, nil)
	default:
		return false
	}
	w.slots[k.slot] = k
	w.pending = w.pending.with(k.slot)
	return true
}

// close retires k: every sweep has placed it.
func (w *window) close(k *kop) {
	if k.slot < 0 {
		return
	}
	w.pending = w.pending.minus(k.slot)
	w.slots[k.slot] = nil
	w.freeSlot = append(w.freeSlot, k.slot)
	k.slot, k.retired = -1, true
	// Placed everywhere, its own predecessor no longer matters: let it go,
	// or a process's back-to-back ops would hold one another for ever.
	k.pred = nil
	w.retired++
}

func newSweep(rules timed.Rules, u int64, b *budget, w *window, relaxed, record bool, cap int) *sweep {
	if relaxed {
		rules.Relaxed = true
	}
	sw := &sweep{relaxed: relaxed, rules: rules, u: u, b: b, w: w, record: record, cap: cap,
		classes: map[classKey]*liveClass{}, byID: map[int32]*liveClass{}, app: newAppTable(), fences: noFenceFacts, workStop: stopGuess}
	sw.frontier = []config{{configKey: configKey{s: timed.InitialState()}}}
	return sw
}

// fork returns a relaxed sweep that starts where this exact one is: the same
// configurations, none of which has applied an unknown op yet. It is a sound
// start only while no configuration was dropped and no unknown op was live.
func (sw *sweep) fork() *sweep {
	r := newSweep(sw.rules, sw.u, sw.b, sw.w, true, false, 0)
	r.fences = sw.fences
	r.frontier = make([]config, len(sw.frontier))
	for i, c := range sw.frontier {
		c.app, c.path = 0, nil
		r.frontier[i] = c
	}
	return r
}

func (sw *sweep) over() bool { return sw.dead || sw.stopped != stopNone }

// charge counts n bytes against the budget; false stops the sweep.
func (sw *sweep) charge(n int64) bool {
	sw.charged += n
	if !sw.b.charge(n) {
		sw.stopped = stopMemory
		return false
	}
	return true
}

func (sw *sweep) release() {
	sw.b.credit(sw.charged)
	sw.charged = 0
}

// call handles an op's call.
func (sw *sweep) call(k *kop) {
	if sw.over() {
		return
	}
	switch k.role {
	case rolePlaced:
		if k.slot < 0 {
			sw.stopped = stopWindow // the window is full
		}
	case roleOptional:
		ck := classKey{kind: k.in.Kind, owner: k.in.Owner, value: k.in.Value, ttl: k.in.TTL, fence: k.in.Fence}
		c := sw.classes[ck]
		if c == nil {
			c = &liveClass{id: sw.nextID, key: ck, deathFence: -1}
			sw.nextID++
			sw.byID[c.id] = c
			switch {
			case k.in.Kind == model.Write && sw.rules.Semantics == model.FencedStorage:
				c.deathFence, c.resource = k.in.Fence, true
			case k.in.Fence != 0 && (k.in.Kind == model.Write || k.in.Kind == model.Renew || k.in.Kind == model.Release):
				c.deathFence = k.in.Fence
			}
			sw.classes[ck] = c
			sw.live = append(sw.live, c)
		}
		// Members called since the last due event have been applied by no
		// configuration, so they may still be ordered: by clock window, and
		// at equal windows the one free of a pending process predecessor
		// first (it can take effect everywhere the other can, and sooner).
		i := len(c.members)
		for i > c.settled && (c.members[i-1].in.Lo > k.in.Lo || c.members[i-1].in.Lo == k.in.Lo && blocked(c.members[i-1]) && !blocked(k)) {
			i--
		}
		if sw.relaxed && i > 0 && !blocked(c.members[i-1]) {
			return // an earlier member takes effect on its own: this one adds nothing
		}
		c.members = slices.Insert(c.members, i, k)
		if sw.relaxed {
			// Past an unblocked member, the later ones add nothing.
			for j := i; j < len(c.members); j++ {
				if !blocked(c.members[j]) {
					c.members = c.members[:j+1]
					break
				}
			}
		}
		if !c.touched {
			c.touched = true
			sw.touched = append(sw.touched, c)
		}
		sw.charge(16)
	}
}

// isDead reports whether ops of that class can no longer take effect in s.
func (c *liveClass) isDead(s *timed.State) bool {
	if c.deathFence == -2 {
		return true // its window ended (sweep.observed)
	}
	if c.deathFence < 0 {
		return false
	}
	if c.resource {
		return s.Highest > c.deathFence
	}
	return s.Fence > c.deathFence
}

// placedIn reports whether k is placed in a configuration with placed set p
// (retired ops are placed in every one).
func placedIn(k *kop, p slotSet) bool {
	return k.retired || k.slot >= 0 && p.has(k.slot)
}

// blocked reports whether an unknown op still waits for its process
// predecessor (at a tie) to be placed everywhere.
func blocked(k *kop) bool { return k.pred != nil && !k.pred.retired }

// due handles the moment op k must have been placed. The window retires it
// once every sweep has.
func (sw *sweep) due(k *kop) {
	if sw.over() || k.slot < 0 {
		return
	}
	for _, c := range sw.touched {
		c.settled, c.touched = len(c.members), false
	}
	sw.touched = sw.touched[:0]
	next := &sw.next
	next.reset(sw.spare, sw.app)
	if sw.cap > 0 {
		next.alike = sw.alike
		sw.crowded = len(sw.frontier) > crowdedAt
	}
	sw.visited.reset()
	ex := explorer{sw: sw, x: k, next: next, visited: &sw.visited, stack: sw.stack[:0], unplaced: sw.unplaced[:0]}
	for i := range sw.frontier {
		c := sw.frontier[i]
		if c.placed.has(k.slot) {
			ex.emit(c)
			continue
		}
		ex.explore(c)
		if sw.stopped != stopNone {
			sw.work += int64(ex.work)
			return
		}
	}
	sw.work += int64(ex.work)
	sw.unplaced = ex.unplaced[:0]
	// What the event held (its visited set, the frontier it replaced) goes;
	// the new frontier stays.
	sw.charge(int64(next.alive-len(sw.frontier))*configBytes - ex.charged)
	if next.alive == 0 {
		sw.dead = true
		st := &sweepStuck{c: ex.best, placed: sw.w.retired + ex.bestN, due: k}
		for i, y := range sw.w.slots {
			if y != nil && !ex.best.placed.has(i) {
				st.pending = append(st.pending, y)
			}
		}
		slices.SortFunc(st.pending, func(a, b *kop) int { return cmp.Compare(a.pos, b.pos) })
		sw.stuck = st
		sw.frontier = nil
		return
	}
	sw.dropped = sw.dropped || next.merged
	sw.spare = sw.frontier
	sw.frontier = next.configs()
	sw.stack = ex.stack
	if sw.cap > 0 && len(sw.frontier) > sw.cap {
		sw.prune()
	}
	if op := k.op; sw.unique != nil && op.Kind == model.Read && op.Returned && op.OK && op.HasValue && sw.unique(op.Value) {
		sw.observed(k.in.Value)
	}
	sw.forget()
}

// observed ends the window of the unknown write of v, the only write of v:
// a read of v is now placed in every configuration. It must have taken
// effect before that read — nothing else could have made the data v — and
// in any real behaviour it took effect once, so never again after it. (In
// the exact sweep it is applied everywhere already; in the relaxed one this
// keeps every real behaviour and drops only repeats.)
func (sw *sweep) observed(v timed.Value) {
	for _, c := range sw.live {
		if c.key.kind == model.Write && c.key.value == v {
			c.deathFence, c.resource = -2, false // dead: see isDead
		}
	}
}

// forget drops the unknown ops that can no longer take effect in any
// configuration, and (relaxed) the later members made redundant by an
// earlier one whose predecessor is now placed everywhere.
func (sw *sweep) forget() {
	if len(sw.live) == 0 {
		return
	}
	sw.steps++
	if sw.steps&63 != 0 {
		return
	}
	kept := sw.live[:0]
	for _, c := range sw.live {
		alive := false
		for i := range sw.frontier {
			if !c.isDead(&sw.frontier[i].s) {
				alive = true
				break
			}
		}
		// A class dead everywhere is forgotten: no configuration can apply
		// it again, and its counts leave the applied sets (appTable.canon).
		if alive {
			if sw.relaxed {
				for i, m := range c.members {
					if m.pred == nil || m.pred.retired {
						c.members = c.members[:i+1]
						break
					}
				}
			}
			kept = append(kept, c)
		} else {
			delete(sw.classes, c.key)
			delete(sw.byID, c.id)
		}
	}
	clear(sw.live[len(kept):])
	sw.live = kept
}

// prune keeps the exact sweep's cap best configurations: fewest unknown ops
// applied (they keep the most choices), then the smallest clock bound, in a
// fixed order so that the outcome does not depend on the run.
func (sw *sweep) prune() {
	type ranked struct {
		c       config
		applied int
		i       int
	}
	rs := make([]ranked, len(sw.frontier))
	for i, c := range sw.frontier {
		rs[i] = ranked{c, sw.app.total(c.app), i}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(a.applied, b.applied); c != 0 {
			return c
		}
		if c := cmp.Compare(a.c.s.NowLo, b.c.s.NowLo); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	sw.frontier = sw.frontier[:sw.cap]
	for i := range sw.frontier {
		sw.frontier[i] = rs[i].c
	}
	sw.dropped = true
}

// plentyLeft is how many members of a class, all free to take effect at
// once, make two counts of it alike for alike.
const plentyLeft = 3

// alike reports whether two configurations of the capped exact sweep differ
// at most in how many members of some classes they applied, where both
// still have plenty left that could take effect at once (called, no clock
// bound above the state's, no predecessor waiting): the next ones either
// applies are interchangeable, and only a run of more than plentyLeft
// applications before another retry is called could tell them apart.
// Keeping one of them is a heuristic, not a proof — so the sweep counts it
// as a drop (a witness it finds is still a linearization; an empty frontier
// is no longer a refutation, which the relaxed sweep and the search give).
//
// When the frontier is crowded (more than crowdedAt configurations), any
// two with the same placed ops and the same state are alike, whatever
// their counts. That is the shape of a correct history with a few
// unanswered acquires among several holders: every heard fence
// pins how many grants happened, but not whose lost acquire supplied each
// unheard one, and nothing later tells them apart — so the frontier held
// every combination of classes, the subsets of unknown ops docs/design.md §10
// forbids, and a 50,000-op history that a depth-first search decides in
// a second went Unknown. The one with the fewest applied is
// kept, as above, and the merge is a drop, as above.
func (sw *sweep) alike(a, b *config) bool {
	if a.placed != b.placed || a.s != b.s || a.app == b.app {
		return false
	}
	if sw.crowded {
		return true
	}
	va, vb := sw.app.vecs[a.app], sw.app.vecs[b.app]
	free := func(class int32, n int) bool {
		c := sw.byID[class]
		if c == nil || len(c.members)-n < plentyLeft {
			return false
		}
		for _, m := range c.members[n : n+plentyLeft] {
			if m.in.Lo > a.s.NowLo || blocked(m) {
				return false
			}
		}
		return true
	}
	i, j := 0, 0
	for i < len(va) || j < len(vb) {
		var class int32
		var na, nb int
		switch {
		case j == len(vb) || i < len(va) && va[i].class < vb[j].class:
			class, na = va[i].class, int(va[i].n)
			i++
		case i == len(va) || vb[j].class < va[i].class:
			class, nb = vb[j].class, int(vb[j].n)
			j++
		default:
			class, na, nb = va[i].class, int(va[i].n), int(vb[j].n)
			i++
			j++
		}
		if na != nb && (!free(class, na) || !free(class, nb)) {
			return false
		}
	}
	return true
}

// link allocates a linearization step in slabs: a sweep makes one per
// placement and keeps them until the key is done.
func (sw *sweep) link(l link) *link {
	if len(sw.links) == cap(sw.links) {
		sw.links = make([]link, 0, 1024)
		sw.charge(1024 * 24)
	}
	sw.links = append(sw.links, l)
	return &sw.links[len(sw.links)-1]
}

// alive reports whether some configuration explains every op so far. A
// sweep the budget stopped is not alive: its frontier explains only the ops
// up to where it stopped.
func (sw *sweep) alive() bool { return !sw.dead && sw.stopped == stopNone && len(sw.frontier) > 0 }

// frontierSet is a frontier being built, without a configuration that
// another dominates: the same placed ops and state but for a clock bound no
// earlier, an expiry that may come no earlier and may come no later, and at
// least as many of each class of unknown ops applied (dominates: whatever
// it can still do, the other can). Dropping those loses no linearization,
// so the sweep stays complete. Most frontiers hold a configuration or two,
// so it compares within the list until it grows past linearMax, and only
// then groups by what must be equal.
type frontierSet struct {
	app *appTable
	// alike, when set (the capped exact sweep), tells configurations apart
	// only by their applied counts where that can matter (sweep.alike);
	// merging the others is a drop, as the beam's.
	alike  func(a, b *config) bool
	merged bool
	list   []config
	gone   []bool
	alive  int
	// groups, once grouped (past linearMax), index the list by domKey.
	groups  map[domKey][]int32
	grouped bool
}

// domKey is what two configurations must share for one to dominate the
// other.
type domKey struct {
	placed         slotSet
	holder         int32
	data           timed.Value
	fence, highest int64
	loose          bool
}

func keyOf(c *config) domKey {
	return domKey{c.placed, c.s.Holder, c.s.Data, c.s.Fence, c.s.Highest, c.s.Loose}
}

const linearMax = 16

func (f *frontierSet) reset(spare []config, app *appTable) {
	f.app = app
	f.alike, f.merged = nil, false
	f.list = spare[:0]
	f.gone = f.gone[:0]
	f.alive = 0
	if f.grouped {
		clear(f.groups) // kept for the next event: a map a due is costly
		f.grouped = false
	}
}

// dom reports whether a dominates b (see frontierSet).
func (f *frontierSet) dom(a, b *config) bool {
	return a.placed == b.placed && dominates(a.s, b.s) && f.app.leq(a.app, b.app)
}

// add adds c unless a configuration already there dominates it, and drops
// those c dominates. It reports whether c was added.
func (f *frontierSet) add(c config) bool {
	var cands []int32
	if !f.grouped {
		if len(f.list) >= linearMax {
			if f.groups == nil {
				f.groups = map[domKey][]int32{}
			}
			f.grouped = true
			for i := range f.list {
				if !f.gone[i] {
					k := keyOf(&f.list[i])
					f.groups[k] = append(f.groups[k], int32(i))
				}
			}
		}
	}
	k := keyOf(&c)
	if f.grouped {
		cands = f.groups[k]
	}
	check := func(i int32) bool {
		o := &f.list[i]
		if f.gone[i] {
			return true
		}
		if f.dom(o, &c) {
			return false
		}
		if f.dom(&c, o) {
			f.gone[i] = true
			f.alive--
			return true
		}
		if f.alike != nil && f.alike(o, &c) {
			// The same but for counts that cannot run out soon: keep the
			// one that applied fewer.
			f.merged = true
			if f.app.total(o.app) <= f.app.total(c.app) {
				return false
			}
			f.gone[i] = true
			f.alive--
		}
		return true
	}
	if !f.grouped {
		for i := range f.list {
			if !check(int32(i)) {
				return false
			}
		}
	} else {
		for _, i := range cands {
			if !check(i) {
				return false
			}
		}
		live := cands[:0]
		for _, i := range cands {
			if !f.gone[i] {
				live = append(live, i)
			}
		}
		f.groups[k] = append(live, int32(len(f.list)))
	}
	f.list = append(f.list, c)
	f.gone = append(f.gone, false)
	f.alive++
	return true
}

// configs returns the frontier, without the dominated.
func (f *frontierSet) configs() []config {
	out := f.list[:0]
	for i := range f.list {
		if !f.gone[i] {
			out = append(out, f.list[i])
		}
	}
	clear(f.list[len(out):])
	return out
}

// keySet is a set of configuration keys, linear while small.
type keySet struct {
	list   []configKey
	index  map[configKey]struct{}
	hashed bool // the keys are in index, not list
}

func (k *keySet) reset() {
	k.list = k.list[:0]
	if k.hashed {
		clear(k.index) // kept for the next event: a map a due is costly
		k.hashed = false
	}
}

func (k *keySet) len() int { return len(k.list) + len(k.index) }

// add reports whether key was new.
func (k *keySet) add(key configKey) bool {
	if !k.hashed {
		for i := range k.list {
			if k.list[i] == key {
				return false
			}
		}
		if len(k.list) < linearMax {
			k.list = append(k.list, key)
			return true
		}
		if k.index == nil {
			k.index = make(map[configKey]struct{}, 4*linearMax)
		}
		k.hashed = true
		for _, c := range k.list {
			k.index[c] = struct{}{}
		}
		k.list = k.list[:0]
	}
	if _, ok := k.index[key]; ok {
		return false
	}
	k.index[key] = struct{}{}
	return true
}

// explorer places pending ops, at one op's due time, until it is placed.
type explorer struct {
	sw       *sweep
	x        *kop
	next     *frontierSet
	visited  *keySet
	stack    []config
	best     config
	bestN    int
	hasBest  bool
	work     int
	charged  int64 // bytes charged for visited, credited when the event is done
	unplaced []*kop
}

// emit adds c, which has x placed, to the next frontier.
func (ex *explorer) emit(c config) {
	c.placed = c.placed.minus(ex.x.slot)
	c.app = ex.sw.app.canon(c.app, &c.s, ex.sw.byID)
	ex.next.add(c)
}

// explore finds every configuration reachable from c in which x is placed.
func (ex *explorer) explore(c config) {
	sw := ex.sw
	ex.stack = append(ex.stack[:0], c)
	for len(ex.stack) > 0 {
		d := ex.stack[len(ex.stack)-1]
		ex.stack = ex.stack[:len(ex.stack)-1]
		ex.work++
		if ex.work&255 == 0 {
			if sw.b.expired() {
				sw.stopped = stopTime
				return
			}
			if sw.workCap > 0 && sw.work+int64(ex.work) > sw.workCap {
				sw.stopped = sw.workStop
				return
			}
		}
		if sw.cap > 0 && ex.visited.len() > 16*sw.cap {
			sw.dropped = true // exploring further would cost more than the beam allows
			return
		}
		// The bound on an unknown op's clock here, and the pending ops that
		// are not placed: any whose window has closed dead-ends d.
		hi := timed.Inf
		closed := false
		unplaced := ex.unplaced[:0]
		for p := (slotSet{sw.w.pending[0] &^ d.placed[0], sw.w.pending[1] &^ d.placed[1]}); p != (slotSet{}); {
			var i int
			if p[0] != 0 {
				i = bits.TrailingZeros64(p[0])
			} else {
				i = 64 + bits.TrailingZeros64(p[1])
			}
			p = p.minus(i)
			y := sw.w.slots[i]
			closed = closed || y.in.Hi < d.s.NowLo || sw.rules.Fences != model.NoFences && pins(y) && y.in.Fence <= d.s.Fence
			hi = min(hi, y.in.Hi)
			unplaced = append(unplaced, y)
		}
		ex.unplaced = unplaced
		ex.note(d)
		if closed {
			continue
		}
		closure := sw.closure(d, hi)
		if sw.stopped != stopNone {
			return
		}
		for _, t := range closure {
			for _, y := range unplaced {
				if y.pred != nil && !placedIn(y.pred, d.placed) {
					continue
				}
				var buf [4]timed.State
				for _, ns := range timed.StepAnyOutcome(sw.rules, t.s, &y.in, buf[:0]) {
					ns, ok := sw.canon(ns)
					if !ok {
						continue
					}
					n := config{configKey: configKey{s: ns, placed: d.placed.with(y.slot), app: t.app}, last: y, grant: t.grant, path: t.path}
					if y.in.Kind == model.Acquire && y.op.Returned && y.op.OK {
						n.grant = y
					}
					if sw.record {
						n.path = sw.link(link{k: y, parent: t.path})
					}
					if y == ex.x {
						ex.emit(n)
						continue
					}
					if !ex.visited.add(n.configKey) {
						continue
					}
					if ex.visited.len()&1023 == 0 {
						ex.charged += 1024 * configBytes
						if !sw.charge(1024 * configBytes) {
							return
						}
					}
					ex.stack = append(ex.stack, n)
				}
			}
		}
	}
}

// note keeps the configuration that placed the most, for the explanation.
func (ex *explorer) note(d config) {
	n := d.placed.count()
	if ex.hasBest && n <= ex.bestN {
		return
	}
	ex.best, ex.bestN, ex.hasBest = d, n, true
}

// appliedState is a state reached by unknown ops taking effect.
type appliedState struct {
	s           timed.State
	app         int32
	path        *link
	last, grant *kop
}

// maxClosure bounds the states one closure may reach (a few per unknown op
// alive in practice).
const maxClosure = 1 << 15

// closure returns the states d can reach by unknown ops taking effect, d's
// own first; each reads the clock at most hi.
func (sw *sweep) closure(d config, hi int64) []appliedState {
	out := append(sw.cbuf[:0], appliedState{d.s, d.app, d.path, d.last, d.grant})
	defer func() { sw.cbuf = out[:0] }()
	if len(sw.live) == 0 {
		return out
	}
	for q := 0; q < len(out); q++ {
		cur := out[q]
		for _, c := range sw.live {
			if c.isDead(&cur.s) || !sw.mayApply(c, &cur.s) {
				continue
			}
			var m *kop
			if sw.relaxed {
				for _, cand := range c.members {
					if cand.pred == nil || placedIn(cand.pred, d.placed) {
						m = cand
						break
					}
				}
			} else {
				n := sw.app.count(cur.app, c.id)
				if n >= len(c.members) {
					continue
				}
				m = c.members[n]
				if m.pred != nil && !placedIn(m.pred, d.placed) {
					// Taking a later member first would break the rule that
					// the applied ones are the earliest: lose that branch,
					// and say so.
					for _, later := range c.members[n+1:] {
						if later.pred == nil || placedIn(later.pred, d.placed) {
							sw.dropped = true
							break
						}
					}
					continue
				}
			}
			if m == nil {
				continue
			}
			in := m.in
			in.Unknown, in.OK = false, true
			in.Hi = min(in.Hi, hi)
			var buf [2]timed.State
			for _, ns := range timed.StepApplied(sw.rules, cur.s, &in, buf[:0]) {
				if sameButTime(ns, cur.s) {
					continue // changed nothing: not applying it is at least as good
				}
				ns, ok := sw.canon(ns)
				if !ok {
					continue
				}
				app := cur.app
				if !sw.relaxed {
					app = sw.app.inc(app, c.id)
				}
				// The closure's cost is its dominance comparisons, quadratic in
				// its size: counted as work (one unit per 64), with the budget
				// looked at as in explore.
				sw.cmps += int64(len(out))
				if sw.cmps >= 1<<14 {
					sw.work += sw.cmps >> 6
					sw.cmps = 0
					if sw.b.expired() {
						sw.stopped = stopTime
						return out
					}
					if sw.workCap > 0 && sw.work > sw.workCap {
						sw.stopped = sw.workStop
						return out
					}
				}
				if sw.dominatedIn(out, ns, app) {
					continue
				}
				var path *link
				if sw.record {
					path = sw.link(link{k: m, applied: true, parent: cur.path})
				}
				g := cur.grant
				if m.in.Kind == model.Acquire {
					g = m
				}
				out = append(out, appliedState{ns, app, path, m, g})
				if len(out) > maxClosure {
					sw.stopped = stopMemory
					return out
				}
			}
		}
	}
	return out
}

// mayApply reports whether an op of class c can take effect in s at all: a
// renew, a release and (under seed semantics) a write succeed only for the
// holder, so another owner's do nothing and need no step.
func (sw *sweep) mayApply(c *liveClass, s *timed.State) bool {
	switch c.key.kind {
	case model.Renew, model.Release:
		return c.key.owner == s.Holder
	case model.Write:
		return sw.rules.Semantics == model.FencedStorage || c.key.owner == s.Holder
	}
	return true
}

// dominatedIn reports whether a state in out with no more of any class
// applied allows everything s does (as frontierSet.dom: whatever s can
// still do, it can).
func (sw *sweep) dominatedIn(out []appliedState, s timed.State, app int32) bool {
	for _, o := range out {
		if dominates(o.s, s) && sw.app.leq(o.app, app) {
			return true
		}
	}
	return false
}

// dominates reports whether a allows every step b allows, with results that
// again dominate: equal but for a clock bound no later, an expiry that may
// come no later and may come no earlier (docs/specification.md §3's bounds: each step
// only compares now with them one way).
func dominates(a, b timed.State) bool {
	return a.Holder == b.Holder && a.Data == b.Data && a.Fence == b.Fence && a.Highest == b.Highest && a.Loose == b.Loose &&
		a.NowLo <= b.NowLo && a.ExpLo <= b.ExpLo && a.ExpHi >= b.ExpHi
}

// normal forgets what a state with no holder does not use: the expiry, so
// that states equal in every respect that matters are equal.
func normal(s timed.State) timed.State {
	if s.Holder == timed.NoOwner {
		s.ExpLo, s.ExpHi = 0, 0
	}
	return s
}

// appTable interns the exact sweep's applied counts: per class, how many of
// its members have taken effect (always its earliest ones).
type appTable struct {
	vecs  [][]appCount
	index map[string]int32
	incs  map[[2]int32]int32
	buf   []byte
}

type appCount struct {
	class int32
	n     int32
}

func newAppTable() *appTable {
	t := &appTable{index: map[string]int32{}, incs: map[[2]int32]int32{}}
	t.intern(nil)
	return t
}

func (t *appTable) intern(v []appCount) int32 {
	t.buf = t.buf[:0]
	for _, c := range v {
		t.buf = binary.AppendUvarint(t.buf, uint64(c.class))
		t.buf = binary.AppendUvarint(t.buf, uint64(c.n))
	}
	if id, ok := t.index[string(t.buf)]; ok {
		return id
	}
	id := int32(len(t.vecs))
	t.vecs = append(t.vecs, slices.Clone(v))
	t.index[string(t.buf)] = id
	return id
}

func (t *appTable) count(id, class int32) int {
	for _, c := range t.vecs[id] {
		if c.class == class {
			return int(c.n)
		}
	}
	return 0
}

// leq reports whether a counts no more of any class than b.
func (t *appTable) leq(a, b int32) bool {
	if a == b || len(t.vecs[a]) == 0 {
		return true
	}
	bv := t.vecs[b]
	j := 0
	for _, c := range t.vecs[a] {
		for j < len(bv) && bv[j].class < c.class {
			j++
		}
		if j == len(bv) || bv[j].class != c.class || bv[j].n < c.n {
			return false
		}
	}
	return true
}

func (t *appTable) total(id int32) int {
	n := 0
	for _, c := range t.vecs[id] {
		n += int(c.n)
	}
	return n
}

// inc is id with one more member of class applied.
func (t *appTable) inc(id, class int32) int32 {
	if r, ok := t.incs[[2]int32{id, class}]; ok {
		return r
	}
	v := slices.Clone(t.vecs[id])
	i, found := slices.BinarySearchFunc(v, class, func(c appCount, cl int32) int { return cmp.Compare(c.class, cl) })
	if found {
		v[i].n++
	} else {
		v = slices.Insert(v, i, appCount{class, 1})
	}
	r := t.intern(v)
	t.incs[[2]int32{id, class}] = r
	return r
}

// canon drops the counts of classes dead in s: how many of them took effect
// no longer matters to anything that can still happen.
func (t *appTable) canon(id int32, s *timed.State, live map[int32]*liveClass) int32 {
	v := t.vecs[id]
	if len(v) == 0 {
		return id
	}
	var kept []appCount
	changed := false
	for _, c := range v {
		if lc := live[c.class]; lc == nil || lc.isDead(s) {
			changed = true
			continue
		}
		kept = append(kept, c)
	}
	if !changed {
		return id
	}
	return t.intern(kept)
}
