package memstore

import (
	"sort"

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
	keys := make([]string, 0, len(s.keys))
	for k := range s.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := s.keys[k]
		h.String(k)
		h.String(e.holder)
		h.Bool(e.held)
		h.Int(e.expiry)
		h.Int(e.fence)
		h.String(e.data)
		h.Bool(e.written)
	}
}

// CloneResource returns an independent copy (machine.ResourceCloner).
func (r *Resource) CloneResource() machine.Resource {
	c := &Resource{keys: make(map[string]*resEntry, len(r.keys)), bugs: r.bugs}
	for k, e := range r.keys {
		cp := *e
		c.keys[k] = &cp
	}
	return c
}

// HashState digests the resource's state.
func (r *Resource) HashState(h *machine.Hasher) {
	h.Uint(uint64(r.bugs))
	keys := make([]string, 0, len(r.keys))
	for k := range r.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := r.keys[k]
		h.String(k)
		h.Int(e.highest)
		h.String(e.data)
	}
}
