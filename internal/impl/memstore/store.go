package memstore

import (
	"fmt"
	"strconv"

	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// entry is the per-key state of lease.py's LeaseStore.
type entry struct {
	holder  string
	held    bool // holder != None
	expiry  int64
	fence   int64
	data    string
	written bool // data != None
	// for BugSameTickGrant only: the reading at which the lease was last
	// found free, plus one (0: never)
	freeAt int64
}

// Store is the reference coordinator: per key, holder / expiry / fence / data,
// exactly as lease.py's LeaseStore, with many independent keys. The zero value
// is not usable; call New. A Store is not safe for concurrent use.
//
// A Store built by WithBugs has planted bugs switched in (bugs.go): each is
// one decision of the reference changed, at a line marked BUG. The planted-bug
// mutants of internal/impl/mutants are these switches, never copies of this code.
type Store struct {
	keys table[entry]
	bugs Bug
	wall int64 // the wall clock, for BugWallClock only
}

// New returns an empty Store: every key has no holder, expiry 0, fence 0, no data.
func New() *Store { return &Store{} }

// WithBugs returns an empty Store with the planted bugs b switched in.
func WithBugs(b Bug) *Store { s := New(); s.bugs = b; return s }

// Bugs returns the planted bugs switched in (0 for the reference).
func (s *Store) Bugs() Bug { return s.bugs }

// get returns the key's entry, creating it on first use.
func (s *Store) get(key string) *entry { return s.keys.get(key) }

// clock is the reading the store decides by: now, its lease clock — or,
// with BugWallClock, its wall clock.
func (s *Store) clock(now int64) int64 {
	if s.bugs&BugWallClock != 0 {
		// BUG (wall-clock-coordinator): leases measured on the wall clock,
		// which a clock step moves forward or back; the article: never trust
		// one party's local clock.
		return s.wall
	}
	return now
}

// live reports whether a lease with this expiry is still live at now.
func (s *Store) live(now, expiry int64) bool {
	if s.bugs&BugExpiryOffByOne != 0 {
		// BUG (expiry-off-by-one): "now <= expiry" where lease.py says
		// "now < expiry": the lease lives one tick too long. At exactly the
		// expiry a write or renew is accepted and an acquire refused.
		return now <= expiry
	}
	return now < expiry
}

// Acquire succeeds when the key has no holder or now >= expiry:
// holder=owner, expiry=now+ttl, fence+=1; returns the new fence.
// On failure it returns (0, false) and changes nothing.
func (s *Store) Acquire(key, owner string, ttl, now int64) (fence int64, ok bool) {
	now = s.clock(now)
	e := s.get(key)
	free := !e.held || !s.live(now, e.expiry)
	switch {
	case s.bugs&BugSameTickGrant != 0 && e.freeAt == now+1:
		// BUG (same-tick-double-grant): "is it free?" is answered once per
		// tick of the lease clock and remembered, a cache meant to spare
		// work under contention: a second acquire in the same tick is told
		// the lease is free although the first just took it.
		free = true
	case s.bugs&BugReentrantAcquire != 0 && e.held && e.holder == owner:
		// BUG (reentrant-acquire): the holder asking again is granted again,
		// as a reentrant lock would, with a new fence and a new expiry; the
		// lease of lease.py is no reentrant lock: acquire is refused while
		// the lease is live, to its holder too.
		free = true
	case s.bugs&BugGreedyGrant != 0:
		// BUG (greedy-grant): every acquire is granted, live lease or not:
		// two holders.
		free = true
	case s.bugs&BugNoExpiry != 0:
		// BUG (no-expiry): a lock, not a lease. Only a release frees it, so
		// a holder that crashed without releasing blocks everyone forever.
		free = !e.held
	}
	if !free {
		return 0, false
	}
	if s.bugs&BugSameTickGrant != 0 {
		e.freeAt = now + 1
	}
	takeover := e.held
	e.holder, e.held = owner, true
	e.expiry = now + ttl
	if !(s.bugs&BugFenceNotBumped != 0 && takeover) {
		// (BUG fence-not-bumped skips this on a takeover: the new holder and
		// the stale one share a token, so storage cannot tell them apart.)
		e.fence++
	}
	return e.fence, true
}

// Renew succeeds when holder==owner and now < expiry (and, when fence != 0,
// fence == current fence): expiry = now+ttl.
func (s *Store) Renew(key, owner string, ttl, fence, now int64) bool {
	now = s.clock(now)
	e := s.keys.lookup(key)
	owned := e != nil && e.held && e.holder == owner
	switch {
	case e == nil || !e.held:
	case s.bugs&BugRenewTrustsFence != 0 && fence != 0 && fence == e.fence:
		// BUG (renew-trusts-fence): a renew presenting the current fence is
		// taken as the holder's: the owner is not compared. Anyone who saw
		// the fence keeps the lease alive.
		owned = true
	case s.bugs&BugFencelessRenew != 0 && fence == 0:
		// BUG (fenceless-renew-anyone): a renew without a fence is a legacy
		// heartbeat, extended for whoever sends it.
		owned = true
	}
	if !owned {
		return false
	}
	live := s.live(now, e.expiry)
	if s.bugs&BugRenewOffByOne != 0 {
		// BUG (renew-off-by-one): the renew's own deadline check is
		// "now <= expiry": a renew arriving on the expiry tick revives a
		// lease that has just run out (acquire and write compare right).
		live = now <= e.expiry
	}
	if !live && s.bugs&BugRenewAfterExpiry == 0 {
		// (BUG renew-after-expiry skips this check: a holder that paused
		// past its expiry revives a lease the article says is gone.)
		return false
	}
	if fence != 0 && s.staleFence(fence, e.fence) {
		return false
	}
	e.expiry = now + ttl
	return true
}

// staleFence reports whether fence is not the current one.
func (s *Store) staleFence(fence, current int64) bool {
	if s.bugs&BugFutureFence != 0 {
		// BUG (future-fence-accepted): the fence is compared for being
		// stale only ("fence < current"), so one from the future — never
		// granted — passes.
		return fence < current
	}
	return fence != current
}

// Release succeeds when holder==owner (and, when fence != 0, fence == current
// fence): holder = none; expiry and fence unchanged. There is no deadline
// check, as in lease.py: an expired holder that nobody replaced may still release.
func (s *Store) Release(key, owner string, fence int64) bool {
	e := s.keys.lookup(key)
	if e == nil || !e.held {
		return false
	}
	trusted := s.bugs&BugReleaseTrustsFence != 0 && fence != 0 && fence == e.fence
	// (BUG release-trusts-fence: a release presenting the current fence
	// frees the lease whoever sends it; the owner is not compared.)
	if s.bugs&BugReleaseAnyone == 0 && !trusted && (e.holder != owner || fence != 0 && s.staleFence(fence, e.fence)) {
		// (BUG release-twice-frees-next skips this check: a holder that
		// releases twice frees, the second time, the next holder's lease.)
		return false
	}
	if s.bugs&BugWriteAfterRelease != 0 {
		// BUG (write-after-release): a release clears the "held" flag but
		// keeps the holder's name, and a write checks only the name (see
		// Write): the releaser's late write is accepted.
		e.held = false
		return true
	}
	e.holder, e.held = "", false
	return true
}

// Write stores value when holder==owner and now < expiry (else a
// *LeaseLostError with Reason "not-holder" or "expired"), and then fence ==
// current fence (else Reason "stale-fence"). The order of checks is lease.py's.
func (s *Store) Write(key, owner string, fence int64, value string, now int64) error {
	now = s.clock(now)
	e := s.keys.lookup(key)
	if e == nil || !e.held && s.bugs&BugWriteAfterRelease == 0 || e.holder != owner {
		// (BUG write-after-release compares the name only, kept by release.)
		return &LeaseLostError{Key: key, Owner: owner, Reason: ReasonNotHolder, Now: now, Fence: fence, Current: s.Fence(key)}
	}
	if !s.live(now, e.expiry) && s.bugs&BugWriteSkipsExpiry == 0 {
		// (BUG write-skips-expiry skips this check: a holder back from a
		// pause writes after its lease expired.)
		return &LeaseLostError{Key: key, Owner: owner, Reason: ReasonExpired, Now: now, Fence: fence, Current: e.fence}
	}
	if s.staleFence(fence, e.fence) {
		return &LeaseLostError{Key: key, Owner: owner, Reason: ReasonStaleFence, Now: now, Fence: fence, Current: e.fence}
	}
	e.data, e.written = value, true
	return nil
}

// Read returns the key's data; ok is false when nothing was written yet.
func (s *Store) Read(key string) (value string, ok bool) {
	if e := s.keys.lookup(key); e != nil && e.written {
		return e.data, true
	}
	return "", false
}

// Fence returns the key's fence counter: the number of grants so far.
func (s *Store) Fence(key string) int64 {
	if e := s.keys.lookup(key); e != nil {
		return e.fence
	}
	return 0
}

// Why says why the op of kind k by owner, presenting fence, at now, was
// refused (machine.Explainer): the reason constants of the history's
// "error" field, worked out from the state in one place for every driver.
func (s *Store) Why(k model.Kind, key, owner string, fence, now int64) string {
	now = s.clock(now)
	e := s.keys.lookup(key)
	switch {
	case k == model.Acquire:
		return ReasonHeld
	case e == nil || !e.held || e.holder != owner:
		return ReasonNotHolder
	case k != model.Release && !s.live(now, e.expiry):
		return ReasonExpired
	}
	return ReasonStaleFence
}

// Crash is what a coordinator restart does to the store (machine.Crasher):
// nothing — the lease table is durable — unless BugForgetOnRestart.
func (s *Store) Crash() {
	if s.bugs&BugForgetOnRestart == 0 {
		return
	}
	// BUG (forget-on-restart): the lease table lives in memory only. After a
	// restart the coordinator knows of no holder and grants at once, while
	// the old holder still (rightly) believes its lease runs for up to a TTL.
	// The fence counter is kept, so fencing alone does not reveal it.
	s.keys.each(func(e *entry) { e.holder, e.held, e.expiry = "", false, 0 })
}

// SetWall receives the coordinator's wall clock before every request
// (machine.WallClockUser). Only BugWallClock reads it.
func (s *Store) SetWall(w int64) { s.wall = w }

// Holder returns the key's holder and expiry and whether there is a holder.
// A holder whose lease has expired is still reported (held=true) until
// someone acquires or it releases, as in lease.py. Without a holder, expiry is
// still the last deadline set.
func (s *Store) Holder(key string) (owner string, expiry int64, held bool) {
	if e := s.keys.lookup(key); e != nil {
		return e.holder, e.expiry, e.held
	}
	return "", 0, false
}

// Snapshot returns a deep copy of the whole state (for a coordinator crash
// that keeps its durable state across restart).
func (s *Store) Snapshot() *Store {
	return &Store{keys: s.keys.clone(), bugs: s.bugs, wall: s.wall}
}

// Restore replaces s's whole state with a deep copy of snap's.
func (s *Store) Restore(snap *Store) {
	c := snap.Snapshot()
	s.keys = c.keys
}

// Reasons carried by LeaseLostError and returned by Why: machine's, spelled
// once.
const (
	ReasonHeld       = machine.ReasonHeld       // acquire: a live lease is held
	ReasonNotHolder  = machine.ReasonNotHolder  // holder != owner (or no holder)
	ReasonExpired    = machine.ReasonExpired    // holder == owner but now >= expiry
	ReasonStaleFence = machine.ReasonStaleFence // fence != current fence
)

// LeaseLostError is Store.Write's rejection. Error() mirrors lease.py's
// messages: "lease expired for A at t=10" (for both not-holder and expired,
// as lease.py does not distinguish them) and "stale token 1 != 2".
type LeaseLostError struct {
	Key, Owner string
	Reason     string
	Now        int64
	Fence      int64 // the fence presented
	Current    int64 // the key's current fence
}

// RefusalReason is the reason for machine.ClockedCoordinator.
func (e *LeaseLostError) RefusalReason() string { return e.Reason }

func (e *LeaseLostError) Error() string {
	if e.Reason == ReasonStaleFence {
		return "stale token " + strconv.FormatInt(e.Fence, 10) + " != " + strconv.FormatInt(e.Current, 10)
	}
	return "lease expired for " + e.Owner + " at t=" + strconv.FormatInt(e.Now, 10)
}

// Resource is fenced storage (docs/specification.md §1): separate from the coordinator,
// it knows no deadlines, only the highest fence it has accepted per key. It
// is a machine.Resource itself.
type Resource struct {
	keys table[resEntry]
	bugs Bug
}

type resEntry struct {
	highest int64
	data    string
}

// NewResource returns an empty Resource.
func NewResource() *Resource { return &Resource{} }

// ResourceWithBugs returns an empty Resource with planted bugs switched in
// (only BugNoFenceCheck applies to a resource).
func ResourceWithBugs(b Bug) *Resource { r := NewResource(); r.bugs = b; return r }

// Write is accepted iff fence >= 1 and fence >= the highest fence accepted so
// far for the key; then data = value, highest = fence. Else *StaleFenceError.
func (r *Resource) Write(key string, fence int64, value string) error {
	e := r.keys.lookup(key)
	var highest int64
	if e != nil {
		highest = e.highest
	}
	stale := fence < highest
	if r.bugs&BugNoFenceCheck != 0 {
		// BUG (write-without-fence-check): the write is not checked against
		// the highest fence seen: a writer back from a pause overwrites its
		// successor's data with a stale token, the article's silent
		// last-writer-wins.
		stale = false
	}
	if fence < 1 || stale {
		return &StaleFenceError{Key: key, Fence: fence, Highest: highest}
	}
	if e == nil {
		e = r.keys.get(key)
	}
	e.highest, e.data = max(highest, fence), value
	return nil
}

// Apply implements machine.Resource: writes and reads; anything else is
// refused as unsupported.
func (r *Resource) Apply(q *machine.Request) machine.Reply {
	rep := machine.Reply{ID: q.ID}
	switch q.Kind {
	case model.Write:
		if rep.OK = r.Write(q.Key, q.Fence, q.Value) == nil; !rep.OK {
			rep.Err = ReasonStaleFence
		}
	case model.Read:
		rep.Value, rep.HasValue = r.Read(q.Key)
		rep.OK = true
	default:
		rep.Err = "unsupported"
	}
	return rep
}

// Read returns the key's data; ok is false when nothing was accepted yet.
func (r *Resource) Read(key string) (value string, ok bool) {
	if e := r.keys.lookup(key); e != nil {
		return e.data, true
	}
	return "", false
}

// Highest returns the highest fence the resource accepted for key (0 if none).
func (r *Resource) Highest(key string) int64 {
	if e := r.keys.lookup(key); e != nil {
		return e.highest
	}
	return 0
}

// StaleFenceError is Resource.Write's rejection.
type StaleFenceError struct {
	Key     string
	Fence   int64 // the fence presented
	Highest int64 // the highest fence accepted so far
}

func (e *StaleFenceError) Error() string {
	if e.Fence < 1 {
		return fmt.Sprintf("fence %d was never granted (key %q)", e.Fence, e.Key)
	}
	return fmt.Sprintf("stale fence %d < %d (key %q)", e.Fence, e.Highest, e.Key)
}
