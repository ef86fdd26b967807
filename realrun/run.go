package realrun

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// Target is a backend to run against.
type Target struct {
	Info backend.Info
	// Addr is the server's host:port. When set, every client process gets
	// its own TCP proxy in front of it (for delay, partition and the
	// connection freeze of a paused holder); when empty, those faults are
	// not applicable.
	Addr string
	// Open connects one client to addr (the server's own or a proxy's).
	Open func(ctx context.Context, addr string) (backend.Backend, error)
	// Server, when set, is a server process the harness started and may
	// stop and resume (the coordinator-crash fault).
	Server Server
}

// Config is one run. The zero value means the defaults.
type Config struct {
	Seed     uint64
	Duration time.Duration // workload time; default 10s (runs end a little later: paused holders finish)
	TTL      time.Duration // default 2s
	Holders  int           // default 3
	Readers  int           // default 1; negative: none
	Key      string        // the lease name; default "k"
	Faults   []faults.Kind // injected; must be Applicable
	// OpTimeout bounds every request; past it the outcome is unknown.
	// Default TTL/3.
	OpTimeout time.Duration
	// Log, when set, receives a line per injected fault, one call at a time.
	Log func(format string, args ...any)
}

func (c *Config) defaults() {
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.TTL <= 0 {
		c.TTL = 2 * time.Second
	}
	if c.Holders <= 0 {
		c.Holders = 3
	}
	if c.Readers < 0 {
		c.Readers = 0
	} else if c.Readers == 0 {
		c.Readers = 1
	}
	if c.Key == "" {
		c.Key = "k"
	}
	if c.OpTimeout <= 0 {
		c.OpTimeout = c.TTL / 3
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	} else {
		// Holders, the server faults and the watchdog log from their own
		// goroutines; the caller's Log need not be safe for that.
		log, mu := c.Log, new(sync.Mutex)
		c.Log = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			log(format, args...)
		}
	}
}

// Result is a recorded run.
type Result struct {
	History *model.History
	Ops     int
	Faults  map[faults.Kind]int // injected, by kind
	// Calibration of the server clock (exact mode): the bound on the error of
	// the mapping onto the client's timeline, and how much the offset moved
	// over the run.
	CalibrationError, Drift time.Duration
}

// Run runs the workload against t and records the history. Errors are
// about the run itself (no server, no clock, a backend that stopped
// answering mid-run: then the Result holds the partial history); what the
// backend did wrong is in the history, for the checker.
func Run(ctx context.Context, t Target, cfg Config) (*Result, error) {
	cfg.defaults()
	for _, k := range cfg.Faults {
		if !Applicable(t, k) {
			return nil, fmt.Errorf("fault %q is not applicable to %s", k, t.Info.Name)
		}
	}
	r := &runner{t: t, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), faults: map[faults.Kind]int{}}
	defer r.closeAll()
	nproc := cfg.Holders + cfg.Readers
	for i := 0; i < nproc; i++ {
		if err := r.open(ctx); err != nil {
			return nil, err
		}
	}
	clk, _ := r.clients[0].b.(backend.Clock)
	rec, err := NewRecorder(ctx, t.Info, clk)
	if err != nil {
		return nil, err
	}
	r.rec = rec
	r.plan = newPlan(r.rng, cfg)
	for i := 0; i < cfg.Holders; i++ {
		if off, ok := r.plan.offset[i]; ok {
			r.injected(faults.ClockOffset, "h%d's clock is %v off true time", i+1, off.Round(time.Millisecond))
		}
	}
	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.end = r.now() + cfg.Duration
	for i := 0; i < cfg.Holders; i++ {
		h := &holder{r: r, idx: i, name: fmt.Sprintf("h%d", i+1), cl: r.clients[i], rng: rand.New(rand.NewPCG(cfg.Seed+uint64(i)+1, 7))}
		wg.Add(1)
		go func() { defer wg.Done(); h.run(runCtx) }()
	}
	for i := 0; i < cfg.Readers; i++ {
		rd := &reader{r: r, name: fmt.Sprintf("r%d", i+1), cl: r.clients[cfg.Holders+i]}
		wg.Add(1)
		go func() { defer wg.Done(); rd.run(runCtx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); r.serverFaults(runCtx) }()
	watched := make(chan struct{})
	go func() { defer close(watched); r.watch(runCtx, cancel) }()
	wg.Wait()
	cancel()
	<-watched
	if r.deadErr != nil {
		// The partial history, for the user to look at; without an end
		// calibration when the server's clock cannot be read any more.
		fctx, fcancel := context.WithTimeout(ctx, 2*time.Second)
		defer fcancel()
		if h, err := rec.Finish(fctx); err == nil {
			return &Result{History: h, Ops: len(h.Ops), Faults: r.faults}, r.deadErr
		}
		return nil, r.deadErr
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if r.serverErr != nil {
		return nil, fmt.Errorf("%s: restarting the server: %w", t.Info.Name, r.serverErr)
	}
	h, err := rec.Finish(ctx)
	if err != nil {
		return nil, err
	}
	if d := r.restartSlack(h); d > 0 {
		h.Header.ClockUncertainty += int64(d / unit)
		cfg.Log("%8.3fs %-17s %s restores its leases with a fresh TTL: clock uncertainty +%v for this run",
			r.now().Seconds(), faults.CoordinatorCrash, t.Info.Name, d.Round(time.Millisecond))
	}
	return &Result{History: h, Ops: len(h.Ops), Faults: r.faults, CalibrationError: rec.CalibrationError, Drift: rec.Drift}, nil
}

// Applicable reports whether fault kind k can be injected into t for real.
func Applicable(t Target, k faults.Kind) bool {
	switch k {
	case faults.Pause, faults.ClockOffset, faults.ClockDrift, faults.DropHeartbeats, faults.Crash:
		return true
	case faults.Delay, faults.Partition:
		return t.Addr != ""
	case faults.CoordinatorCrash:
		return t.Server != nil
	}
	return false
}

// ApplicableKinds filters kinds down to those applicable to t.
func ApplicableKinds(t Target, kinds []faults.Kind) []faults.Kind {
	var out []faults.Kind
	for _, k := range kinds {
		if Applicable(t, k) {
			out = append(out, k)
		}
	}
	return out
}

type client struct {
	b     backend.Backend
	proxy *Proxy // nil without Target.Addr
}

type runner struct {
	t       Target
	cfg     Config
	rng     *rand.Rand
	clients []*client
	plan    *plan
	end     time.Duration

	rec *Recorder

	mu     sync.Mutex
	faults map[faults.Kind]int
	seq    atomic.Int64 // unique write values
	// serverErr: the harness could not bring the server back.
	serverErr error
	// outage is the longest restart, from the kill until the server took
	// requests again.
	outage time.Duration
	// down counts the server faults in progress; quietFrom is when the
	// last one ended (silence before it is the harness's doing).
	down      int
	quietFrom time.Duration
	// deadErr: the backend stopped answering during the workload.
	deadErr error
}

// deadAfter is how long every client may go without an answer before the
// backend is declared dead or hung: holders and the reader send something
// every TTL/12 to TTL/3, so a live backend answers someone much sooner.
func (c *Config) deadAfter() time.Duration { return max(5*time.Second, c.TTL) }

// watch ends the run when no request has been answered for deadAfter
// during the workload, outside the server faults the harness injects: a
// backend that died or hangs gives a clear error within seconds instead of
// a history of unknowns.
func (r *runner) watch(ctx context.Context, cancel context.CancelFunc) {
	limit := r.cfg.deadAfter()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if r.now() >= r.end {
			return // the workload is over: paused holders finish in silence
		}
		since, last := r.rec.Silence()
		r.mu.Lock()
		down, from := r.down, r.quietFrom
		r.mu.Unlock()
		if down > 0 || min(since, r.now()-from) < limit {
			continue
		}
		if last == "" {
			last = "none"
		}
		r.deadErr = fmt.Errorf("%s stopped answering: no client got a reply for %v (last error: %s)",
			r.t.Info.Name, limit, last)
		cancel()
		return
	}
}

