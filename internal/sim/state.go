package sim

// Copying and digesting a world state, for the explorer (docs/design.md §7).
//
// StateHash digests exactly what decides the rest of the run and the
// verdicts on it: the nodes, the machines, the events still to come and
// the messages in flight (by content, not by queue slot or sequence
// number), the servers' caches, the liveness bookkeeping, the belief and
// stop spans, the monitor, and the history so far as a multiset of
// operations. Two states with one digest therefore have the same futures
// and every judge gives them the same verdicts: the checker's properties
// depend on the history only through its operations and each process's own
// order (which appends keep, whichever process runs first), the run
// properties on the spans and measurements. Stale wake-ups (no-ops) and
// counters kept only for reports are left out. The digest is 64-bit: two
// different states collide with probability about n²/2⁶⁵ over n states
// (under 10⁻⁶ at 10⁷ states).

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/statehash"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// SetChooser replaces the world's chooser (the explorer gives each copy its
// own). A Picker keeps the run enumerable.
func (w *World) SetChooser(c Chooser) {
	w.ch = c
	w.pick, _ = c.(Picker)
	w.replay = nil
}

// EnableHashing makes the world keep the digest of its history as it grows,
// so StateHash costs the same at any depth. Call it before the first step.
func (w *World) EnableHashing() {
	if w.hashing {
		return
	}
	w.hashing = true
	w.spanSum = w.spansDigest(nil)
	w.opHash = make([]uint64, w.ops.len())
	w.opSum = 0
	for i := range w.ops.len() {
		w.rehashOp(int32(i))
	}
}

// The digests below are written with statehash.Digest, a value the
// compiler keeps in a register (a Hasher behind a pointer stores and loads
// its digest at every word): the same words in the same order, so the same
// digests.

func hashOp(o *model.Op, r *renaming) uint64 {
	d := statehash.New().Str(r.str(o.Process)).Str(r.str(o.Owner)).Str(r.str(o.Key)).
		Str(r.str(o.Value)).Str(r.str(o.Error))
	d = d.Int(int64(o.Kind)).Int(o.TTL).Int(o.Fence).Int(o.Call).Int(o.Return).Int(o.At)
	d = d.Bool(o.HasValue).Bool(o.Returned).Bool(o.HasAt).Bool(o.OK)
	return statehash.Finalize(d.Sum())
}

func (w *World) rehashOp(i int32) {
	nh := hashOp(w.ops.at(int(i)), nil)
	w.opSum += nh - w.opHash[i]
	w.opHash[i] = nh
}

// CanClone reports whether Clone can copy the world: every machine in it is
// a machine.HolderCloner, CoordinatorCloner or ResourceCloner (a Clocked
// coordinator a machine.ClockedCloner), the monitor can copy itself, and
// the run is enumerable (a seeded PRNG's position is not copied).
func (w *World) CanClone() bool {
	if w.pick == nil {
		return false
	}
	// The machines' kinds never change (a restart builds from the same
	// factories): asked once, the answer is kept, and copies keep it.
	if w.cloneable == 0 {
		w.cloneable = 2
		if w.machinesClone() {
			w.cloneable = 1
		}
	}
	return w.cloneable == 1
}

func (w *World) machinesClone() bool {
	for i := range w.nodes {
		if m := w.nodes[i].m; m != nil {
			if _, ok := m.(machine.HolderCloner); !ok {
				return false
			}
		}
	}
	if !canCloneCoordinator(w.coord) {
		return false
	}
	if w.res != nil {
		if _, ok := w.res.(machine.ResourceCloner); !ok {
			return false
		}
	}
	// A coordinator or holder built after a restart comes from the same
	// factories: checked once here for the ones that exist now.
	return true
}

func canCloneCoordinator(c machine.Coordinator) bool {
	if u, ok := c.(interface{ Unwrap() machine.Clocked }); ok {
		_, ok := u.Unwrap().(machine.ClockedCloner)
		return ok
	}
	_, ok := c.(machine.CoordinatorCloner)
	return ok
}

