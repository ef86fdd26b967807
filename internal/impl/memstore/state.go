package memstore

import (
	"github.com/leasecheck/leasecheck/machine"
)

// CloneClocked returns an independent copy (machine.ClockedCloner), so the
// explorer can copy a coordinator built by machine.ClockedCoordinator.
func (s *Store) CloneClocked() machine.Clocked { return s.Snapshot() }

// HashState digests the lease table (machine.StateHasher), key by key in
// order.
func (s *Store) HashState(h *machine.Hasher) {
	h.Uint(uint64(s.bugs))
	if s.bugs&BugWallClock != 0 {
		h.Int(s.wall)
	}
	s.keys.sorted(func(k string, e *entry) {
		h.String(k)
		h.String(e.holder)
		h.Bool(e.held)
		h.Int(e.expiry)
		h.Int(e.fence)
		h.String(e.data)
		h.Bool(e.written)
		if s.bugs&BugSameTickGrant != 0 {
			h.Int(e.freeAt)
		}
	})
}

// CloneResource returns an independent copy (machine.ResourceCloner).
func (r *Resource) CloneResource() machine.Resource {
	return &Resource{keys: r.keys.clone(), bugs: r.bugs}
}

// HashState digests the resource's state.
func (r *Resource) HashState(h *machine.Hasher) {
	h.Uint(uint64(r.bugs))
	r.keys.sorted(func(k string, e *resEntry) {
		h.String(k)
		h.Int(e.highest)
		h.String(e.data)
	})
}
