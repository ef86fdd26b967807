package backend

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// Clocked is the in-process tier: a coordinator whose clock is injected as
// now (integer ticks; the caller chooses the unit) on every call. Its methods
// are impl/memstore.Store's, so the reference and its mutants fit as they are.
// A Clocked coordinator need not be safe for concurrent use.
type Clocked interface {
	Acquire(key, owner string, ttl, now int64) (fence int64, ok bool)
	Renew(key, owner string, ttl, fence, now int64) bool
	Release(key, owner string, fence int64) bool
	Write(key, owner string, fence int64, value string, now int64) error
	Read(key string) (value string, ok bool)
}

// InProcess adapts a Clocked coordinator to Backend: calls are serialized by
// a mutex, now is the time since epoch in unit (e.g. time.Millisecond) read
// from clock, and every Response carries At = epoch + now·unit exactly. A nil
// clock means time.Now.
func InProcess(c Clocked, unit time.Duration, clock func() time.Time) Backend {
	if clock == nil {
		clock = time.Now
	}
	if unit <= 0 {
		unit = time.Millisecond
	}
	return &inProcess{c: c, unit: unit, clock: clock, epoch: clock()}
}

// InProcessInfo is the Info of an InProcess backend named name.
func InProcessInfo(name string) Info {
	return Info{Name: name, FenceSource: "the coordinator's counter", FencedWrite: "Clocked.Write", Fences: model.Sequential, ServerTime: true}
}

type inProcess struct {
	mu    sync.Mutex
	c     Clocked
	unit  time.Duration
	clock func() time.Time
	epoch time.Time
}

func (p *inProcess) ServerNow(context.Context) (time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now(), nil
}

// now truncates the clock to the unit, so that At is exactly the now the
// coordinator saw.
func (p *inProcess) now() time.Time {
	d := p.clock().Sub(p.epoch) / p.unit * p.unit
	return p.epoch.Add(d)
}

func (p *inProcess) Do(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	at := p.now()
	now := int64(at.Sub(p.epoch) / p.unit)
	ttl := int64((req.TTL + p.unit - 1) / p.unit)
	r := Response{At: at}
	switch req.Kind {
	case model.Acquire:
		r.Fence, r.OK = p.c.Acquire(req.Key, req.Owner, ttl, now)
		if !r.OK {
			r.Reason = ReasonHeld
		}
	case model.Renew:
		if r.OK = p.c.Renew(req.Key, req.Owner, ttl, req.Fence, now); !r.OK {
			r.Reason = ReasonExpired
		}
	case model.Release:
		if r.OK = p.c.Release(req.Key, req.Owner, req.Fence); !r.OK {
			r.Reason = ReasonNotHolder
		}
	case model.Write:
		err := p.c.Write(req.Key, req.Owner, req.Fence, req.Value, now)
		r.OK = err == nil
		var ll *memstore.LeaseLostError
		switch {
		case errors.As(err, &ll):
			r.Reason = ll.Reason
		case err != nil:
			r.Reason = err.Error()
		}
	case model.Read:
		r.Value, r.HasValue = p.c.Read(req.Key)
		r.OK = true
	default:
		return Response{}, errors.New("backend: unknown op " + req.Kind.String())
	}
	return r, nil
}

func (p *inProcess) Close() error { return nil }
