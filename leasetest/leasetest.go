package leasetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/realrun"
)

// Factory returns a fresh backend and a function that stops it (and
// removes what it stored). Each property calls it once.
type Factory func() (b backend.Backend, stop func(), err error)

// Options configure the suite. The zero value means the defaults.
type Options struct {
	// Info describes the backend: its fence order (model.Sequential fences
	// must be exactly 1, 2, 3, ...), whether it reports its clock
	// (ServerTime: the backend must implement backend.Clock), how late its
	// leases may expire (Uncertainty) and its TTL granularity.
	Info backend.Info
	// TTL of every lease; default 1s (rounded up to Info.TTLGranularity).
	TTL time.Duration
	// OpTimeout bounds each request; default TTL/3, at least 100ms.
	OpTimeout time.Duration
	// Key prefixes the keys used; each property uses Key + "/" + its name.
	// Default "leasetest".
	Key string
	// CheckTimeout is the checker's search budget per property; default 30s.
	CheckTimeout time.Duration
	// Skip lists properties not to run (e.g. "Linearizable" when too slow).
	Skip []string
}

func (o *Options) defaults() {
	if o.TTL <= 0 {
		o.TTL = time.Second
	}
	if g := o.Info.TTLGranularity; g > 0 {
		o.TTL = (o.TTL + g - 1) / g * g
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = max(o.TTL/3, 100*time.Millisecond)
	}
	if o.Key == "" {
		o.Key = "leasetest"
	}
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = 30 * time.Second
	}
	if o.Info.Name == "" {
		o.Info.Name = "backend"
	}
}

// Properties lists the property names, in the order they are reported.
var Properties = []string{
	"Acquire", "MutualExclusion", "NoEarlyExpiry", "Expiry", "Renew", "RenewAfterExpiry",
	"Release", "FenceIncreases", "StaleFence", "WriteAfterExpiry", "Zombie", "Linearizable",
}

var properties = map[string]func(context.Context, *env){
	"Acquire":          testAcquire,
	"MutualExclusion":  testMutualExclusion,
	"NoEarlyExpiry":    testNoEarlyExpiry,
	"Expiry":           testExpiry,
	"Renew":            testRenew,
	"RenewAfterExpiry": testRenewAfterExpiry,
	"Release":          testRelease,
	"FenceIncreases":   testFenceIncreases,
	"StaleFence":       testStaleFence,
	"WriteAfterExpiry": testWriteAfterExpiry,
	"Zombie":           testZombie,
	"Linearizable":     testLinearizable,
}

// Run runs every property as a parallel subtest of t. The subtests finish
// before t does; stop shared servers with t.Cleanup, not with defer.
func Run(t *testing.T, f Factory, opts Options) {
	t.Helper()
	opts.defaults()
	for _, name := range Properties {
		if skipped(opts, name) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, msg := range runOne(context.Background(), f, opts, name) {
				t.Error(msg)
			}
		})
	}
}

// Check runs every property (concurrently) and returns nil, or an error
// listing every failure, each line prefixed with the property's name.
func Check(ctx context.Context, f Factory, opts Options) error {
	res := checkAll(ctx, f, opts)
	var errs []error
	for _, name := range Properties {
		for _, msg := range res[name] {
			errs = append(errs, fmt.Errorf("%s: %s", name, msg))
		}
	}
	return errors.Join(errs...)
}

// checkAll returns the failures of every property run, by name.
func checkAll(ctx context.Context, f Factory, opts Options) map[string][]string {
	opts.defaults()
	res := map[string][]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range Properties {
		if skipped(opts, name) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := runOne(ctx, f, opts, name)
			mu.Lock()
			res[name] = msgs
			mu.Unlock()
		}()
	}
	wg.Wait()
	return res
}

func skipped(opts Options, name string) bool {
	for _, s := range opts.Skip {
		if s == name {
			return true
		}
	}
	return false
}

// failNow ends a property early (after an error that makes the rest moot).
type failNow struct{}

// env is one property's run: a backend, a recorder and the failures.
type env struct {
	name string
	opts Options
	b    backend.Backend
	rec  *realrun.Recorder
	key  string
	msgs []string
}

func (e *env) errorf(format string, args ...any) {
	e.msgs = append(e.msgs, fmt.Sprintf(format, args...))
}

func (e *env) fatalf(format string, args ...any) {
	e.errorf(format, args...)
	panic(failNow{})
}