// Clone returns an independent copy of the world, or nil when CanClone is
// false. The copy keeps the chooser; the explorer gives it its own
// (SetChooser).
func (w *World) Clone() *World { return w.CloneInto(nil) }

// CloneInto is Clone made in spare, a world nobody uses any more, whose
// buffers (nodes, inboxes, messages, the queue, the spans, the
// measurements) it reuses: a depth-first search drops most worlds soon
// after it made them, and a copy into one allocates almost nothing. Spare
// must be wholly out of use — no goroutine reads it, and nothing it handed
// out (its Result, its Ops) is read again — and must not be w. nil: a
// new world.
func (w *World) CloneInto(spare *World) *World {
	if !w.CanClone() {
		return nil
	}
	c := spare
	var old World // spare's buffers, taken before the copy overwrites them
	if c == nil {
		c = new(World)
	} else {
		old = *c
	}
	// Each of spare's nodes' own buffers, taken before the nodes are
	// overwritten.
	var bufArr [8]nodeBufs
	bufs := bufArr[:0]
	for i := range min(len(w.nodes), cap(old.nodes)) {
		n := &old.nodes[:cap(old.nodes)][i]
		bufs = append(bufs, nodeBufs{n.inbox, n.held, n.client})
	}
	*c = *w
	c.nodes = append(old.nodes[:0], w.nodes...)
	for i := range c.nodes {
		n := &c.nodes[i]
		var b nodeBufs
		if i < len(bufs) {
			b = bufs[i]
		}
		n.inbox = append(b.inbox[:0], w.nodes[i].inbox...)
		n.held = append(b.held[:0], w.nodes[i].held...)
		if n.client != nil {
			n.client = n.client.cloneInto(b.client)
		}
	}
	c.msgs = append(old.msgs[:0], w.msgs...)
	c.free = append(old.free[:0], w.free...)
	c.q.ev = append(old.q.ev[:0], w.q.ev...)
	// The moves and the due events are meaningful only while the moves are
	// offered; a world between moves (the copy a move ran on, kept by a
	// waiting state) need not carry their stale contents.
	c.due, c.moves = old.due[:0], old.moves[:0]
	if w.movesReady {
		c.due = append(c.due, w.due...)
		c.moves = append(c.moves, w.moves...)
	}
	c.plan = slices.Clip(w.plan)
	// The machines are shared, copied on write (machines.go).
	c.mcow = cow{}
	w.mcow.share()
	c.dedupe = old.dedupe // made at its first entry
	clear(c.dedupe)
	if len(w.dedupe) > 0 {
		if c.dedupe == nil {
			c.dedupe = make(map[dedupeKey]machine.Reply, len(w.dedupe))
		}
		maps.Copy(c.dedupe, w.dedupe)
	}
	// The history is shared, copy on write by chunks (oplog.go).
	c.ops = w.ops.share()
	c.opHash = nil
	if w.opHash != nil {
		c.opHash = append(old.opHash[:0], w.opHash...)
	}
	c.faultRecs = append(old.faultRecs[:0], w.faultRecs...)
	c.trace = append(old.trace[:0], w.trace...)
	c.meter = w.meter.CopyInto(old.meter)
	c.beliefs = append(old.beliefs[:0], w.beliefs...)
	c.stops = append(old.stops[:0], w.stops...)
	if w.replay != nil {
		r := *w.replay
		c.replay = &r
		c.ch, c.pick = c.replay, c.replay
	}
	if w.mon != nil {
		c.mon = w.mon.Clone()
	}
	return c
}

// nodeBufs are a node's own buffers, which a copy into a spare world reuses.
type nodeBufs struct {
	inbox, held []int32
	client      *client
}

// StateHash digests the world's state (see the top of this file).
func (w *World) StateHash() uint64 { return w.stateHash(nil) }

