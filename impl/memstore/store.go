package memstore

import (
	"fmt"
	"strconv"
)

// entry is the per-key state of lease.py's LeaseStore.
type entry struct {
	holder  string
	held    bool // holder != None
	expiry  int64
	fence   int64
	data    string
	written bool // data != None
}

// Store is the reference coordinator: per key, holder / expiry / fence / data,
// exactly as lease.py's LeaseStore, with many independent keys. The zero value
// is not usable; call New. A Store is not safe for concurrent use.
type Store struct {
	keys map[string]*entry
}

// New returns an empty Store: every key has no holder, expiry 0, fence 0, no data.
func New() *Store { return &Store{keys: make(map[string]*entry)} }

// get returns the key's entry, creating it on first use.
func (s *Store) get(key string) *entry {
	e := s.keys[key]
	if e == nil {
		e = &entry{}
		s.keys[key] = e
	}
	return e
}

// Acquire succeeds when the key has no holder or now >= expiry:
// holder=owner, expiry=now+ttl, fence+=1; returns the new fence.
// On failure it returns (0, false) and changes nothing.
func (s *Store) Acquire(key, owner string, ttl, now int64) (fence int64, ok bool) {
	e := s.get(key)
	if !e.held || now >= e.expiry {
		e.holder, e.held = owner, true
		e.expiry = now + ttl
		e.fence++
		return e.fence, true
	}
	return 0, false
}

// Renew succeeds when holder==owner and now < expiry (and, when fence != 0,
// fence == current fence): expiry = now+ttl.
func (s *Store) Renew(key, owner string, ttl, fence, now int64) bool {
	e := s.keys[key]
	if e == nil || !e.held || e.holder != owner || now >= e.expiry {
		return false
	}
	if fence != 0 && fence != e.fence {
		return false
	}
	e.expiry = now + ttl
	return true
}

// Release succeeds when holder==owner (and, when fence != 0, fence == current
// fence): holder = none; expiry and fence unchanged. There is no deadline
// check, as in lease.py: an expired holder that nobody replaced may still release.
func (s *Store) Release(key, owner string, fence int64) bool {
	e := s.keys[key]
	if e == nil || !e.held || e.holder != owner {
		return false
	}
	if fence != 0 && fence != e.fence {
		return false
	}
	e.holder, e.held = "", false
	return true
}

// Write stores value when holder==owner and now < expiry (else a
// *LeaseLostError with Reason "not-holder" or "expired"), and then fence ==
// current fence (else Reason "stale-fence"). The order of checks is lease.py's.
func (s *Store) Write(key, owner string, fence int64, value string, now int64) error {
	e := s.keys[key]
	if e == nil || !e.held || e.holder != owner {
		return &LeaseLostError{Key: key, Owner: owner, Reason: ReasonNotHolder, Now: now, Fence: fence, Current: s.Fence(key)}
	}
	if now >= e.expiry {
		return &LeaseLostError{Key: key, Owner: owner, Reason: ReasonExpired, Now: now, Fence: fence, Current: e.fence}
	}
	if fence != e.fence {
		return &LeaseLostError{Key: key, Owner: owner, Reason: ReasonStaleFence, Now: now, Fence: fence, Current: e.fence}
	}
	e.data, e.written = value, true
	return nil
}

// Read returns the key's data; ok is false when nothing was written yet.
func (s *Store) Read(key string) (value string, ok bool) {
	if e := s.keys[key]; e != nil && e.written {
		return e.data, true
	}
	return "", false
}

// Fence returns the key's fence counter: the number of grants so far.
func (s *Store) Fence(key string) int64 {
	if e := s.keys[key]; e != nil {
		return e.fence
	}
	return 0
}

// Holder returns the key's holder and expiry and whether there is a holder.
// A holder whose lease has expired is still reported (held=true) until
// someone acquires or it releases, as in lease.py. Without a holder, expiry is
// still the last deadline set.
func (s *Store) Holder(key string) (owner string, expiry int64, held bool) {
	if e := s.keys[key]; e != nil {
		return e.holder, e.expiry, e.held
	}
	return "", 0, false
}

// Snapshot returns a deep copy of the whole state (for a coordinator crash
// that keeps its durable state across restart).
func (s *Store) Snapshot() *Store {
	c := &Store{keys: make(map[string]*entry, len(s.keys))}
	for k, e := range s.keys {
		cp := *e
		c.keys[k] = &cp
	}
	return c
}

// Restore replaces s's whole state with a deep copy of snap's.
func (s *Store) Restore(snap *Store) {
	c := snap.Snapshot()
	s.keys = c.keys
}

// Reasons carried by LeaseLostError.
const (
	ReasonNotHolder  = "not-holder"  // holder != owner (or no holder)
	ReasonExpired    = "expired"     // holder == owner but now >= expiry
	ReasonStaleFence = "stale-fence" // fence != current fence
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

func (e *LeaseLostError) Error() string {
	if e.Reason == ReasonStaleFence {
		return "stale token " + strconv.FormatInt(e.Fence, 10) + " != " + strconv.FormatInt(e.Current, 10)
	}
	return "lease expired for " + e.Owner + " at t=" + strconv.FormatInt(e.Now, 10)
}

// Resource is fenced storage (DESIGN.md §1): separate from the coordinator,
// it knows no deadlines, only the highest fence it has accepted per key.
type Resource struct {
	keys map[string]*resEntry
}

type resEntry struct {
	highest int64
	data    string
}

// NewResource returns an empty Resource.
func NewResource() *Resource { return &Resource{keys: make(map[string]*resEntry)} }

// Write is accepted iff fence >= 1 and fence >= the highest fence accepted so
// far for the key; then data = value, highest = fence. Else *StaleFenceError.
func (r *Resource) Write(key string, fence int64, value string) error {
	e := r.keys[key]
	var highest int64
	if e != nil {
		highest = e.highest
	}
	if fence < 1 || fence < highest {
		return &StaleFenceError{Key: key, Fence: fence, Highest: highest}
	}
	if e == nil {
		e = &resEntry{}
		r.keys[key] = e
	}
	e.highest, e.data = fence, value
	return nil
}

// Read returns the key's data; ok is false when nothing was accepted yet.
func (r *Resource) Read(key string) (value string, ok bool) {
	if e := r.keys[key]; e != nil {
		return e.data, true
	}
	return "", false
}

// Highest returns the highest fence the resource accepted for key (0 if none).
func (r *Resource) Highest(key string) int64 {
	if e := r.keys[key]; e != nil {
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
