package sim

// Copying and digesting a world state, for the explorer (DESIGN.md §7).
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
	w.opHash = make([]uint64, len(w.ops))
	w.opSum = 0
	for i := range w.ops {
		w.rehashOp(int32(i))
	}
}

func hashOp(o *model.Op) uint64 {
	h := machine.NewHasher()
	h.String(o.Process)
	h.String(o.Owner)
	h.String(o.Key)
	h.String(o.Value)
	h.String(o.Error)
	h.Int(int64(o.Kind))
	h.Int(o.TTL)
	h.Int(o.Fence)
	h.Int(o.Call)
	h.Int(o.Return)
	h.Int(o.At)
	h.Bool(o.HasValue)
	h.Bool(o.Returned)
	h.Bool(o.HasAt)
	h.Bool(o.OK)
	return machine.Finalize(h.Sum())
}

func (w *World) rehashOp(i int32) {
	nh := hashOp(&w.ops[i])
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
	if in := machine.Unwrap(c); in != nil {
		_, ok := in.(machine.ClockedCloner)
		return ok
	}
	_, ok := c.(machine.CoordinatorCloner)
	return ok
}

// Clone returns an independent copy of the world, or nil when CanClone is
// false. The copy keeps the chooser; the explorer gives it its own
// (SetChooser).
func (w *World) Clone() *World {
	if !w.CanClone() {
		return nil
	}
	c := *w
	c.nodes = slices.Clone(w.nodes)
	for i := range c.nodes {
		n := &c.nodes[i]
		n.inbox = slices.Clone(n.inbox)
		n.held = slices.Clone(n.held)
		if n.m != nil {
			n.m = n.m.(machine.HolderCloner).CloneHolder()
		}
		if n.client != nil {
			n.client = n.client.clone()
		}
	}
	c.msgs = slices.Clone(w.msgs)
	c.free = slices.Clone(w.free)
	c.q.ev = slices.Clone(w.q.ev)
	// The moves and the due events are meaningful only while the moves are
	// offered; a world between moves (the copy a move ran on, kept by a
	// waiting state) need not carry their stale contents.
	if w.movesReady {
		c.due = slices.Clone(w.due)
		c.moves = slices.Clone(w.moves)
	} else {
		c.due, c.moves = nil, nil
	}
	c.plan = slices.Clip(w.plan)
	c.coord = w.coord.(machine.CoordinatorCloner).CloneCoordinator()
	if w.res != nil {
		c.res = w.res.(machine.ResourceCloner).CloneResource()
	}
	c.dedupe = nil // made at its first entry
	if len(w.dedupe) > 0 {
		c.dedupe = maps.Clone(w.dedupe)
	}
	// The history grows by an operation a request: room for two more, so
	// the copy's next moves append without copying it again.
	c.ops = append(make([]model.Op, 0, len(w.ops)+2), w.ops...)
	c.faultRecs = slices.Clone(w.faultRecs)
	if w.opHash != nil {
		c.opHash = append(make([]uint64, 0, len(w.opHash)+2), w.opHash...)
	}
	c.trace = slices.Clone(w.trace)
	c.stats.Recoveries = slices.Clone(w.stats.Recoveries)
	c.stats.Handoffs = slices.Clone(w.stats.Handoffs)
	c.stats.RecoveryAt = slices.Clone(w.stats.RecoveryAt)
	c.stats.HandoffAt = slices.Clone(w.stats.HandoffAt)
	c.pendCrash = slices.Clone(w.pendCrash)
	c.pendRelease = slices.Clone(w.pendRelease)
	c.beliefs = slices.Clone(w.beliefs)
	c.stops = slices.Clone(w.stops)
	if w.replay != nil {
		r := *w.replay
		c.replay = &r
		c.ch, c.pick = c.replay, c.replay
	}
	if w.mon != nil {
		c.mon = w.mon.Clone()
	}
	return &c
}

