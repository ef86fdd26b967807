// Package liveness measures recovery and handoff from what the lease's
// store applied (docs/specification.md §2, liveness-recovery and
// liveness-handoff): every driver that runs holders against a coordinator
// — the simulator online, as its coordinator applies each request;
// vclient as its lease server does — feeds one Meter the same events and
// reads the same measurements, so the two are judged by one definition.
//
// The definition. The lease is held by the owner of the store's latest
// applied grant until the expiry it applied (a renewal moves the expiry, a
// release clears the owner). A recovery is timed from the crash of a
// holder whose owner held the lease, unexpired on the store's clock, while
// another owner waited for it, to the next grant; a handoff from a release
// the store applied while another owner waited (or from a holder finishing
// its program still holding the lease, never releasing it) to the next
// grant. A measurement still pending when nobody is left waiting is
// dropped: the next grant would time a restart, not the lease. Crashes
// still pending when the run ends are the unrecovered ones.
//
// A Meter knows nothing of processes, clocks or messages: the driver says
// what the store applied, when, on which clock, and whether anyone waits.
// It is a value with slices, copied by CopyInto (the explorer copies world
// states), and decides nothing by map order.
package liveness

import (
	"slices"

	"github.com/leasecheck/leasecheck/faults"
)

// FaultKinds are the fault kinds under which the liveness bounds hold:
// none of them stops a waiting holder from asking, the coordinator from
// answering, or the network from carrying both within its delay bound
// (package runprop judges recovery and handoff only under them). Clock
// offsets and wall-clock steps do not touch the monotonic clocks leases are
// measured on; drift stays within rho, which the bounds include; a crash or
// an owner reuse is what recovery is about; an overrun, a dead renewal loop,
// lost renewals or a late second release change who holds the lease and
// when, not how fast a waiter gets it.
var FaultKinds = []faults.Kind{faults.ClockOffset, faults.ClockDrift, faults.ClockStep, faults.Crash,
	faults.OwnerReuse, faults.Overrun, faults.RenewDeath, faults.DropHeartbeats, faults.DoubleRelease}

// A Meter follows the store's lease and times recoveries and handoffs.
// The zero value is ready: no owner, nothing measured.
type Meter struct {
	owner  string
	expiry int64 // on the store's lease clock
	// the crashes and releases (or finishes) waiting for the next grant
	crashes, releases []int64
	m                 Measures
}

// Measures are a Meter's measurements.
type Measures struct {
	// Recoveries: ms from the crash of the lease's holder (while another
	// waited) to the next grant; RecoveryAt: when each crash was.
	Recoveries, RecoveryAt []int64
	// Unrecovered counts such crashes with no grant before the end;
	// UnrecoveredSince is when the earliest of them happened.
	Unrecovered      int
	UnrecoveredSince int64
	// Handoffs: ms from a release (or a holder finishing its program still
	// holding the lease) while another waited to the next grant;
	// HandoffAt: when each release was.
	Handoffs, HandoffAt []int64
}

// Granted: the store granted the lease to owner at now (ms of the run's
// time), until expiry on its lease clock. It ends every pending
// measurement.
func (m *Meter) Granted(now int64, owner string, expiry int64) {
	m.owner, m.expiry = owner, expiry
	for _, t := range m.crashes {
		m.m.Recoveries = append(m.m.Recoveries, now-t)
		m.m.RecoveryAt = append(m.m.RecoveryAt, t)
	}
	for _, t := range m.releases {
		m.m.Handoffs = append(m.m.Handoffs, now-t)
		m.m.HandoffAt = append(m.m.HandoffAt, t)
	}
	m.crashes, m.releases = m.crashes[:0], m.releases[:0]
}

// Renewed: the store renewed the lease until expiry (its lease clock).
func (m *Meter) Renewed(expiry int64) { m.expiry = expiry }

// Released: the store applied owner's release at now; waiting reports
// whether a holder other than except waits for the lease.
func (m *Meter) Released(now int64, owner string, waiting func(except string) bool) {
	m.owner = ""
	if waiting(owner) {
		m.releases = append(m.releases, now)
	}
}