// stateHash digests the world's state as it would be with its holders
// renamed by r (nil: as it is). Every place a holder's identity can lie is
// renamed by the one renaming: node slots, message ends, event targets,
// dedupe keys, and every string (names, owners, processes, values and
// errors, inside the machines too, via the reflective walk).
func (w *World) stateHash(r *renaming) uint64 {
	d := statehash.New().Int(w.now)
	for j := range w.nodes {
		d = w.hashNode(d, &w.nodes[r.from(j)], r)
	}
	// The events to come, as a multiset: their queue order only breaks
	// ties, and an enumerable run offers every order of ties anyway.
	var evs uint64
	for i := range w.q.ev {
		if !w.stale(&w.q.ev[i]) {
			evs += w.hashEvent(&w.q.ev[i], r)
		}
	}
	for i := range w.due {
		evs += w.hashEvent(&w.due[i], r)
	}
	d = d.Uint(evs)
	if r != nil {
		d = w.hashMachineD(d, w.coord, r)
		if w.res != nil {
			d = w.hashMachineD(d, w.res, r)
		}
	} else {
		d = d.Uint(w.machineDigest(&w.coordH, w.coord))
		if w.res != nil {
			d = d.Uint(w.machineDigest(&w.resH, w.res))
		}
	}
	if r == nil {
		d = d.Uint(w.dedupeSum)
	} else {
		var dd uint64
		for k, rep := range w.dedupe {
			dd += hashDedupe(k, &rep, r)
		}
		d = d.Uint(dd)
	}
	if w.hashing && r == nil {
		d = d.Uint(w.opSum)
	} else {
		var s uint64
		for i := range w.ops.len() {
			s += hashOp(w.ops.at(i), r)
		}
		d = d.Uint(s)
	}
	d = d.Int(int64(w.restarts)).Str(r.str(w.meter.Owner())).Int(w.meter.Expiry()).Int(int64(w.believers))
	if w.believers >= 2 {
		d = d.Int(w.dblSince)
	}
	d = d.Int(w.stats.DoubleBelief)
	crashes, releases := w.meter.Pending()
	for _, t := range crashes {
		d = d.Int(t)
	}
	d = d.Int(-1)
	for _, t := range releases {
		d = d.Int(t)
	}
	d = d.Int(-1)
	recs, hands := w.meter.Timed()
	d = d.Uint(sumInts(recs)).Uint(sumInts(hands)).Int(w.granted).Int(w.resHighest)
	// The belief and stop spans: their digests' sum, kept as spans open
	// and close while hashing (liveness.go), or summed afresh.
	sp := w.spanSum
	if !w.hashing || r != nil || w.verifyDigests {
		fresh := w.spansDigest(r)
		if w.hashing && r == nil && fresh != sp {
			w.fail("sim: the kept digest of the belief and stop spans is stale (a span written outside setBelief, openStop and closeStop): a bug in leasecheck")
		}
		sp = fresh
	}
	d = d.Uint(sp).Int(int64(w.faultsLeft)).Int(int64(w.advLeft)).Int(int64(min(w.devLeft, 1<<30)))
	if w.mon == nil {
		return d.Sum()
	}
	// The monitor digests into the world's own hasher: one passed to it
	// escapes, and a fresh one per digest was an allocation per state.
	h := &w.hasher
	h.Resume(d)
	mh := (*machine.Hasher)(h)
	switch m := w.mon.(type) {
	case RenamingHasher:
		if r == nil {
			m.HashStateRenamed(mh, nil) // r.str as a func value is an allocation a state
		} else {
			m.HashStateRenamed(mh, r.str)
		}
	default:
		if r == nil {
			m.HashState(mh)
		} else {
			hashReflect(mh, reflect.ValueOf(m), map[uintptr]bool{}, r)
		}
	}
	return h.Sum()
}

// hashMachineD is hashMachine on a digest held as a value, through the
// world's own hasher (one passed to a machine escapes).
func (w *World) hashMachineD(d statehash.Digest, m any, r *renaming) statehash.Digest {
	w.hasher.Resume(d)
	hashMachine((*machine.Hasher)(&w.hasher), m, r)
	return w.hasher.Digest()
}