// StateHash digests the world's state (see the top of this file).
func (w *World) StateHash() uint64 {
	h := machine.NewHasher()
	h.Int(w.now)
	for i := range w.nodes {
		w.hashNode(h, &w.nodes[i])
	}
	// The events to come, as a multiset: their queue order only breaks
	// ties, and an enumerable run offers every order of ties anyway.
	var evs uint64
	for i := range w.q.ev {
		if !w.stale(&w.q.ev[i]) {
			evs += w.hashEvent(&w.q.ev[i])
		}
	}
	for i := range w.due {
		evs += w.hashEvent(&w.due[i])
	}
	h.Uint(evs)
	hashMachine(h, w.coord)
	if w.res != nil {
		hashMachine(h, w.res)
	}
	var dd uint64
	for k, r := range w.dedupe {
		x := machine.NewHasher()
		x.Int(int64(k.node))
		x.Int(int64(k.inc))
		x.Uint(k.id)
		hashReply(x, &r)
		dd += machine.Finalize(x.Sum())
	}
	h.Uint(dd)
	if w.hashing {
		h.Uint(w.opSum)
	} else {
		var s uint64
		for i := range w.ops {
			s += hashOp(&w.ops[i])
		}
		h.Uint(s)
	}
	h.Int(int64(w.restarts))
	h.String(w.leaseOwner)
	h.Int(w.leaseExpiry)
	h.Int(int64(w.believers))
	if w.believers >= 2 {
		h.Int(w.dblSince)
	}
	h.Int(w.stats.DoubleBelief)
	for _, t := range w.pendCrash {
		h.Int(t)
	}
	h.Int(-1)
	for _, t := range w.pendRelease {
		h.Int(t)
	}
	h.Int(-1)
	h.Uint(sumInts(w.stats.Recoveries))
	h.Uint(sumInts(w.stats.Handoffs))
	h.Int(w.granted)
	h.Int(w.resHighest)
	var sp uint64
	for i := range w.beliefs {
		b := &w.beliefs[i]
		x := machine.NewHasher()
		x.String(b.Process)
		x.String(b.Owner)
		x.Int(b.Fence)
		x.Int(b.From)
		x.Bool(b.Open)
		if !b.Open {
			x.Int(b.To)
		}
		sp += machine.Finalize(x.Sum())
	}
	for i := range w.stops {
		s := &w.stops[i]
		x := machine.NewHasher()
		x.String(s.Process)
		x.String(string(s.Kind))
		x.Int(s.From)
		x.Bool(s.Open)
		if !s.Open {
			x.Int(s.To)
		}
		sp += machine.Finalize(x.Sum()) ^ 0x5bd1e995
	}
	h.Uint(sp)
	h.Int(int64(w.faultsLeft))
	h.Int(int64(w.advLeft))
	h.Int(int64(min(w.devLeft, 1<<30)))
	if w.mon != nil {
		w.mon.HashState(h)
	}
	return h.Sum()
}

func sumInts(xs []int64) uint64 {
	var s uint64
	for _, x := range xs {
		s += machine.Finalize(uint64(x) + 0x9e3779b97f4a7c15)
	}
	return s
}

func (w *World) hashNode(h *machine.Hasher, n *node) {
	h.Int(int64(n.paused))
	h.Bool(n.crashed)
	h.Int(int64(n.inc))
	h.String(n.process)
	h.String(n.owner)
	// The clock as a function of time from now on: its reading, its rate
	// and the fraction of a tick its drift carries (without it, two clocks
	// reading alike now with different fractions shared a digest, and the
	// explorer kept the futures of whichever came first: found by a
	// sharded exploration reaching 11% more states under clock-drift).
	h.Int(n.clock.Mono(w.now))
	h.Int(n.clock.ppm)
	h.Int(n.clock.phase(w.now))
	h.Int(int64(n.clock.frozen))
	h.Int(n.clock.wall)
	h.Int(n.wakeLocal)
	for _, m := range n.inbox {
		h.Uint(w.hashMsg(m))
	}
	h.Int(-1)
	for _, m := range n.held {
		h.Uint(w.hashMsg(m))
	}
	h.Int(-1)
	h.Int(n.armed)
	if n.armed > 0 {
		h.Int(n.armedAt)
	}
	h.Bool(n.believes)
	h.Int(n.fence)
	h.Bool(n.waiting)
	h.Bool(n.done)
	h.Int(int64(n.nextInc))
	h.Int(int64(n.cutCoord))
	h.Int(int64(n.cutRes))
	h.Int(int64(n.dropRenew))
	h.Int(n.extraDelay)
	h.Bool(n.belief >= 0)
	h.Bool(n.stop >= 0)
	h.Int(int64(n.freezes))
	if n.m != nil {
		hashMachine(h, n.m)
	}
	if c := n.client; c != nil {
		h.Int(int64(c.next))
		h.Bool(c.out)
		if c.out {
			h.Uint(c.outID)
			h.Uint(w.opHashOf(c.outOp))
			h.String(c.outO)
			h.Int(c.outF)
			h.Int(c.until)
		}
		h.Uint(c.nextID)
		for _, of := range c.banned {
			h.String(of.owner)
			h.Int(of.fence)
		}
		h.Int(-1)
		h.Int(c.lastGrant)
		h.String(c.waitFor)
		h.Bool(c.fired)
		h.Int(c.acquired)
	}
}

