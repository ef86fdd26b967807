package holder

import "github.com/leasecheck/leasecheck/machine"

// CloneHolder returns an independent copy (machine.HolderCloner), for the
// explorer.
func (h *Holder) CloneHolder() machine.Holder {
	c := *h
	c.send = append([]Request(nil), h.send...)
	return &c
}

// HashState digests everything a later decision depends on
// (machine.StateHasher); the loss counters, kept for tests, are left out.
func (h *Holder) HashState(d *machine.Hasher) {
	d.Uint(uint64(h.cfg.Bugs))
	d.Int(int64(h.ph))
	d.Uint(h.nextI)
	d.Bool(h.inFlight)
	if h.inFlight {
		d.Uint(h.out.ID)
		d.Int(int64(h.out.Kind))
		d.Int(h.out.Fence)
		d.Int(h.outSent)
		d.Int(h.outUntil)
	}
	d.Bool(h.held)
	d.Int(h.fence)
	d.Int(h.deadline)
	d.Int(h.nextRenew)
	d.Int(h.backoff)
	d.Int(h.retryAt)
	d.Int(int64(h.item))
	d.Bool(h.working)
	d.Int(h.workEnd)
	d.Int(int64(h.writesLeft))
	d.Int(int64(h.nWrites))
	d.Int(h.overrun)
	d.Bool(h.renewDead)
	d.Int(h.doubleLate)
	d.Int(h.secondAt)
	d.Int(h.relFence)
	d.Int(h.wall)
	d.Int(h.skew)
}

// CloneHolder returns an independent copy of the reader.
func (r *Reader) CloneHolder() machine.Holder {
	c := *r
	c.send = append([]Request(nil), r.send...)
	return &c
}

// HashState digests the reader's state.
func (r *Reader) HashState(d *machine.Hasher) {
	d.Int(r.next)
	d.Uint(r.id)
	d.Bool(r.out)
	d.Int(r.until)
}