// Crashed: a holder of owner crashed at now, when the store's lease clock
// read lease. A recovery is timed when owner held the lease, unexpired,
// while another waited.
func (m *Meter) Crashed(now int64, owner string, lease int64, waiting func(except string) bool) {
	if m.holds(owner, lease) && waiting(owner) {
		m.crashes = append(m.crashes, now)
	}
}

// Finished: a holder of owner finished its program at now (the store's
// lease clock at lease) without a release the store applied. When it
// still held the lease while another waited, the others wait out its TTL:
// a handoff is timed from now.
func (m *Meter) Finished(now int64, owner string, lease int64, waiting func(except string) bool) {
	if m.holds(owner, lease) && waiting(owner) {
		m.releases = append(m.releases, now)
	}
}

func (m *Meter) holds(owner string, lease int64) bool {
	return owner == m.owner && lease < m.expiry
}

// NobodyWaits drops the pending measurements: call it when nobody is left
// to take the lease over (after a crash, say).
func (m *Meter) NobodyWaits() {
	m.crashes, m.releases = m.crashes[:0], m.releases[:0]
}

// Owner returns the owner of the store's latest grant, "" after a release.
func (m *Meter) Owner() string { return m.owner }

// Expiry returns the expiry of that grant, on the store's lease clock.
func (m *Meter) Expiry() int64 { return m.expiry }

// Pending returns the crashes and the releases still waiting for a grant,
// in the order they came (for a state's digest). The caller must not
// modify them.
func (m *Meter) Pending() (crashes, releases []int64) { return m.crashes, m.releases }

// Timed returns the recoveries and handoffs timed so far, in ms (for a
// state's digest). The caller must not modify them.
func (m *Meter) Timed() (recoveries, handoffs []int64) { return m.m.Recoveries, m.m.Handoffs }

// Measured returns how many recoveries and handoffs have been timed so far.
func (m *Meter) Measured() (recoveries, handoffs int) {
	return len(m.m.Recoveries), len(m.m.Handoffs)
}

// Measures returns the measurements, the crashes still pending counted
// unrecovered. The slices are the Meter's, clipped: appends after this
// call never show through them.
func (m *Meter) Measures() Measures {
	out := m.m
	out.Recoveries, out.RecoveryAt = clip(out.Recoveries), clip(out.RecoveryAt)
	out.Handoffs, out.HandoffAt = clip(out.Handoffs), clip(out.HandoffAt)
	out.Unrecovered, out.UnrecoveredSince = len(m.crashes), 0
	if len(m.crashes) > 0 {
		out.UnrecoveredSince = m.crashes[0]
	}
	return out
}

// Clip returns a copy of m that shares its measurements, clipped, and has
// its own pending lists: m and the copy may both go on without either
// seeing the other's. The measurements are only ever appended to; the
// pending lists are emptied in place at each grant (their room reused),
// so sharing them would let one overwrite what the other still holds.
func (m *Meter) Clip() Meter {
	c := *m
	c.crashes, c.releases = slices.Clone(m.crashes), slices.Clone(m.releases)
	c.m.Recoveries, c.m.RecoveryAt = clip(c.m.Recoveries), clip(c.m.RecoveryAt)
	c.m.Handoffs, c.m.HandoffAt = clip(c.m.Handoffs), clip(c.m.HandoffAt)
	return c
}

// CopyInto returns an independent copy of m made in spare's slices (a
// Meter nobody uses any more: the explorer reuses a dropped world's
// buffers).
func (m *Meter) CopyInto(spare Meter) Meter {
	c := *m
	c.crashes = append(spare.crashes[:0], m.crashes...)
	c.releases = append(spare.releases[:0], m.releases...)
	c.m.Recoveries = append(spare.m.Recoveries[:0], m.m.Recoveries...)
	c.m.RecoveryAt = append(spare.m.RecoveryAt[:0], m.m.RecoveryAt...)
	c.m.Handoffs = append(spare.m.Handoffs[:0], m.m.Handoffs...)
	c.m.HandoffAt = append(spare.m.HandoffAt[:0], m.m.HandoffAt...)
	return c
}

func clip(s []int64) []int64 { return s[:len(s):len(s)] }
