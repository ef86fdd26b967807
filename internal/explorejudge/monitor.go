package explorejudge

import (
	"errors"
	"slices"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/internal/statehash"
	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// monitor is the explorer's cheap per-state judge (an explore.Monitor). It flags
// a state where a property may have just been violated; the full judges
// (checker.Check, runprop.Judge) confirm before anything is reported. Its
// flags are complete: a state whose history a full judge would find
// violated is flagged at that state or earlier on its path, so a
// breadth-first search that judges every flagged state finds the shortest
// violating path.
//
//   - linearizable: it steps the specification — the checker's timed model
//     (internal/timed), never the machines under test — by every request
//     the servers apply, in the order and at the lease-clock reading they
//     were applied, with the answer they gave. While the model explains
//     every answer, that order is a linearization (it respects real time and
//     each process's order, and every outcome is the semantics'), so the
//     history is linearizable; the first answer it cannot explain is
//     flagged.
//     After a difference the full checker may still find another order
//     (ties, unknown outcomes): the path is then judged in full at every
//     later state.
//   - single-writer-per-fence, fence-monotonic: checked on every return of
//     a grant or an accepted write against the operations returned before
//     it was called (the checker's precedence), over-approximately.
//   - stale-write: checked on every return of an accepted write, against
//     the accepted writes of other owners returned before it, in both
//     roles (staleWritePair), over-approximately.
//   - stop-on-renew-failure: checked on every write sent, against the same
//     owner's renews that failed or went unanswered before it.
//   - the run properties: exclusive-belief whenever two holders believe at
//     once (while a holder of an older grant runs), recovery and handoff
//     whenever one is timed, renewal whenever a renew is refused or
//     overdue or a process acquires a second time. Only a crash never
//     recovered from shows at the end of a path alone.
type monitor struct {
	// spec is the specification's state after every request applied so
	// far: per key, the set of states of the checker's timed model
	// (internal/timed) the applied order can be in. It never touches the
	// machines under test, so a bug planted in their source is not planted
	// in their judge.
	//
	// The first key's states are inline (most scenarios have one key: a
	// copy copies them with the monitor, no allocation); the rest are in
	// spec.
	spec0    specKey
	hasSpec0 bool
	spec     []specKey
	owners   []string // interned owners, append-only (clipped on Clone)
	rules    timed.Rules
	ruled    bool
	diverged bool // the applied order left the specification: judge in full
	blind    bool // explore.MonitorConfig.Blind
	// kept is the digest of diverged and spec (what HashState digests),
	// made when first asked and dropped by Applied, the one writer of
	// either (0: not kept). With verify (explore.MonitorConfig.Verify) it is
	// made afresh every time, and stale says a kept one differed: a bug in
	// leasecheck, which Err reports.
	kept                 uint64
	verify, stale        bool
	flags                []string
	ever                 uint64 // every property flagged on this path (bit: campaign.Properties index)
	recoveries, handoffs int    // timed so far (sim.World.Measured)
	// what Take saw of the beliefs last time: exclusive-belief needs
	// judging only where an overlap may have grown unexcused
	olderStopped bool
	version      int
	believers    int
	// renews sent and not answered yet (liveness-renewal: one unanswered
	// past its timeout is a lost lease)
	pending []int32
}

// specKey is one key's specification states: most of the time one, kept
// inline (a slice of states a request applied was a tenth of the objects
// a depth-first state allocated); two or more in more, shared with copies
// (Applied replaces it, never writes it in place).
type specKey struct {
	key  string
	one  [1]timed.State
	more []timed.State
}

// states returns k's states, for reading.
func (k *specKey) states() []timed.State {
	if k.more != nil {
		return k.more
	}
	return k.one[:]
}

func (m *monitor) flag(p string) {
	m.ever |= propertyBit(p)
	for _, f := range m.flags {
		if f == p {
			return
		}
	}
	m.flags = append(m.flags, p)
}

// Take returns the flags raised since the last Take and clears them.
func (m *monitor) Take(w *sim.World) []string {
	// An overlap of beliefs grows unexcused only while a holder of an older
	// grant runs (runprop's exception excuses it while it is stopped), so
	// it is judged whenever two believe, or did at the previous state (the
	// step may have ended the overlap), and one of the older ones runs now
	// or ran then, or the beliefs changed.
	b, older, v := w.Believers()
	if (b >= 2 || m.believers >= 2) && (!older || !m.olderStopped || v != m.version) {
		m.flag(runprop.ExclusiveBelief)
	}
	if v != m.version && b >= m.believers {
		// A belief began or changed its fence (not only ended): whether it
		// names the fence its holder was granted (belief-fence) is judged
		// then.
		m.flag(runprop.BeliefFence)
	}
	m.olderStopped, m.version, m.believers = older, v, b
	// A recovery and a handoff are each judged when one is timed. (Both
	// used to raise liveness-recovery alone: the full judges then found
	// a slow handoff the monitor had never flagged, and explore said it
	// was a bug in leasecheck, exit 2, on the forgets-to-release and
	// backoff-uncapped mutants.)
	if rec, hand := w.Measured(); rec != m.recoveries || hand != m.handoffs {
		if rec != m.recoveries {
			m.flag(runprop.LivenessRecovery)
		}
		if hand != m.handoffs {
			m.flag(runprop.LivenessHandoff)
		}
		m.recoveries, m.handoffs = rec, hand
	}
	if m.diverged {
		m.flag(checker.Linearizable)
	}
	if len(m.pending) > 0 {
		now := w.Now()
		timeout := max(w.Scenario().TTL/3, 1) // the shortest a holder may give up after: flagged early, judged in full
		for i := 0; i < len(m.pending); i++ {
			o := w.Op(int(m.pending[i]))
			if o.Returned || now >= o.Call+timeout {
				if !o.Returned {
					m.flag(runprop.LivenessRenewal)
				}
				m.pending = append(m.pending[:i], m.pending[i+1:]...)
				i--
			}
		}
	}
	f := m.flags
	m.flags = nil
	return f
}

func (m *monitor) Clone() sim.Monitor {
	c := *m
	// The first key is copied with the monitor, the keys after it here. A
	// key's states beyond its first are shared: Applied replaces them,
	// never writes them in place.
	c.spec = slices.Clone(m.spec)
	c.owners = slices.Clip(m.owners) // shared, append-only: an append copies
	c.flags = nil
	c.pending = slices.Clone(m.pending)
	return &c
}

func (m *monitor) HashState(h *machine.Hasher) { m.HashStateRenamed(h, nil) }

// HashStateRenamed digests the monitor's state with every holder name
// renamed (sim.RenamingHasher, for the symmetry reduction; nil: as it is,
// by its kept digest: the specification's states were a twentieth of the
// instructions a state's digest took, and change only when a request is
// applied).
func (m *monitor) HashStateRenamed(h *machine.Hasher, rename func(string) string) {
	if rename != nil {
		m.hashSpec(h, rename)
		return
	}
	if m.kept == 0 || m.verify {
		var x statehash.Hasher
		x.Reset()
		m.hashSpec((*machine.Hasher)(&x), nil)
		fresh := x.Sum() | 1 // never 0, "not kept"
		if m.kept != 0 && m.kept != fresh {
			m.stale = true
		}
		m.kept = fresh
	}
	h.Uint(m.kept)
}

func (m *monitor) hashSpec(h *machine.Hasher, rename func(string) string) {
	str := func(s string) string {
		if rename == nil {
			return s
		}
		return rename(s)
	}
	h.Bool(m.diverged)
	if m.diverged { // once diverged, the specification's state no longer matters
		return
	}
	for i := -1; i < len(m.spec); i++ {
		k := &m.spec0
		if i >= 0 {
			k = &m.spec[i]
		} else if !m.hasSpec0 {
			continue
		}
		h.String(str(k.key))
		states := k.states()
		h.Int(int64(len(states)))
		for i := range states {
			s := &states[i]
			if s.Holder == timed.NoOwner {
				h.String("")
			} else {
				h.String(str(m.owners[s.Holder]))
			}
			h.Bool(s.Data != timed.NoValue)
			h.String(str(s.Data.Value()))
			h.Int(s.Fence)
			h.Int(s.Highest)
			h.Int(s.NowLo)
			h.Int(s.ExpLo)
			h.Int(s.ExpHi)
			h.Bool(s.Loose)
		}
	}
}

// Applied steps the specification by req with the answer the servers gave,
// at the coordinator's lease-clock reading rep.At (the history's exact
// "at"), and flags linearizable when no state of the timed model explains
// it. While every answer is explained, the applied order is a
// linearization the checker accepts: it respects real time (the servers
// apply a request between its call and its return) and each process's
// order, and each step is the checker's own model stepping an op of the
// history as recorded — or, for an op whose answer was lost, as it was
// actually answered, one of the outcomes the checker tries for it.
func (m *monitor) Applied(w *sim.World, resource bool, req *machine.Request, rep *machine.Reply) {
	if m.diverged || m.blind {
		return
	}
	m.kept = 0
	if !m.ruled {
		m.rules, m.ruled = timed.Rules{Semantics: w.Scenario().Sem()}, true
	}
	in := timed.Input{Kind: req.Kind, Owner: m.intern(req.Owner), Value: timed.NoValue, TTL: req.TTL, Fence: req.Fence,
		OK: rep.OK, Lo: rep.At, Hi: rep.At}
	if rep.TTL > 0 {
		in.TTL = rep.TTL // as granted, as the history records it
	}
	switch req.Kind {
	case model.Acquire:
		in.Fence = 0
		if rep.OK {
			in.Fence = rep.Fence
		}
	case model.Write:
		in.Value = timed.ValueOf(req.Value)
	case model.Read:
		if rep.HasValue {
			in.Value = timed.ValueOf(rep.Value)
		}
	}
	k := m.specOf(req.Key)
	// The states are made on the stack; a key keeps one inline, more in a
	// slice of their own (copies share the old one).
	var nextBuf, stepBuf [8]timed.State
	next := nextBuf[:0]
	for _, s := range k.states() {
		for _, t := range timed.StepApplied(m.rules, s, &in, stepBuf[:0]) {
			if !slices.Contains(next, t) {
				next = append(next, t)
			}
		}
	}
	switch len(next) {
	case 0:
		m.diverged = true
		m.flag(checker.Linearizable)
	case 1:
		k.one[0], k.more = next[0], nil
	default:
		k.more = slices.Clone(next)
	}
}

func (m *monitor) intern(owner string) int32 {
	if i := slices.Index(m.owners, owner); i >= 0 {
		return int32(i)
	}
	m.owners = append(m.owners, owner)
	return int32(len(m.owners) - 1)
}

// specOf returns key's states for writing.
func (m *monitor) specOf(key string) *specKey {
	switch {
	case !m.hasSpec0:
		m.spec0, m.hasSpec0 = specKey{key: key, one: [1]timed.State{timed.InitialState()}}, true
		return &m.spec0
	case m.spec0.key == key:
		return &m.spec0
	}
	for i := range m.spec {
		if m.spec[i].key == key {
			return &m.spec[i]
		}
	}
	m.spec = append(m.spec, specKey{key: key, one: [1]timed.State{timed.InitialState()}})
	return &m.spec[len(m.spec)-1]
}

// properties is campaign.Properties, made once: a flag asked for it
// anew, an allocation each time.
var properties = campaign.Properties()

func (m *monitor) Ever() uint64   { return m.ever }
func (m *monitor) Diverged() bool { return m.diverged }

var errStale = errors.New("explore: the monitor's kept digest is stale (its specification states written past Applied): a bug in leasecheck")

// Err reports a stale kept digest (with verify).
func (m *monitor) Err() error {
	if m.stale {
		return errStale
	}
	return nil
}

var _ explore.Monitor = (*monitor)(nil)

// propertyBit is p's bit in monitor.ever.
func propertyBit(p string) uint64 {
	if i := slices.Index(properties, p); i >= 0 {
		return 1 << uint(i)
	}
	return 0
}

// Called flags a write sent after a renew of the same owner under the same
// fence failed or went unanswered (stop-on-renew-failure).
func (m *monitor) Called(w *sim.World, op int) {
	o := w.Op(op)
	if o.Kind == model.Renew {
		m.pending = append(m.pending, int32(op))
	}
	if o.Kind != model.Write {
		return
	}
	var latest int64 // the owner's latest grant, for fence-less renews
	for i := 0; i < op; i++ {
		r := w.Op(i)
		if r.Owner != o.Owner || r.Key != o.Key {
			continue
		}
		if r.Kind == model.Acquire && r.Returned && r.OK {
			latest = max(latest, r.Fence)
		}
		if r.Kind != model.Renew || r.Returned && r.OK {
			continue
		}
		f := r.Fence
		if f == 0 {
			f = latest
		}
		if f == o.Fence && (r.Process == o.Process || r.Returned && o.Call > r.Return) {
			m.flag(checker.StopOnRenewFailure)
			return
		}
	}
}

// Returned flags a grant whose fence is not above one returned before it
// was called, or an accepted write whose fence is below one returned before
// it, or whose owner was not granted its fence (or shares it with another
// writer).
func (m *monitor) Returned(w *sim.World, op int) {
	o := w.Op(op)
	if !o.OK {
		if o.Kind == model.Renew {
			m.flag(runprop.LivenessRenewal) // a lost lease, where renewals must keep it
		}
		return
	}
	switch o.Kind {
	case model.Acquire:
		for i := range w.NumOps() {
			if a := w.Op(i); i != op && a.Kind == model.Acquire && a.Process == o.Process && a.Returned && a.OK {
				m.flag(runprop.LivenessRenewal) // acquired a second time: it had lost the lease
				break
			}
		}
		for i := range w.NumOps() {
			a := w.Op(i)
			if i != op && a.Kind == model.Acquire && a.Returned && a.OK && a.Key == o.Key && a.Return < o.Call && a.Fence >= o.Fence {
				m.flag(checker.FenceMonotonic)
				return
			}
		}
	case model.Write:
		granted := false
		for i := range w.NumOps() {
			a := w.Op(i)
			if i == op || a.Key != o.Key || !a.Returned || !a.OK {
				continue
			}
			switch a.Kind {
			case model.Acquire:
				if a.Fence == o.Fence && a.Owner == o.Owner {
					granted = true
				}
			case model.Write:
				if a.Return < o.Call && a.Fence > o.Fence {
					m.flag(checker.FenceMonotonic)
				}
				if a.Fence == o.Fence && a.Owner != o.Owner {
					m.flag(checker.SingleWriterPerFence)
				}
			}
		}
		if !granted {
			m.flag(checker.SingleWriterPerFence)
		}
		if staleWritePair(w, op) {
			m.flag(checker.StaleWrite)
		}
	}
}

// staleWritePair reports whether the accepted write op, just returned, and
// another accepted write of another owner's on its key may be a stale write
// and the later holder's (checker/stale.go): the one's writer term — the
// highest fence of its owner's grants returned by its call, or granted
// earlier to its process — above every fence of the other's owner's
// grants called before the other returned — and, where the coordinator
// recorded when it applied both, the one with the higher term applied
// first (the full judge needs the later holder's write accepted before the
// stale one: by real time, or by the coordinator's clock windows, either of
// which puts its applied time first). It drops the unanswered acquires that
// clear a write, so it over-approximates: a pair the full judge finds stale
// at any later state passes here when the later of the two returns (grants
// returned since only raise the other's fences, and both applied times are
// known by then), and the full judges decide.
func staleWritePair(w *sim.World, op int) bool {
	o := w.Op(op)
	// term: op i's writer term; mine: the highest fence of op i's owner's
	// grants called before it returned.
	term := func(i int) int64 {
		x := w.Op(i)
		var t int64
		for j := range w.NumOps() {
			g := w.Op(j)
			if g.Kind == model.Acquire && g.Returned && g.OK && g.Key == x.Key && g.Owner == x.Owner &&
				(g.Return <= x.Call || g.Process == x.Process && g.Call < x.Call) {
				t = max(t, g.Fence)
			}
		}
		return t
	}
	mine := func(i int) int64 {
		x := w.Op(i)
		var t int64
		for j := range w.NumOps() {
			g := w.Op(j)
			if g.Kind == model.Acquire && g.Returned && g.OK && g.Key == x.Key && g.Owner == x.Owner && g.Call < x.Return {
				t = max(t, g.Fence)
			}
		}
		return t
	}
	var myTerm, myMine int64 = -1, -1
	for i := range w.NumOps() {
		a := w.Op(i)
		if i == op || a.Kind != model.Write || !a.Returned || !a.OK || a.Key != o.Key || a.Owner == o.Owner {
			continue
		}
		if myTerm < 0 {
			myTerm, myMine = term(op), mine(op)
		}
		ordered := a.HasAt && o.HasAt
		if t := term(i); t > 0 && t > myMine && (!ordered || a.At < o.At) {
			return true // op may be the stale one
		}
		if myTerm > 0 && myTerm > mine(i) && (!ordered || o.At < a.At) {
			return true // a may be
		}
	}
	return false
}
