package tablestore

import (
	"errors"
	"maps"

	"github.com/leasecheck/leasecheck/machine"
)

// flaw is a planted mistake, for showing that leasecheck catches it.
type flaw int

const (
	// sound is the correct store.
	sound flaw = iota
	// renewByToken extends a lease for any renew presenting the current
	// token, without looking at who sends it: a client that has seen the
	// token keeps someone else's lease alive.
	renewByToken
	// lateExpiry lets a lease live one tick past its TTL ("until" compared
	// with >= where it must be >): the next owner is refused on the tick
	// the lease ends.
	lateExpiry
)

type lease struct {
	owner string // "" when released
	until int64  // the lease ends at this reading
	token int64  // the token of the latest grant
}

// store is a lease table: one lease per key, a token counter per key, the
// data. Not safe for concurrent use.
type store struct {
	leases map[string]lease
	data   map[string]string
	flaw   flaw
}

// New returns an empty lease table as a machine.Clocked, which is also a
// machine.ClockedCloner. Not safe for concurrent use.
func New() machine.Clocked { return flawed(sound) }

// flawed returns an empty store with flaw f planted.
func flawed(f flaw) *store {
	return &store{leases: map[string]lease{}, data: map[string]string{}, flaw: f}
}

// errRefused is a refused write.
var errRefused = errors.New("tablestore: write refused")

func (s *store) live(l lease, now int64) bool {
	if s.flaw == lateExpiry {
		return l.owner != "" && now <= l.until
	}
	return l.owner != "" && now < l.until
}

// Acquire grants key to owner for ttl when it is free (released, or past
// its end) and returns the new token.
func (s *store) Acquire(key, owner string, ttl, now int64) (int64, bool) {
	l := s.leases[key]
	if s.live(l, now) {
		return 0, false
	}
	l = lease{owner: owner, until: now + ttl, token: l.token + 1}
	s.leases[key] = l
	return l.token, true
}

// Renew extends owner's live lease (presenting token when non-zero).
func (s *store) Renew(key, owner string, ttl, token, now int64) bool {
	l := s.leases[key]
	if !s.live(l, now) || token != 0 && token != l.token {
		return false
	}
	if l.owner != owner && !(s.flaw == renewByToken && token != 0) {
		return false
	}
	l.until = now + ttl
	s.leases[key] = l
	return true
}

// Release frees owner's lease (presenting token when non-zero).
func (s *store) Release(key, owner string, token int64) bool {
	l := s.leases[key]
	if l.owner == "" || l.owner != owner || token != 0 && token != l.token {
		return false
	}
	l.owner = ""
	s.leases[key] = l
	return true
}

// Write stores value when owner holds a live lease under token.
func (s *store) Write(key, owner string, token int64, value string, now int64) error {
	l := s.leases[key]
	if !s.live(l, now) || l.owner != owner || token != l.token {
		return errRefused
	}
	s.data[key] = value
	return nil
}

// Read returns the key's value.
func (s *store) Read(key string) (string, bool) {
	v, ok := s.data[key]
	return v, ok
}

// CloneClocked copies the store (machine.ClockedCloner), for the explorer.
func (s *store) CloneClocked() machine.Clocked {
	return &store{leases: maps.Clone(s.leases), data: maps.Clone(s.data), flaw: s.flaw}
}
