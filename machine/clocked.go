package machine

import (
	"errors"

	"github.com/leasecheck/leasecheck/model"
)

// Clocked is the in-process coordinator tier: lease operations with the
// coordinator's clock injected as now on every call (the method set of
// leasecheck's reference coordinator, whose semantics are
// reference/lease.py's). Write
// returns nil when the write was accepted; a refusal may implement
// interface{ RefusalReason() string } to say why.
type Clocked interface {
	Acquire(key, owner string, ttl, now int64) (fence int64, ok bool)
	Renew(key, owner string, ttl, fence, now int64) bool
	Release(key, owner string, fence int64) bool
	Write(key, owner string, fence int64, value string, now int64) error
	Read(key string) (value string, ok bool)
}

// Explainer is an optional interface of a Clocked coordinator: why the op
// of kind k by owner with fence, at now, was just refused (a Reason
// constant). Without it, ClockedCoordinator answers ReasonHeld for a refused
// acquire and ReasonRefused otherwise, rather than guess.
type Explainer interface {
	Why(k model.Kind, key, owner string, fence, now int64) string
}

// Granter is an optional interface of a Clocked coordinator that applies a
// TTL other than the one asked (a cap, a rounding to its granularity):
// GrantTTL returns the TTL it applies to a request for ttl, and
// ClockedCoordinator passes that to Acquire and Renew and reports it in
// Reply.TTL.
type Granter interface{ GrantTTL(ttl int64) int64 }

// Crasher is an optional interface of a Clocked coordinator that loses
// state in a crash. Without it a crash keeps everything (a durable store).
type Crasher interface{ Crash() }

// ClockedCoordinator adapts c to a Coordinator. Every driver that runs an
// in-process coordinator — the simulator, the explorer, impl/backend's
// InProcess — goes through it, so refusal reasons are worked out in one
// place. When c also implements WallClockUser, so does the result. The
// result has a method Unwrap() Clocked that returns c, by which the
// explorer copies and hashes the machine behind it, as errors.Unwrap finds
// a wrapped error.
func ClockedCoordinator(c Clocked) Coordinator {
	if w, ok := c.(WallClockUser); ok {
		return &clockedWall{clocked: clocked{c: c}, w: w}
	}
	return &clocked{c: c}
}

type clocked struct{ c Clocked }

// clockedWall holds its clocked by value: one allocation an adapter (the
// explorer makes one at every copy of a coordinator it writes).
type clockedWall struct {
	clocked
	w WallClockUser
}

func (c *clockedWall) SetWall(wall int64) { c.w.SetWall(wall) }

// Unwrap returns the Clocked coordinator c adapts.
func (c *clocked) Unwrap() Clocked { return c.c }

func (c *clocked) Crash() {
	if cr, ok := c.c.(Crasher); ok {
		cr.Crash()
	}
}

func (c *clocked) Apply(r *Request, now int64) Reply {
	rep := Reply{ID: r.ID}
	switch r.Kind {
	case model.Acquire:
		ttl := c.grant(r.TTL)
		if rep.Fence, rep.OK = c.c.Acquire(r.Key, r.Owner, ttl, now); rep.OK && ttl != r.TTL {
			rep.TTL = ttl
		}
	case model.Renew:
		ttl := c.grant(r.TTL)
		if rep.OK = c.c.Renew(r.Key, r.Owner, ttl, r.Fence, now); rep.OK && ttl != r.TTL {
			rep.TTL = ttl
		}
	case model.Release:
		rep.OK = c.c.Release(r.Key, r.Owner, r.Fence)
	case model.Write:
		err := c.c.Write(r.Key, r.Owner, r.Fence, r.Value, now)
		if rep.OK = err == nil; !rep.OK {
			var rr interface{ RefusalReason() string }
			if errors.As(err, &rr) {
				rep.Err = rr.RefusalReason()
			}
		}
	case model.Read:
		rep.Value, rep.HasValue = c.c.Read(r.Key)
		rep.OK = true
	default:
		rep.Err = "unsupported op " + r.Kind.String()
		return rep
	}
	if !rep.OK && rep.Err == "" {
		rep.Err = c.why(r, now)
	}
	return rep
}

// grant is the TTL the coordinator applies to a request for ttl.
func (c *clocked) grant(ttl int64) int64 {
	if g, ok := c.c.(Granter); ok {
		return g.GrantTTL(ttl)
	}
	return ttl
}

func (c *clocked) why(r *Request, now int64) string {
	if e, ok := c.c.(Explainer); ok {
		if s := e.Why(r.Kind, r.Key, r.Owner, r.Fence, now); s != "" {
			return s
		}
	}
	if r.Kind == model.Acquire {
		return ReasonHeld
	}
	return ReasonRefused
}