// hashDedupe digests one entry of the at-most-once cache; the cache's
// digest is their sum (World.dedupeSum, kept as entries are added: the
// cache only grows).
func hashDedupe(k dedupeKey, rep *machine.Reply, r *renaming) uint64 {
	d := statehash.New().Int(int64(r.to(k.node))).Int(int64(k.inc)).Uint(k.id)
	return statehash.Finalize(hashReply(d, rep, r).Sum())
}

// spansDigest sums the digests of the belief and stop spans (World.spanSum
// is it kept).
func (w *World) spansDigest(r *renaming) uint64 {
	var sp uint64
	for i := range w.beliefs {
		sp += beliefDigest(&w.beliefs[i], r)
	}
	for i := range w.stops {
		sp += stopDigest(&w.stops[i], r)
	}
	return sp
}

// keptBelief and keptStop are a span's part of World.spanSum: its digest
// while the world keeps its digest (EnableHashing), else 0 (a run that is
// not explored pays nothing for it).
func (w *World) keptBelief(b *Belief) uint64 {
	if !w.hashing {
		return 0
	}
	return beliefDigest(b, nil)
}

func (w *World) keptStop(s *Stop) uint64 {
	if !w.hashing {
		return 0
	}
	return stopDigest(s, nil)
}

func beliefDigest(b *Belief, r *renaming) uint64 {
	d := statehash.New().Str(r.str(b.Process)).Str(r.str(b.Owner)).Int(b.Fence).Int(b.From).Bool(b.Open)
	if !b.Open {
		d = d.Int(b.To)
	}
	return statehash.Finalize(d.Sum())
}

func stopDigest(s *Stop, r *renaming) uint64 {
	d := statehash.New().Str(r.str(s.Process)).Str(string(s.Kind)).Int(s.From).Bool(s.Open)
	if !s.Open {
		d = d.Int(s.To)
	}
	return statehash.Finalize(d.Sum()) ^ 0x5bd1e995
}

func sumInts(xs []int64) uint64 {
	var s uint64
	for _, x := range xs {
		s += statehash.Finalize(uint64(x) + 0x9e3779b97f4a7c15)
	}
	return s
}

func (w *World) hashNode(d statehash.Digest, n *node, r *renaming) statehash.Digest {
	// The node's own fields, digested once and kept until a write through
	// nodeW drops the kept digest (most moves write one node or none); a
	// renamed digest is made afresh.
	if r != nil {
		d = d.Uint(w.nodeCore(n, r))
	} else {
		k := n.hd
		if k == 0 || w.verifyDigests {
			fresh := w.nodeCore(n, nil)
			if k != 0 && k != fresh {
				w.fail("sim: node %s's kept digest is stale (a field written past nodeW): a bug in leasecheck", n.name)
			}
			k, n.hd = fresh, fresh
		}
		d = d.Uint(k)
	}
	// The clock as a function of time from now on: its reading, its rate
	// and the fraction of a tick its drift carries (without it, two clocks
	// reading alike now with different fractions shared a digest, and the
	// explorer kept the futures of whichever came first: found by a
	// sharded exploration reaching 11% more states under clock-drift). The
	// reading and the fraction follow the time, so they are not kept.
	d = d.Int(n.clock.Mono(w.now)).Int(n.clock.Phase(w.now))
	// Messages: their digests follow their operations', which a reply
	// changes while they wait.
	d = d.Uint(uint64(len(n.inbox)) | uint64(len(n.held))<<32)
	for _, m := range n.inbox {
		d = d.Uint(w.hashMsg(m, r))
	}
	for _, m := range n.held {
		d = d.Uint(w.hashMsg(m, r))
	}
	switch {
	case n.m == nil:
	case r != nil:
		d = w.hashMachineD(d, n.m, r)
	default:
		d = d.Uint(w.machineDigest(&n.mh, n.m))
	}
	if c := n.client; c != nil {
		d = d.Int(int64(c.next)).Bool(c.out)
		if c.out {
			d = d.Uint(c.outID).Uint(w.opHashOf(c.outOp, r)).Str(r.str(c.outO)).Int(c.outF).Int(c.until)
		}
		d = d.Uint(c.nextID)
		for _, of := range c.banned {
			d = d.Str(r.str(of.owner)).Int(of.fence)
		}
		d = d.Int(-1).Int(c.lastGrant).Str(r.str(c.waitFor)).Bool(c.fired).Int(c.acquired)
	}
	return d
}

