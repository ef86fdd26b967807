package holder

import (
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Reader reads the key every Every time units (local time), one request at a
// time, giving up on a read after Timeout. Under fenced storage it reads the
// resource. It is a machine.Holder that never believes it holds the lease.
type Reader struct {
	Key     string
	Owner   string
	Every   int64
	Timeout int64
	Fenced  bool

	next  int64
	id    uint64
	out   bool
	until int64
	send  []Request
}

// Tick tells the reader its clock reads now.
func (r *Reader) Tick(now int64) {
	if r.out && now >= r.until {
		r.out = false
		r.next = now + r.Every
	}
	if !r.out && now >= r.next {
		r.id++
		r.out, r.until = true, now+max(r.Timeout, 1)
		d := machine.ToCoordinator
		if r.Fenced {
			d = machine.ToResource
		}
		r.send = append(r.send, Request{ID: r.id, To: d, Kind: model.Read, Key: r.Key, Owner: r.Owner})
	}
}

// Receive hands the reader a reply; it reports whether it answered the read
// in flight.
func (r *Reader) Receive(now int64, rep Reply) bool {
	if !r.out || rep.ID != r.id {
		return false
	}
	r.out = false
	r.next = now + max(r.Every, 1)
	return true
}

// Ready returns the requests to send and the next wake-up time.
func (r *Reader) Ready() Ready {
	rd := Ready{Send: r.send, WakeAt: r.next}
	r.send = r.send[:0]
	if r.out {
		rd.WakeAt = r.until
	}
	return rd
}
