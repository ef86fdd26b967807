package leasetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/model"
)

// Linearizable: three holders following the article's protocol (realrun's)
// and a reader, for five TTLs, with a holder paused past its TTL, a holder
// crashed, renewals dropped and a drifting holder clock; beside them
// adversarial clients send renews, releases and writes they have no lease
// for, with no fence, a stale, the current and a future one; and every
// third acquire, renew, release and write of the holders is delivered
// twice, as a network that duplicates would (a duplicated acquire is the
// live holder's second acquire, which must grant nothing; the duplicate of
// a refused acquire is granted when the lease came free in between, and
// the op then records that grant). The history must be linearizable and keep the fencing
// invariants. For a backend whose writes are not fenced the lock's own ops
// are judged (writes and reads removed): what its writes cost, Zombie
// reports once.
func testLinearizable(e *env) {
	w := &workload{Backend: e.b, every: 3}
	var mu sync.Mutex
	var injected []string
	tg := realrun.Target{Info: e.info, Open: func(context.Context, string) (backend.Backend, error) { return w, nil }}
	cfg := realrun.Config{Seed: 1, Duration: 5 * e.opts.TTL, TTL: e.opts.TTL, Key: e.key, OpTimeout: e.opts.OpTimeout,
		Faults: []faults.Kind{faults.Pause, faults.Crash, faults.DropHeartbeats, faults.ClockDrift},
		Log: func(format string, args ...any) {
			mu.Lock()
			injected = append(injected, strings.TrimSpace(fmt.Sprintf(format, args...)))
			mu.Unlock()
		},
		Extra: w.adversary(e.key, e.opts, e.fences, e.fenced)}
	res, err := realrun.Run(e.ctx, tg, cfg)
	mu.Lock()
	for _, s := range injected {
		e.note("fault: %s", s)
	}
	mu.Unlock()
	if err != nil {
		e.fatal("the workload could not run: %v", err)
	}
	h := res.History
	e.note("%d ops: %d requests of holders delivered twice, %d adversarial requests", len(h.Ops), w.duplicated.Load(), w.adversarial.Load())
	if n := w.tookEffect.Load(); n > 0 {
		e.note("requests delivered twice whose original was refused and whose duplicate took effect (the lease came free between them): %d; their ops record the duplicate's answer", n)
	}
	if !e.fenced {
		h = lockOnly(h)
		e.note("judged: acquire, renew and release only, writes and reads removed (%s)", whyUnfencedWrites)
	}
	e.res.History = h
}

// workload is the backend every client of the Linearizable run shares: it
// duplicates every few holder requests of each kind and remembers the latest fence
// granted (the adversaries' "current" fence).
type workload struct {
	backend.Backend
	every       uint64
	n           [model.Read + 1]atomic.Uint64 // requests so far, by kind
	fence       atomic.Int64
	duplicated  atomic.Int64
	tookEffect  atomic.Int64 // duplicates that took effect where the original was refused
	adversarial atomic.Int64
}

// adversarial owners never acquire: every renew, release and write they
// send must be refused. One kind of request each, so that a refused renew
// is never followed by a write of the same owner (stop-on-renew-failure
// judges the client too).
const adversaryPrefix = "x-"

func (w *workload) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	resp, err := w.Backend.Do(ctx, req)
	w.saw(req, resp, err)
	if req.Kind == model.Read || req.Kind > model.Read || strings.HasPrefix(req.Owner, adversaryPrefix) || w.n[req.Kind].Add(1)%w.every != 0 {
		return resp, err
	}
	// The duplicate arrives right after the original, inside the op's
	// window; the first answer is the one the client hears. When the
	// duplicate gets no answer it may still apply later: the op's outcome
	// is then unknown.
	w.duplicated.Add(1)
	r2, err2 := w.Backend.Do(ctx, req)
	w.saw(req, r2, err2)
	switch {
	case err == nil && err2 != nil:
		return backend.Response{}, fmt.Errorf("leasetest: the duplicate of this request got no answer: %w", err2)
	case err == nil && err2 == nil && !resp.OK && r2.OK:
		// The original was refused and the duplicate took effect: the
		// lease came free between them (its holder's TTL ran out, or it
		// released), so the duplicate of a refused acquire was granted.
		// A refusal changes nothing, so the op did what its duplicate did,
		// inside its window: the client hears that answer, and the history
		// records the grant. Answering the refusal left a lease held by an
		// owner the history said was refused, and every acquire refused
		// for a TTL after it unexplained (TestDuplicateTookEffect).
		w.tookEffect.Add(1)
		return r2, nil
	}
	return resp, err
}

func (w *workload) saw(req backend.Request, resp backend.Response, err error) {
	if err != nil || req.Kind != model.Acquire || !resp.OK {
		return
	}
	for {
		cur := w.fence.Load()
		if resp.Fence <= cur || w.fence.CompareAndSwap(cur, resp.Fence) {
			return
		}
	}
}

// Close leaves the backend open: the property's factory owns it.
func (w *workload) Close() error { return nil }

// Unwrap lets the runner find the backend's optional capabilities
// (backend.Holding, backend.Stopper) behind the workload.
func (w *workload) Unwrap() backend.Backend { return w.Backend }

// ServerNow passes the backend's clock through, when it has one.
func (w *workload) ServerNow(ctx context.Context) (time.Time, error) {
	if c, ok := w.Backend.(backend.Clock); ok {
		return c.ServerNow(ctx)
	}
	return time.Time{}, errors.New("leasetest: the backend reports no clock")
}

// adversary returns realrun's Extra client: every TTL/8 or so, a renew, a
// release or (when writes are fenced) a write by an owner that holds no
// lease, with no fence, a stale, the current or a future one (none
// without fences). Deterministic choices from a fixed seed.
func (w *workload) adversary(key string, opts Options, fences, fenced bool) func(context.Context, *realrun.Recorder, backend.Backend, time.Duration) {
	return func(ctx context.Context, rec *realrun.Recorder, b backend.Backend, end time.Duration) {
		rng := rand.New(rand.NewPCG(1, 0xad7e))
		kinds := []model.Kind{model.Renew, model.Release}
		if fenced {
			kinds = append(kinds, model.Write)
		}
		for i := 0; ; i++ {
			sleepCtx(ctx, opts.TTL/8+time.Duration(rng.Int64N(int64(opts.TTL/8))))
			if ctx.Err() != nil || rec.Now()+opts.OpTimeout >= end {
				return
			}
			k := kinds[i%len(kinds)]
			owner := adversaryPrefix + k.String()
			req := backend.Request{Kind: k, Key: key, Owner: owner}
			if fences {
				// None (not for a write: format v1 wants its fence), the
				// stale, the current or a future one.
				cur := max(w.fence.Load(), 1)
				choices := []int64{0, max(cur-1, 1), cur, cur + 1}
				if k == model.Write {
					choices = choices[1:]
				}
				req.Fence = choices[rng.IntN(len(choices))]
			}
			switch k {
			case model.Renew:
				req.TTL = opts.TTL
			case model.Write:
				req.Value = fmt.Sprintf("%s%d", owner, i)
			}
			rec.Do(ctx, b, owner, owner, req, opts.OpTimeout, false)
			w.adversarial.Add(1)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// lockOnly is h without its writes and reads, the lines renumbered.
func lockOnly(h *model.History) *model.History {
	out := &model.History{Name: h.Name, Header: h.Header, Faults: h.Faults}
	for _, op := range h.Ops {
		if op.Kind == model.Write || op.Kind == model.Read {
			continue
		}
		out.Ops = append(out.Ops, op)
	}
	out.NumberLines()
	return out
}