// nodeCore digests the node's own fields that do not follow the time
// (hashNode keeps it in node.hd): small counters and flags two to a word,
// each within its 32-bit half (counts of pauses, cuts and incarnations), so
// the packing is one to one.
func (w *World) nodeCore(n *node, r *renaming) uint64 {
	d := statehash.New().Str(r.str(n.process)).Str(r.str(n.owner))
	flags := b2i(n.crashed) | b2i(n.believes)<<1 | b2i(n.waiting)<<2 | b2i(n.done)<<3 | b2i(n.belief >= 0)<<4 | b2i(n.stop >= 0)<<5
	d = d.Uint(uint64(uint32(n.paused)) | uint64(uint32(n.inc))<<32).
		Uint(uint64(uint32(n.nextInc)) | uint64(uint32(n.freezes))<<32).
		Uint(uint64(uint32(n.cutCoord)) | uint64(uint32(n.cutRes))<<32).
		Uint(uint64(uint32(n.dropRenew)) | uint64(uint32(n.clock.Frozen()))<<32)
	d = d.Int(flags).Int(n.clock.Drift()).Int(n.clock.WallOffset()).Int(n.wakeLocal).Int(n.armed.Total)
	if n.armed.Total > 0 {
		d = d.Int(n.armed.Since)
	}
	d = d.Int(n.fence).Int(n.extraDelay)
	return statehash.Finalize(d.Sum()) | 1 // never 0, which means "not kept"
}

// nodeW returns node id for a move that may write its own fields (those
// nodeCore digests): its kept digest is dropped. Every such write goes
// through it; VerifyDigests catches one that does not.
func (w *World) nodeW(id int32) *node {
	n := &w.nodes[id]
	n.hd = 0
	return n
}

func (w *World) opHashOf(op int32, r *renaming) uint64 {
	if op < 0 {
		return 0
	}
	if w.hashing && r == nil {
		return w.opHash[op]
	}
	return hashOp(w.ops.at(int(op)), r)
}

func (w *World) hashMsg(m int32, r *renaming) uint64 {
	e := &w.msgs[m]
	var own uint64
	if r == nil && e.h != 0 {
		own = e.h
	} else {
		d := statehash.New().Int(int64(r.to(e.from))).Int(int64(r.to(e.to))).Int(int64(e.inc)).Bool(e.isReply).Bool(e.dup)
		d = hashRequest(d, &e.req, r)
		if e.isReply {
			d = hashReply(d, &e.rep, r)
		}
		own = d.Sum() | 1 // never 0, the cache's "not computed"
		if r == nil {
			e.h = own
		}
	}
	return statehash.Finalize(own ^ w.opHashOf(e.op, r)*0x9e3779b97f4a7c15)
}

func hashRequest(d statehash.Digest, q *machine.Request, r *renaming) statehash.Digest {
	return d.Uint(q.ID).Int(int64(q.To)).Int(int64(q.Kind)).Str(r.str(q.Key)).Str(r.str(q.Owner)).
		Int(q.TTL).Int(q.Fence).Str(r.str(q.Value))
}

func hashReply(d statehash.Digest, p *machine.Reply, r *renaming) statehash.Digest {
	d = d.Uint(p.ID).Bool(p.OK).Int(p.Fence).Str(r.str(p.Value)).Bool(p.HasValue).Str(r.str(p.Err)).Int(p.At)
	if p.TTL != 0 { // only a coordinator that grants other than asked sets it: the digests of every other run stay as they were
		d = d.Int(p.TTL)
	}
	return d
}

