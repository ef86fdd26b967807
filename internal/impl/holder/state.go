package holder

import (
	"github.com/leasecheck/leasecheck/internal/statehash"
	"github.com/leasecheck/leasecheck/machine"
)

// CloneHolder returns an independent copy (machine.HolderCloner), for the
// explorer.
func (h *Holder) CloneHolder() machine.Holder {
	c := *h
	c.send = append([]Request(nil), h.send...)
	return &c
}

// HashState digests everything a later decision depends on
// (machine.StateHasher); the loss counters, kept for tests, are left out.
//
// It digests into a statehash.Digest held as a value (a register) and hands
// it back: the same words as through the Hasher, in a third less time.
func (h *Holder) HashState(hs *machine.Hasher) {
	d := (*statehash.Hasher)(hs).Digest().Uint(uint64(h.cfg.Bugs)).Int(int64(h.ph)).Uint(h.nextI).Bool(h.inFlight)
	if h.inFlight {
		d = d.Uint(h.out.ID).Int(int64(h.out.Kind)).Int(h.out.Fence).Int(h.outSent).Int(h.outUntil)
	}
	d = d.Bool(h.held).Int(h.fence).Int(h.deadline).Int(h.nextRenew).Int(h.backoff).Int(h.retryAt)
	d = d.Int(int64(h.item)).Bool(h.working).Int(h.workEnd).Int(int64(h.writesLeft)).Int(int64(h.nWrites)).Int(h.overrun)
	d = d.Bool(h.renewDead).Int(h.doubleLate).Int(h.secondAt).Int(h.relFence).Int(h.wall).Int(h.skew)
	(*statehash.Hasher)(hs).Resume(d)
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