// serverDown brackets a server fault for the watchdog.
func (r *runner) serverDown(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.down++
		return
	}
	r.down--
	r.quietFrom = r.now()
}

// restartSlack is how much longer than their deadlines leases may have
// lived because the server restarted (Info.LeasesRestart): the outage, the
// longest TTL granted, and the backend's RestartGrace.
func (r *runner) restartSlack(h *model.History) time.Duration {
	r.mu.Lock()
	outage := r.outage
	r.mu.Unlock()
	if !r.t.Info.LeasesRestart || outage == 0 {
		return 0
	}
	var ttl int64
	for _, op := range h.Ops {
		ttl = max(ttl, op.TTL)
	}
	return outage + time.Duration(ttl)*unit + r.t.Info.RestartGrace
}

func (r *runner) now() time.Duration { return r.rec.Now() }

func (r *runner) grantTTL(d time.Duration) time.Duration { return r.rec.GrantTTL(d) }

// do sends one request on c and records it.
func (r *runner) do(ctx context.Context, c *client, process, owner string, req backend.Request, drop bool) (backend.Response, bool) {
	req.Key = r.cfg.Key
	return r.rec.Do(ctx, c.b, process, owner, req, r.cfg.OpTimeout, drop)
}

func (r *runner) open(ctx context.Context) error {
	c := &client{}
	addr := r.t.Addr
	if addr != "" {
		p, err := NewProxy(addr)
		if err != nil {
			return err
		}
		c.proxy, addr = p, p.Addr()
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := r.t.Open(octx, addr)
	if err != nil {
		if c.proxy != nil {
			c.proxy.Close()
		}
		return fmt.Errorf("%s: connect: %w", r.t.Info.Name, err)
	}
	c.b = b
	r.clients = append(r.clients, c)
	return nil
}

// closeAll cleans up through the first client and closes every client,
// all at once: a dead backend's clients may each take seconds to give up.
func (r *runner) closeAll() {
	if len(r.clients) == 0 {
		return
	}
	if cl, ok := r.clients[0].b.(backend.Cleaner); ok {
		d := 10 * time.Second
		if r.deadErr != nil {
			d = 2 * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), d)
		cl.Cleanup(ctx)
		cancel()
	}
	var wg sync.WaitGroup
	for _, c := range r.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.b.Close()
			if c.proxy != nil {
				c.proxy.Close()
			}
		}()
	}
	wg.Wait()
}

func (r *runner) injected(k faults.Kind, format string, args ...any) {
	r.mu.Lock()
	r.faults[k]++
	r.mu.Unlock()
	r.cfg.Log("%8.3fs %-17s "+format, append([]any{r.now().Seconds(), k}, args...)...)
}