func (w *World) hashEvent(e *event, r *renaming) uint64 {
	d := statehash.New().Int(e.t).Int(int64(e.kind))
	switch e.kind {
	case evDeliver:
		d = d.Uint(w.hashMsg(e.arg, r))
	case evFault, evFaultEnd, evRestart:
		d = hashFault(d, &w.plan[e.arg], r)
	default:
		d = d.Int(int64(r.to(e.node)))
		if e.kind != evWake {
			d = d.Uint(e.gen) // resume, unfreeze: the incarnation
		}
	}
	return statehash.Finalize(d.Sum())
}

// hashMachine digests a machine: its own StateHasher, the Clocked
// coordinator behind a ClockedCoordinator, or else its fields (HashValue).
//
// Renamed (r non-nil), a machine is always walked by reflection, each of
// its strings renamed: its own StateHasher cannot be told the renaming.
func hashMachine(h *machine.Hasher, m any, r *renaming) {
	if u, ok := m.(interface{ Unwrap() machine.Clocked }); ok {
		m = u.Unwrap()
	}
	if r != nil {
		hashReflect(h, reflect.ValueOf(m), map[uintptr]bool{}, r)
		return
	}
	if s, ok := m.(machine.StateHasher); ok {
		s.HashState(h)
		return
	}
	HashValue(h, m)
}

func hashFault(d statehash.Digest, f *faults.Fault, r *renaming) statehash.Digest {
	return d.Str(string(f.Kind)).Str(r.str(f.Target)).Int(f.At).Int(f.Duration).Int(f.Amount).Str(r.str(f.Peer))
}

// HashValue digests any value by walking it with reflection: every field,
// exported or not, through pointers, slices, arrays and maps (a map's
// entries in an order of their own digests, so iteration order does not
// matter). Functions and channels contribute only their type. It is the
// explorer's digest of a third party's machine that does not implement
// machine.StateHasher: slower, and blind to state hidden behind a function
// value.
func HashValue(h *machine.Hasher, v any) {
	hashReflect(h, reflect.ValueOf(v), map[uintptr]bool{}, nil)
}

func hashReflect(h *machine.Hasher, v reflect.Value, seen map[uintptr]bool, r *renaming) {
	if !v.IsValid() {
		h.Int(-7)
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		h.Bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		h.Int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		h.Uint(v.Uint())
	case reflect.Float32, reflect.Float64:
		h.Uint(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		h.Uint(math.Float64bits(real(c)))
		h.Uint(math.Float64bits(imag(c)))
	case reflect.String:
		h.String(r.str(v.String()))
	case reflect.Pointer:
		if v.IsNil() {
			h.Int(0)
			return
		}
		p := v.Pointer()
		if seen[p] {
			h.Int(-2) // a cycle: the structure is digested once
			return
		}
		seen[p] = true
		h.Int(1)
		hashReflect(h, v.Elem(), seen, r)
		delete(seen, p)
	case reflect.Interface:
		if v.IsNil() {
			h.Int(0)
			return
		}
		h.String(v.Elem().Type().String())
		hashReflect(h, v.Elem(), seen, r)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			hashReflect(h, v.Field(i), seen, r)
		}
	case reflect.Slice, reflect.Array:
		h.Int(int64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			hashReflect(h, v.Index(i), seen, r)
		}
	case reflect.Map:
		h.Int(int64(v.Len()))
		sums := make([]uint64, 0, v.Len())
		it := v.MapRange()
		for it.Next() {
			x := statehash.NewHasher()
			hashReflect((*machine.Hasher)(x), it.Key(), seen, r)
			hashReflect((*machine.Hasher)(x), it.Value(), seen, r)
			sums = append(sums, x.Sum())
		}
		sort.Slice(sums, func(i, j int) bool { return sums[i] < sums[j] })
		for _, s := range sums {
			h.Uint(s)
		}
	default: // func, chan, unsafe pointer
		h.String(v.Type().String())
	}
}