func (w *World) opHashOf(op int32) uint64 {
	if op < 0 {
		return 0
	}
	if w.hashing {
		return w.opHash[op]
	}
	return hashOp(&w.ops[op])
}

func (w *World) hashMsg(m int32) uint64 {
	e := &w.msgs[m]
	h := machine.NewHasher()
	h.Int(int64(e.from))
	h.Int(int64(e.to))
	h.Int(int64(e.inc))
	h.Bool(e.isReply)
	h.Bool(e.dup)
	h.Uint(w.opHashOf(e.op))
	hashRequest(h, &e.req)
	if e.isReply {
		hashReply(h, &e.rep)
	}
	return h.Sum()
}

func hashRequest(h *machine.Hasher, r *machine.Request) {
	h.Uint(r.ID)
	h.Int(int64(r.To))
	h.Int(int64(r.Kind))
	h.String(r.Key)
	h.String(r.Owner)
	h.Int(r.TTL)
	h.Int(r.Fence)
	h.String(r.Value)
}

func hashReply(h *machine.Hasher, r *machine.Reply) {
	h.Uint(r.ID)
	h.Bool(r.OK)
	h.Int(r.Fence)
	h.String(r.Value)
	h.Bool(r.HasValue)
	h.String(r.Err)
	h.Int(r.At)
}

func (w *World) hashEvent(e *event) uint64 {
	h := machine.NewHasher()
	h.Int(e.t)
	h.Int(int64(e.kind))
	switch e.kind {
	case evDeliver:
		h.Uint(w.hashMsg(e.arg))
	case evFault, evFaultEnd, evRestart:
		f := &w.plan[e.arg]
		h.String(string(f.Kind))
		h.String(f.Target)
		h.Int(f.At)
		h.Int(f.Duration)
		h.Int(f.Amount)
		h.String(f.Peer)
	default:
		h.Int(int64(e.node))
		if e.kind != evWake {
			h.Uint(e.gen) // resume, unfreeze: the incarnation
		}
	}
	return machine.Finalize(h.Sum())
}

// hashMachine digests a machine: its own StateHasher, the Clocked
// coordinator behind a ClockedCoordinator, or else its fields (HashValue).
func hashMachine(h *machine.Hasher, m any) {
	if c, ok := m.(machine.Coordinator); ok {
		if in := machine.Unwrap(c); in != nil {
			m = in
		}
	}
	if s, ok := m.(machine.StateHasher); ok {
		s.HashState(h)
		return
	}
	HashValue(h, m)
}

// HashValue digests any value by walking it with reflection: every field,
// exported or not, through pointers, slices, arrays and maps (a map's
// entries in an order of their own digests, so iteration order does not
// matter). Functions and channels contribute only their type. It is the
// explorer's digest of a third party's machine that does not implement
// machine.StateHasher: slower, and blind to state hidden behind a function
// value.
func HashValue(h *machine.Hasher, v any) {
	hashReflect(h, reflect.ValueOf(v), map[uintptr]bool{})
}

func hashReflect(h *machine.Hasher, v reflect.Value, seen map[uintptr]bool) {
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
		h.String(v.String())
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
		hashReflect(h, v.Elem(), seen)
		delete(seen, p)
	case reflect.Interface:
		if v.IsNil() {
			h.Int(0)
			return
		}
		h.String(v.Elem().Type().String())
		hashReflect(h, v.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			hashReflect(h, v.Field(i), seen)
		}
	case reflect.Slice, reflect.Array:
		h.Int(int64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			hashReflect(h, v.Index(i), seen)
		}
	case reflect.Map:
		h.Int(int64(v.Len()))
		sums := make([]uint64, 0, v.Len())
		it := v.MapRange()
		for it.Next() {
			x := machine.NewHasher()
			hashReflect(x, it.Key(), seen)
			hashReflect(x, it.Value(), seen)
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
		return machine.Finalize(uint64(m.Index)<<8 | 1)
	case MoveClient:
		return machine.Finalize(uint64(m.Index)<<8 | 2)
	}
	return w.hashEvent(&w.due[m.Index])
}
