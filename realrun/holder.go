package realrun

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// holder is the article's client protocol (DESIGN.md §1), driven by a real
// goroutine: acquire; renew every TTL/3 by its own clock; a local deadline
// from the send time of the request that granted or extended the lease,
// TTL·(1−2ρ) minus a margin; identity, deadline and fence re-checked before
// every write; the iron rule: a failed or unanswered renew (or a refused
// write, or the deadline passing) stops writing until it acquires again.
// One goroutine and one request at a time, so it is one process of the
// history. Faults make it misbehave the ways the article lists.
type holder struct {
	r     *runner
	idx   int
	name  string
	owner string
	inc   int
	cl    *client
	rng   *rand.Rand

	// Its clock: true time + offset, running at driftRate in [driftFrom, driftTo).
	driftFrom, driftTo time.Duration
	driftRate          float64
	dropUntil          time.Duration // renewals dropped until then (true time)

	holding   bool
	fence     int64
	ttl       time.Duration
	deadline  time.Duration // local
	lastRenew time.Duration // local send time of the last grant or renewal
	writes    int
}

// rho is the clock-rate bound the holder assumes; margin is TTL/10.
const rho = 0.001

// local is the holder's own clock reading.
func (h *holder) local() time.Duration {
	t := h.r.now()
	l := t + h.r.plan.offset[h.idx]
	if h.driftTo > h.driftFrom && t > h.driftFrom {
		d := min(t, h.driftTo) - h.driftFrom
		l -= time.Duration(float64(d) * (1 - h.driftRate))
	}
	return l
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (h *holder) poll() time.Duration {
	return 80*time.Millisecond + time.Duration(h.rng.Int64N(int64(60*time.Millisecond)))
}

func (h *holder) do(ctx context.Context, req backend.Request, drop bool) (backend.Response, bool) {
	req.Owner = h.owner
	return h.r.do(ctx, h.cl, h.name, h.owner, req, drop)
}

func (h *holder) grant(sent time.Duration, ttl time.Duration) {
	h.lastRenew = sent
	h.deadline = sent + time.Duration(float64(ttl)*(1-2*rho)) - ttl/10
}

func (h *holder) run(ctx context.Context) {
	h.owner = h.name
	ttl := h.r.cfg.TTL
	for ctx.Err() == nil && h.r.now() < h.r.end {
		if f := h.r.plan.claim(h.r.now(), h.holding, false); f != nil {
			h.inject(ctx, f)
		}
		if !h.holding {
			sent := h.local()
			resp, ok := h.do(ctx, backend.Request{Kind: model.Acquire, TTL: ttl}, false)
			if ok && resp.OK {
				h.holding, h.fence, h.writes = true, resp.Fence, 0
				h.ttl = h.r.grantTTL(ttl)
				if resp.TTL > 0 {
					h.ttl = resp.TTL
				}
				h.grant(sent, h.ttl)
				continue
			}
			sleep(ctx, h.poll())
			continue
		}
		if h.local() >= h.deadline {
			h.holding = false // the deadline passed: stop, re-acquire
			continue
		}
		if h.local()-h.lastRenew >= h.ttl/3 {
			sent := h.local()
			drop := h.r.now() < h.dropUntil
			resp, ok := h.do(ctx, backend.Request{Kind: model.Renew, TTL: ttl, Fence: h.fence}, drop)
			if !ok || !resp.OK {
				h.holding = false // the iron rule
				sleep(ctx, h.poll())
				continue
			}
			h.grant(sent, h.ttl)
			continue
		}
		if f := h.r.plan.claim(h.r.now(), true, true); f != nil {
			if h.inject(ctx, f) {
				continue
			}
		}
		// The write: the check above, then (after a pause, perhaps much
		// later) the request; only the fenced write can stop a zombie.
		v := fmt.Sprintf("w%d-%s", h.r.seq.Add(1), h.owner)
		resp, ok := h.do(ctx, backend.Request{Kind: model.Write, Fence: h.fence, Value: v}, false)
		if !ok || !resp.OK {
			h.holding = false
			continue
		}
		h.writes++
		if h.writes >= 8+h.rng.IntN(12) && h.local() < h.deadline {
			h.do(ctx, backend.Request{Kind: model.Release, Fence: h.fence}, false)
			h.holding = false
			sleep(ctx, 3*h.poll())
			continue
		}
		sleep(ctx, ttl/20+time.Duration(h.rng.Int64N(int64(ttl/20))))
	}
	if h.holding && h.local() < h.deadline {
		ctx, cancel := context.WithTimeout(context.Background(), h.r.cfg.OpTimeout)
		h.do(ctx, backend.Request{Kind: model.Release, Fence: h.fence}, false)
		cancel()
	}
}

// inject applies a holder fault; true when the holder must go round its
// loop again instead of writing.
func (h *holder) inject(ctx context.Context, f *fault) bool {
	switch f.Kind {
	case faults.Pause:
		// A process pause (a GC stop-the-world) between the deadline check
		// and the write: nothing of the holder runs, its connections too.
		h.r.injected(f.Kind, "%s (fence %d) paused for %v, between its check and its write", h.owner, h.fence, f.Duration.Round(time.Millisecond))
		if h.cl.proxy != nil {
			h.cl.proxy.Freeze(true)
		}
		sleep(ctx, f.Duration)
		if h.cl.proxy != nil {
			h.cl.proxy.Freeze(false)
		}
		return false
	case faults.Crash:
		h.r.injected(f.Kind, "%s (fence %d) crashed without releasing; back in %v as %s-%d", h.owner, h.fence, f.Duration, h.name, h.inc+2)
		h.holding = false
		if h.cl.proxy != nil {
			h.cl.proxy.Blackhole(true)
		}
		sleep(ctx, f.Duration)
		if h.cl.proxy != nil {
			h.cl.proxy.Blackhole(false)
		}
		h.inc++
		h.owner = fmt.Sprintf("%s-%d", h.name, h.inc+1)
		return true
	case faults.DropHeartbeats:
		h.r.injected(f.Kind, "%s's renewals dropped for %v", h.owner, f.Duration)
		h.dropUntil = h.r.now() + f.Duration
	case faults.ClockDrift:
		h.r.injected(f.Kind, "%s's clock runs at %.0f%% speed for %v", h.owner, f.Rate*100, f.Duration)
		if h.driftTo <= h.driftFrom { // one drift window per holder
			h.driftFrom, h.driftTo, h.driftRate = h.r.now(), h.r.now()+f.Duration, f.Rate
		}
	case faults.Delay:
		h.r.injected(f.Kind, "%s's connection delayed %v per message for %v", h.owner, f.Amount, f.Duration)
		p := h.cl.proxy
		p.SetDelay(f.Amount)
		time.AfterFunc(f.Duration, func() { p.SetDelay(0) })
	case faults.Partition:
		h.r.injected(f.Kind, "%s cut off from the server for %v", h.owner, f.Duration)
		p := h.cl.proxy
		p.Blackhole(true)
		time.AfterFunc(f.Duration, func() { p.Blackhole(false) })
	}
	return false
}

// reader reads the key now and then.
type reader struct {
	r    *runner
	name string
	cl   *client
}

func (rd *reader) run(ctx context.Context) {
	for ctx.Err() == nil && rd.r.now() < rd.r.end {
		rd.r.do(ctx, rd.cl, rd.name, rd.name, backend.Request{Kind: model.Read}, false)
		sleep(ctx, rd.r.cfg.TTL/12)
	}
}

// serverFaults stops and resumes the server, and crashes and restarts it
// (coordinator-crash).
func (r *runner) serverFaults(ctx context.Context) {
	for _, f := range r.plan.server {
		sleep(ctx, f.At-r.now())
		if ctx.Err() != nil {
			return
		}
		if f.Restart {
			rs, ok := r.t.Server.(Restarter)
			if !ok {
				continue
			}
			r.injected(f.Kind, "server killed (SIGKILL), restarted after %v", f.Duration)
			start := r.now()
			r.serverDown(true)
			err := rs.Restart(ctx, f.Duration)
			r.serverDown(false)
			r.mu.Lock()
			if err != nil {
				r.cfg.Log("restart: %v", err)
				r.serverErr = err
			} else {
				r.outage = max(r.outage, r.now()-start)
			}
			r.mu.Unlock()
			continue
		}
		r.injected(f.Kind, "server stopped (SIGSTOP) for %v", f.Duration)
		r.serverDown(true)
		if err := r.t.Server.Stop(); err != nil {
			r.cfg.Log("stop: %v", err)
			r.serverDown(false)
			continue
		}
		sleep(context.Background(), f.Duration)
		r.t.Server.Cont()
		r.serverDown(false)
	}
}