func runOne(ctx context.Context, f Factory, opts Options, name string) (msgs []string) {
	b, stop, err := f()
	if err != nil {
		return []string{fmt.Sprintf("factory: %v", err)}
	}
	if stop != nil {
		defer stop()
	}
	clk, _ := b.(backend.Clock)
	rec, err := realrun.NewRecorder(ctx, opts.Info, clk)
	if err != nil {
		return []string{err.Error()}
	}
	e := &env{name: name, opts: opts, b: b, rec: rec, key: opts.Key + "/" + name}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(failNow); !ok {
					panic(r)
				}
			}
		}()
		properties[name](ctx, e)
	}()
	if name == "Linearizable" {
		return e.msgs // checked by its own run
	}
	h, err := rec.Finish(ctx)
	if err != nil {
		return append(e.msgs, err.Error())
	}
	return append(e.msgs, judge(ctx, h, opts)...)
}

// judge checks a history and renders every violation.
func judge(ctx context.Context, h *model.History, opts Options) []string {
	cr, err := checker.Check(ctx, h, checker.Options{Timeout: opts.CheckTimeout})
	if err != nil {
		var b strings.Builder
		model.WriteHistory(&b, h)
		return []string{"the recorded history is malformed: " + err.Error(), "the history:\n" + b.String()}
	}
	var msgs []string
	for _, v := range cr.Violations {
		msgs = append(msgs, fmt.Sprintf("history violates %s (lines %s): %s", v.Property, joinInts(v.Lines), v.Explanation))
	}
	if cr.Undecided() {
		msgs = append(msgs, "history: linearizability undecided within the budget")
	}
	if len(msgs) > 0 {
		var b strings.Builder
		model.WriteHistory(&b, h)
		msgs = append(msgs, "the history:\n"+b.String())
	}
	return msgs
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// result is one call's outcome, for messages.
type result struct {
	backend.Response
	answered bool
}

func (r result) String() string {
	switch {
	case !r.answered:
		return "no answer"
	case !r.OK:
		return "refused (" + r.Reason + ")"
	case r.Fence != 0:
		return fmt.Sprintf("ok, fence %d", r.Fence)
	case r.HasValue:
		return fmt.Sprintf("%q", r.Value)
	}
	return "ok"
}

func (e *env) do(ctx context.Context, owner string, req backend.Request) result {
	req.Key = e.key
	if req.Kind == model.Acquire || req.Kind == model.Renew {
		req.TTL = e.opts.TTL
	}
	resp, ok := e.rec.Do(ctx, e.b, owner, owner, req, e.opts.OpTimeout, false)
	return result{resp, ok}
}

func (e *env) acquire(ctx context.Context, owner string) result {
	return e.do(ctx, owner, backend.Request{Kind: model.Acquire})
}
func (e *env) renew(ctx context.Context, owner string, fence int64) result {
	return e.do(ctx, owner, backend.Request{Kind: model.Renew, Fence: fence})
}
func (e *env) release(ctx context.Context, owner string, fence int64) result {
	return e.do(ctx, owner, backend.Request{Kind: model.Release, Fence: fence})
}
func (e *env) write(ctx context.Context, owner string, fence int64, v string) result {
	return e.do(ctx, owner, backend.Request{Kind: model.Write, Fence: fence, Value: v})
}
func (e *env) read(ctx context.Context) result {
	return e.do(ctx, "reader", backend.Request{Kind: model.Read})
}

// mustAcquire acquires or ends the property.
func (e *env) mustAcquire(ctx context.Context, owner string) int64 {
	r := e.acquire(ctx, owner)
	if !r.answered || !r.OK || r.Fence < 1 {
		e.fatalf("Acquire(%s) = %v, want ok with a fence >= 1 (the key is free)", owner, r)
	}
	return r.Fence
}

// expired is how long after a grant's answer the lease has surely expired:
// TTL, the declared lateness, and slack for scheduling.
func (e *env) expired() time.Duration {
	return e.opts.TTL + e.opts.Info.Uncertainty + e.opts.TTL/5 + 50*time.Millisecond
}

func sleepUntil(ctx context.Context, rec *realrun.Recorder, t time.Duration) {
	d := t - rec.Now()
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Acquire: a free key is granted; the holder's fenced write is accepted and
// read back; release succeeds.
func testAcquire(ctx context.Context, e *env) {
	f := e.mustAcquire(ctx, "A")
	if r := e.write(ctx, "A", f, "a1"); !r.OK {
		e.fatalf("Write(A, fence %d, %q) = %v, want ok: A holds the lease", f, "a1", r)
	}
	if r := e.read(ctx); !r.OK || !r.HasValue || r.Value != "a1" {
		e.errorf("Read() = %v, want %q (A's accepted write)", r, "a1")
	}
	if r := e.release(ctx, "A", f); !r.OK {
		e.errorf("Release(A, fence %d) = %v, want ok: A holds the lease", f, r)
	}
}

// MutualExclusion: while A holds a live lease, B is refused.
func testMutualExclusion(ctx context.Context, e *env) {
	f := e.mustAcquire(ctx, "A")
	if r := e.acquire(ctx, "B"); r.OK {
		e.errorf("Acquire(B) = %v, want refused: A holds fence %d, granted just before with TTL %v", r, f, e.opts.TTL)
	}
	e.release(ctx, "A", f)
}

// NoEarlyExpiry: a lease lives its whole TTL: at 0.7 TTL after the grant
// was asked for, B is still refused and A's write accepted.
func testNoEarlyExpiry(ctx context.Context, e *env) {
	call := e.rec.Now()
	f := e.mustAcquire(ctx, "A")
	sleepUntil(ctx, e.rec, call+e.opts.TTL*7/10)
	if r := e.acquire(ctx, "B"); r.OK {
		e.errorf("Acquire(B) at %v after A's grant = %v, want refused: A's lease (TTL %v) expired early", e.rec.Now()-call, r, e.opts.TTL)
	}
	if r := e.write(ctx, "A", f, "a1"); !r.OK && e.rec.Now()-call < e.opts.TTL {
		e.errorf("Write(A, fence %d) at %v after the grant = %v, want ok: A's lease (TTL %v) is live", f, e.rec.Now()-call, r, e.opts.TTL)
	}
}

// Expiry: a lease nobody renews is taken back: after TTL (plus the declared
// lateness), B is granted, with a larger fence.
func testExpiry(ctx context.Context, e *env) {
	f := e.mustAcquire(ctx, "A")
	sleepUntil(ctx, e.rec, e.rec.Now()+e.expired())
	r := e.acquire(ctx, "B")
	if !r.OK {
		e.errorf("Acquire(B) %v after A's grant (TTL %v) = %v, want ok: A's lease expired", e.expired(), e.opts.TTL, r)
	} else if r.Fence <= f {
		e.errorf("Acquire(B) = fence %d, want > %d (A's)", r.Fence, f)
	}
}

// Renew: renewals every TTL/3 keep the lease past its first TTL.
func testRenew(ctx context.Context, e *env) {
	f := e.mustAcquire(ctx, "A")
	start := e.rec.Now()
	for e.rec.Now()-start < 2*e.opts.TTL {
		sleepUntil(ctx, e.rec, e.rec.Now()+e.opts.TTL/3)
		if r := e.renew(ctx, "A", f); !r.OK {
			e.fatalf("Renew(A, fence %d) at %v = %v, want ok: A renewed every TTL/3", f, e.rec.Now()-start, r)
		}
	}
	if r := e.acquire(ctx, "B"); r.OK {
		e.errorf("Acquire(B) = %v, want refused: A renewed its lease every TTL/3 for 2 TTLs", r)
	}
	if r := e.write(ctx, "A", f, "a1"); !r.OK {
		e.errorf("Write(A, fence %d) after 2 TTLs of renewals = %v, want ok", f, r)
	}
}

// RenewAfterExpiry: an expired lease cannot be renewed.
func testRenewAfterExpiry(ctx context.Context, e *env) {
	f := e.mustAcquire(ctx, "A")
	sleepUntil(ctx, e.rec, e.rec.Now()+e.expired())
	if r := e.renew(ctx, "A", f); r.OK {
		e.errorf("Renew(A, fence %d) %v after the grant (TTL %v) = %v, want refused: the lease expired", f, e.expired(), e.opts.TTL, r)
	}
}

// Release: a released key is granted at once; a second release by the old
// holder fails and does not free the new holder's lease.
func testRelease(ctx context.Context, e *env) {
	fa := e.mustAcquire(ctx, "A")
	if r := e.release(ctx, "A", fa); !r.OK {
		e.fatalf("Release(A, fence %d) = %v, want ok: A holds the lease", fa, r)
	}
	fb := e.mustAcquire(ctx, "B")
	if r := e.release(ctx, "A", fa); r.OK {
		e.errorf("Release(A, fence %d) again = %v, want refused: B holds fence %d", fa, r, fb)
	}
	if r := e.acquire(ctx, "C"); r.OK {
		e.errorf("Acquire(C) = %v, want refused: B holds fence %d (A's double release must not free it)", r, fb)
	}
	if r := e.write(ctx, "B", fb, "b1"); !r.OK {
		e.errorf("Write(B, fence %d) = %v, want ok: B holds the lease", fb, r)
	}
}

// FenceIncreases: every grant's fence is larger than the previous one's
// (by exactly one for sequential fences).
func testFenceIncreases(ctx context.Context, e *env) {
	var last int64
	for i := 0; i < 6; i++ {
		owner := []string{"A", "B"}[i%2]
		f := e.mustAcquire(ctx, owner)
		switch {
		case last != 0 && f <= last:
			e.errorf("Acquire(%s) = fence %d, want > %d (the previous grant's)", owner, f, last)
		case last != 0 && e.opts.Info.Fences == model.Sequential && f != last+1:
			e.errorf("Acquire(%s) = fence %d, want %d (sequential fences)", owner, f, last+1)
		}
		last = f
		if r := e.release(ctx, owner, f); !r.OK {
			e.fatalf("Release(%s, fence %d) = %v, want ok", owner, f, r)
		}
	}
}

// StaleFence: a write under an older fence is refused, even from the
// current holder.
func testStaleFence(ctx context.Context, e *env) {
	f1 := e.mustAcquire(ctx, "A")
	e.release(ctx, "A", f1)
	f2 := e.mustAcquire(ctx, "A")
	if r := e.write(ctx, "A", f1, "stale"); r.OK {
		e.errorf("Write(A, fence %d) = %v, want refused: the current fence is %d", f1, r, f2)
	}
	if r := e.write(ctx, "A", f2, "fresh"); !r.OK {
		e.errorf("Write(A, fence %d) = %v, want ok: A holds fence %d", f2, r, f2)
	}
}

// WriteAfterExpiry: the holder's write after its lease expired is refused,
// even when nobody took the lease since.
func testWriteAfterExpiry(ctx context.Context, e *env) {
	f := e.mustAcquire(ctx, "A")
	sleepUntil(ctx, e.rec, e.rec.Now()+e.expired())
	if r := e.write(ctx, "A", f, "late"); r.OK {
		e.errorf("Write(A, fence %d) %v after the grant (TTL %v) = %v, want refused: the lease expired", f, e.expired(), e.opts.TTL, r)
	}
}

// Zombie: the article's GC pause. A pauses past its TTL; B is granted; A's
// write under the old fence, arriving before B writes anything, is
// refused; B's is accepted and read back.
func testZombie(ctx context.Context, e *env) {
	fa := e.mustAcquire(ctx, "A")
	if r := e.write(ctx, "A", fa, "a1"); !r.OK {
		e.fatalf("Write(A, fence %d) = %v, want ok", fa, r)
	}
	sleepUntil(ctx, e.rec, e.rec.Now()+e.expired())
	fb := e.mustAcquire(ctx, "B")
	if r := e.write(ctx, "A", fa, "a2-zombie"); r.OK {
		e.errorf("Write(A, fence %d) after A paused past its TTL = %v, want refused: B holds fence %d", fa, r, fb)
	}
	if r := e.write(ctx, "B", fb, "b1"); !r.OK {
		e.errorf("Write(B, fence %d) = %v, want ok: B holds the lease", fb, r)
	}
	if r := e.read(ctx); !r.HasValue || r.Value != "b1" {
		e.errorf("Read() = %v, want %q", r, "b1")
	}
}

// Linearizable: three holders following the article's protocol and a
// reader, for five TTLs, with a holder paused past its TTL, a holder
// crashed, renewals dropped and a drifting holder clock; the history must
// be linearizable and keep the fencing invariants.
func testLinearizable(ctx context.Context, e *env) {
	shared := &noClose{e.b}
	tg := realrun.Target{Info: e.opts.Info, Open: func(context.Context, string) (backend.Backend, error) { return shared, nil }}
	cfg := realrun.Config{Seed: 1, Duration: 5 * e.opts.TTL, TTL: e.opts.TTL, Key: e.key, OpTimeout: e.opts.OpTimeout,
		Faults: []faults.Kind{faults.Pause, faults.Crash, faults.DropHeartbeats, faults.ClockDrift}}
	res, err := realrun.Run(ctx, tg, cfg)
	if err != nil {
		e.fatalf("run: %v", err)
	}
	e.msgs = append(e.msgs, judge(ctx, res.History, e.opts)...)
}

// noClose shares one backend among the runner's clients.
type noClose struct{ backend.Backend }

func (noClose) Close() error { return nil }

func (n *noClose) ServerNow(ctx context.Context) (time.Time, error) {
	if c, ok := n.Backend.(backend.Clock); ok {
		return c.ServerNow(ctx)
	}
	return time.Time{}, errors.New("no server clock")
}
