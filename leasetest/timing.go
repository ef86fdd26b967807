package leasetest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// The timing rules are the checker's own (docs/specification.md §3, model.Compile): an
// op took effect at some coordinator time in its window — [at, at] when the
// backend reports its clock (Info.ServerTime), else [call − u, return + u]
// with u = Info.Uncertainty, the history's clock_uncertainty — and a lease
// granted or renewed by op g ends at g's time + TTL. So the checker sees g's
// lease live at a later op p for certain when p's latest time is before g's
// earliest + TTL, and expired for certain when p's earliest time is at or
// after g's latest + TTL. The scripted checks demand exactly that and no
// more: the uncertainty is applied on both sides, as the checker applies
// it, so a scripted check never fails a history the checker accepts
// (TestTimingAgreesWithChecker). Where neither holds — the probe came too
// late, the TTL is too short for the uncertainty — the check is noted as
// not judged, never guessed.

// u is the uncertainty the windows carry: Info.Uncertainty in interval
// mode; none in exact mode, where `at` is the coordinator's clock itself.
func (e *env) u() int64 {
	if e.info.ServerTime {
		return 0
	}
	return int64(e.info.Uncertainty / time.Microsecond)
}

// window is when the coordinator may have applied r, in microseconds: on
// the server's clock in exact mode, on the recorder's timeline otherwise.
// ok is false when r carries no time to judge by (no answer, or no `at`
// from a backend that reports its clock).
func (e *env) window(r reply) (lo, hi int64, ok bool) {
	if e.info.ServerTime {
		if r.At.IsZero() {
			return 0, 0, false
		}
		t := r.At.UnixMicro()
		return t, t, true
	}
	if !r.answered {
		return 0, 0, false
	}
	return r.before - e.u(), r.after + e.u(), true
}

// surelyLive: the lease g granted or renewed is live, for the checker, when
// p is applied.
func (e *env) surelyLive(g, p reply) bool {
	glo, _, ok1 := e.window(g)
	_, phi, ok2 := e.window(p)
	return ok1 && ok2 && phi < glo+g.ttl
}

// surelyExpired: the lease g granted or renewed has expired, for the
// checker, when p is applied (unless renewed in between), and the
// coordinator may no longer treat it as held (Info.ExpiryLateness).
//
// The library's own background renewals of g's owner count as renewals in
// between: one answered ok extends the lease from when it was applied, one
// with no answer (its reply held by a stop, say) may have, so nothing is
// sure then.
func (e *env) surelyExpired(g, p reply) bool {
	g, ok := e.latestOwn(g, p)
	if !ok {
		return false
	}
	_, ghi, ok1 := e.window(g)
	plo, _, ok2 := e.window(p)
	return ok1 && ok2 && plo >= ghi+g.ttl+e.late()
}

// late is Info.ExpiryLateness in the windows' unit.
func (e *env) late() int64 { return int64(e.info.ExpiryLateness / time.Microsecond) }

// errorWhereKnown: p got an error (not a timeout) while g's lease was
// surely live by the client's clock. The checker accepts any error as an
// unknown outcome and cannot time it, but the contract wants a definite
// answer where the backend knows one: a refusal is no error.
func (e *env) errorWhereKnown(g, p reply) bool {
	if p.answered || errors.Is(p.err, context.DeadlineExceeded) || !g.answered {
		return false
	}
	u := int64(e.info.Uncertainty / time.Microsecond)
	return p.after+u < g.before-u+g.ttl
}

// earlySlack is the room left for a probe's own latency before the
// earliest moment g's lease may end.
func (e *env) earlySlack() int64 {
	return int64(max(e.opts.TTL/10, 20*time.Millisecond) / time.Microsecond)
}

// lateSlack is the margin past the latest moment g's lease may end.
func (e *env) lateSlack() int64 {
	return int64(max(e.opts.TTL/20, 5*time.Millisecond) / time.Microsecond)
}

// earlyAt is when to send a probe that must find g's lease still live: as
// late as the uncertainty allows. ok is false when the TTL leaves no room.
func (e *env) earlyAt(g reply) (int64, bool) {
	t := g.before + g.ttl - 2*e.u() - e.earlySlack()
	return t, t > g.after
}

// lateAt is when to send a probe that must find g's lease expired.
func (e *env) lateAt(g reply) int64 {
	return g.after + g.ttl + 2*e.u() + e.late() + e.lateSlack()
}

// since renders how long after g's request p was sent, for messages.
func since(g, p reply) string {
	return fmt.Sprint((time.Duration(p.before-g.before) * time.Microsecond).Round(time.Millisecond))
}

// probeLive sends an acquire by prober that must be refused because g's
// lease (held by holder) is live, sent as late as the timing rules allow.
// It returns false when the probe was granted (the lease expired early).
func (e *env) probeLive(g reply, holder, prober, what, id string) bool {
	t, ok := e.earlyAt(g)
	if !ok {
		e.note("not judged: whether %s lives its whole TTL — TTL %v leaves no room beyond twice the uncertainty (%v) and a probe's latency; use a longer TTL", what, e.opts.TTL, e.info.Uncertainty)
		return true
	}
	e.sleepUntil(t)
	p := e.acquire(prober)
	if !e.surelyLive(g, p) {
		if p.granted() {
			e.note("not judged: %s = %s %s after %s — too late to tell an early expiry from a late probe", p.call(), p.got(), since(g, p), what)
		}
		return !p.granted()
	}
	return e.wantRefused(p, "held", id, fmt.Sprintf("%s holds a live lease: %s, %s before, has TTL %v", holder, what, since(g, p), time.Duration(g.ttl)*time.Microsecond))
}

// acquireAfter waits until g's lease has surely expired and acquires it as
// owner; it returns the reply and whether it was judged expired.
func (e *env) acquireAfter(g reply, owner string) (reply, bool) {
	e.sleepUntil(e.lateAt(g))
	p := e.acquire(owner)
	return p, e.surelyExpired(g, p)
}

// latestOwn is g, or the latest background renewal of g's owner that the
// library sent after g and before p's answer, as a reply; ok is false when
// one of them may have extended the lease but gives no time to judge by (no
// answer, or no server time where Info.ServerTime says there is one).
func (e *env) latestOwn(g, p reply) (reply, bool) {
	e.ownMu.Lock()
	own := append([]backend.Renewal(nil), e.own...)
	e.ownMu.Unlock()
	us := func(t time.Time) int64 { return int64(e.rec.Since(t) / time.Microsecond) }
	for _, rn := range own {
		start := us(rn.Start)
		if rn.Owner != g.owner || rn.Key != e.key || start < g.before || start > p.after || rn.Answered && !rn.OK || rn.Release {
			continue
		}
		if !rn.Answered {
			return g, false
		}
		r := reply{req: backend.Request{Kind: model.Renew, Key: rn.Key, Owner: rn.Owner, Fence: rn.Fence}, owner: rn.Owner,
			Response: backend.Response{OK: true, At: rn.At, TTL: rn.TTL}, answered: true,
			before: start, after: us(rn.End) + 1, ttl: int64(e.rec.GrantTTL(rn.TTL) / time.Microsecond)}
		_, rhi, ok := e.window(r)
		if !ok {
			return g, false
		}
		if _, ghi, _ := e.window(g); rhi+r.ttl > ghi+g.ttl {
			g = r
		}
	}
	return g, true
}