// MoveKey names move m of the current Moves by what it does, not by when
// it was scheduled: a due event by its content (the digest StateHash gives
// it), a fault or a request by its place in the Space's fixed lists. Two
// states with one digest give the same moves the same keys, whichever
// path reached them (a Seq depends on the order events were scheduled in),
// so the explorer's sleep sets may be compared across paths. Two due
// events with one key are the same transition: running either leads to
// states with one digest.
func (w *World) MoveKey(m Move) uint64 {
	switch m.Kind {
	case MoveFault:
		return statehash.Finalize(uint64(m.Index)<<8 | 1)
	case MoveClient:
		return statehash.Finalize(uint64(m.Index)<<8 | 2)
	}
	return w.hashEvent(&w.due[m.Index], nil)
}

// Symmetry between holders with identical programs (docs/exploration.md).
//
// A renaming is one permutation of interchangeable holders, applied to
// every place a holder's identity lies: its node slot (and with it every
// node index: message ends, event targets, dedupe keys) and every string
// that names it. Strings are renamed token by token (a token is a maximal
// run of letters, digits and '_'), so "h1#2", "h1#2:w3" and an error
// naming h1 all follow h1; since every renamed name is itself one token,
// the renaming of strings is a bijection (its inverse is the inverse
// permutation's), so a renamed digest is a faithful image of the state.

// renaming maps node slots and holder names; nil is the identity.
type renaming struct {
	toSlot, fromSlot []int32
	names            map[string]string
}

func (r *renaming) to(i int32) int32 {
	if r == nil || i < 0 || int(i) >= len(r.toSlot) {
		return i
	}
	return r.toSlot[i]
}

func (r *renaming) from(j int) int {
	if r == nil {
		return j
	}
	return int(r.fromSlot[j])
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// str returns s with every holder name renamed (r nil: s). Small enough to
// inline: most digests are taken without a renaming, and a call for each
// string of each digest is paid by every state.
func (r *renaming) str(s string) string {
	if r == nil || s == "" {
		return s
	}
	return r.rename(s)
}

func (r *renaming) rename(s string) string {
	var out []byte
	last := 0
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if n, ok := r.names[s[i:j]]; ok {
			out = append(out, s[last:i]...)
			out = append(out, n...)
			last = j
		}
		i = j
	}
	if out == nil {
		return s
	}
	return string(append(out, s[last:]...))
}

// RenamingHasher is a Monitor that can digest its state as it would be
// with every holder name renamed by rename (Symmetry's canonical digest;
// nil: as it is); a monitor without it is walked by reflection with its strings renamed.
type RenamingHasher interface {
	HashStateRenamed(h *machine.Hasher, rename func(string) string)
}

// Symmetry is the group of permutations of a world's interchangeable
// holders (HolderSymmetry), identity included.
type Symmetry struct {
	perms   []*renaming
	Classes [][]string // the interchangeable holders, by name
}

// maxSymmetryPerms bounds the group: each canonical digest costs one
// renamed digest a permutation.
const maxSymmetryPerms = 720

// HolderSymmetry returns the permutations of holders that leave the world's
// run and verdicts unchanged, or nil and why there are none. Holders are
// interchangeable when their configurations (programs, timings, planted
// bugs) are identical but for their names, they start at one instant and
// were told one drift bound (a slot's fixed data the digest leaves out),
// their names are single tokens, and renaming them by any permutation of a
// class maps the fault candidates, the scenario's planned faults and the
// adversary's menu onto themselves (as multisets). Scripted clients other
// than the adversary leave it off (their scripts name holders by time).
// Call it on the root world, before the first step.
func (w *World) HolderSymmetry() (*Symmetry, string) {
	if w.ops.len() > 0 || w.now != 0 {
		return nil, "the world has already run"
	}
	type member struct {
		slot int32
		name string
	}
	var classes [][]member
	var sig []holder.Config
	var starts, told []int64
	for i := range w.nodes {
		n := &w.nodes[i]
		switch n.kind {
		case kindHolder:
		case kindClient:
			if int32(i) != w.advID {
				return nil, "a scripted client " + n.name + " may name holders"
			}
			continue
		default:
			continue
		}
		if !isToken(n.name) || n.owner != n.name || n.process != n.name {
			return nil, "holder " + n.name + "'s name is not one token"
		}
		cfg := w.cfgs[n.cfg]
		cfg.Owner, cfg.Name = "", ""
		k := -1
		for c := range sig {
			if starts[c] == n.start && told[c] == n.told && reflect.DeepEqual(sig[c], cfg) {
				k = c
				break
			}
		}
		if k < 0 {
			sig, starts, told = append(sig, cfg), append(starts, n.start), append(told, n.told)
			classes = append(classes, nil)
			k = len(classes) - 1
		}
		classes[k] = append(classes[k], member{int32(i), n.name})
	}
	s := &Symmetry{}
	count := 1
	var multi [][]member
	for _, c := range classes {
		if len(c) < 2 {
			continue
		}
		multi = append(multi, c)
		names := make([]string, len(c))
		for i, m := range c {
			names[i] = m.name
			count *= i + 1
		}
		s.Classes = append(s.Classes, names)
	}
	if len(multi) == 0 {
		return nil, "no two holders have identical programs and start times"
	}
	if count > maxSymmetryPerms {
		return nil, "too many permutations of interchangeable holders"
	}
	// Every permutation: the product of each class's permutations.
	ident := func() *renaming {
		r := &renaming{toSlot: make([]int32, len(w.nodes)), fromSlot: make([]int32, len(w.nodes)), names: map[string]string{}}
		for i := range r.toSlot {
			r.toSlot[i], r.fromSlot[i] = int32(i), int32(i)
		}
		return r
	}
	perms := []*renaming{ident()}
	for _, c := range multi {
		var next []*renaming
		for _, p := range perms {
			for _, order := range permutations(len(c)) {
				r := ident()
				copy(r.toSlot, p.toSlot)
				copy(r.fromSlot, p.fromSlot)
				maps.Copy(r.names, p.names)
				for i, j := range order {
					r.toSlot[c[i].slot] = c[j].slot
					r.fromSlot[c[j].slot] = c[i].slot
					if i != j {
						r.names[c[i].name] = c[j].name
					}
				}
				next = append(next, r)
			}
		}
		perms = next
	}
	for _, r := range perms {
		if !sameMultiset(w.candidates, r) {
			return nil, "the fault candidates are not symmetric in the holders"
		}
		if !sameMultiset(w.plan, r) {
			return nil, "the planned faults are not symmetric in the holders"
		}
		if !sameMultiset(w.menu, r) {
			return nil, "the adversary's menu is not symmetric in the holders"
		}
	}
	s.perms = perms
	return s, ""
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}

// permutations returns every ordering of 0..n-1, the identity first.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for at := len(p); at >= 0; at-- {
			q := append(append(append([]int{}, p[:at]...), n-1), p[at:]...)
			out = append(out, q)
		}
	}
	return out
}

// sameMultiset reports whether renaming xs by r gives xs again, as a
// multiset (each element digested by reflection, its strings renamed).
func sameMultiset[T any](xs []T, r *renaming) bool {
	digests := func(r *renaming) []uint64 {
		d := make([]uint64, len(xs))
		for i := range xs {
			h := statehash.NewHasher()
			hashReflect((*machine.Hasher)(h), reflect.ValueOf(xs[i]), map[uintptr]bool{}, r)
			d[i] = h.Sum()
		}
		slices.Sort(d)
		return d
	}
	return slices.Equal(digests(nil), digests(r))
}

// CanonicalHash is the least of the state's digests under every renaming
// of s: two states that differ only by a permutation of interchangeable
// holders share it. Every renaming, the identity too, digests the machines
// by reflection, so it is not comparable with StateHash.
func (w *World) CanonicalHash(s *Symmetry) uint64 {
	best := uint64(math.MaxUint64)
	for _, r := range s.perms {
		best = min(best, w.stateHash(r))
	}
	return best
}
