package realrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/recording"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// MinTTL is the shortest real lease TTL RunScenario maps a scenario onto by
// itself: below it, the goroutine scheduler and the garbage collector of
// this very process (milliseconds on a loaded machine) are a large part of
// a TTL/3 timeout.
const MinTTL = time.Second

// Options say how RunScenario maps a scenario onto a real run.
type Options struct {
	// TTL is the real TTL the scenario's TTL becomes; every time in the
	// scenario (starts, work, faults, the network's delay, the horizon) is
	// scaled by the same factor. It is raised to the backend's minimum and
	// rounded up to its granularity. 0 chooses AutoTTL.
	TTL time.Duration
	// Retarget makes holder faults strike whichever holder believes it
	// holds the lease when they fall due (or the next one to believe),
	// instead of the scenario's target: the generated workload's faults then
	// hit the holder that matters. The fault records and Result.Scenario
	// name the holder struck. A replay leaves it off.
	Retarget bool
	// OpTimeout, when set, bounds every backend call in real time; past it
	// the outcome is unknown. By default a call lasts until its machine
	// gives up on it (its own timeout, on its own clock: TTL/3 unless the
	// scenario says) or the run ends: a reply that arrives while its holder
	// is paused or frozen is handed to it when it runs again, as in the
	// simulator.
	OpTimeout time.Duration
	// NewHolder builds the holder machines; nil is holder.New, the
	// reference. A holder mutant's switch plugs in here, as in sim.Options.
	NewHolder func(holder.Config) machine.Holder
	// Log receives a line per injected fault; calls are serialized.
	Log func(format string, args ...any)
	// Extra is Config.Extra: a client of its own beside the processes.
	Extra func(ctx context.Context, rec *Recorder, b backend.Backend, end time.Duration)
}

// AutoTTL is the real TTL a scenario with TTL ttl (ms) is run at on a
// backend described by info: at least the scenario's own, MinTTL, the
// backend's minimum, ten times its declared clock uncertainty (so that a
// write late by a fraction of a TTL is provably late) and twice its
// declared expiry lateness (so that a lease the server frees late is
// handed on about when the scenario has it handed on: etcd's, typically
// half a second late of a declared 5 s), rounded up to the backend's
// granularity.
func AutoTTL(info backend.Info, ttl int64) time.Duration {
	d := max(time.Duration(ttl)*time.Millisecond, MinTTL, 10*info.Uncertainty, 2*info.ExpiryLateness)
	return realTTL(info, d)
}

func realTTL(info backend.Info, d time.Duration) time.Duration {
	d = max(d, info.MinTTL)
	if g := info.TTLGranularity; g > 0 {
		d = (d + g - 1) / g * g
	}
	return max(d, time.Microsecond)
}

// ErrStopped is the error (wrapped) of a run whose backend stopped
// answering mid-run (see Stopped): the watchdog ended it.
var ErrStopped = errors.New("the backend stopped answering")

// DeadAfter is how long the clients of a run may all go without an answer
// while some of them are asking before the backend is declared dead or
// hung: max(5 s, TTL). A live backend answers much sooner: holders and the
// reader send something every TTL/12 to TTL/3.
func DeadAfter(ttl time.Duration) time.Duration { return max(5*time.Second, ttl) }

// clusterRecovery is how much longer than DeadAfter the clients of a
// cluster may go unanswered after a cluster fault ended (cluster.go): a
// member back from isolation deposes the leader by its higher term where
// pre-vote is off (etcd 3.4), and the election and the members' catching
// up (their disks shared with the rest of a busy machine) have left every
// client without an answer for over DeadAfter after the fault, on a live
// cluster.
const clusterRecovery = 5 * time.Second

// RunScenario runs sc against t: its holders (the machines of internal/impl/holder,
// the simulator's own) and its reader as goroutines against the backend,
// its times scaled onto real time, its fault plan applied for real (see the
// package doc for what each fault does), and records the history. Network
// loss and duplication in sc are not reproduced (TCP retransmits, nothing is
// duplicated); its minimum delay is added to every request and reply.
//
// Errors are about the run itself (no server, no clock). When the run
// started but could not finish — the backend stopped answering (ErrStopped,
// within DeadAfter), a server the harness restarted did not come back — the
// Result is returned with the error: the partial history, for the user to
// look at, never to be judged.
func RunScenario(ctx context.Context, t Target, sc *scenario.Scenario, opt Options) (*Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if opt.Log == nil {
		opt.Log = func(string, ...any) {}
	}
	if opt.NewHolder == nil {
		opt.NewHolder = func(c holder.Config) machine.Holder { return holder.New(c) }
	}
	ttl := AutoTTL(t.Info, sc.TTL)
	if opt.TTL > 0 {
		ttl = realTTL(t.Info, opt.TTL)
	}
	r := &runner{t: t, sc: sc, opt: opt, num: int64(ttl / time.Microsecond), den: sc.TTL,
		injected: map[faults.Kind]int{}, partial: map[faults.Kind]int{}}
	r.ttl = r.us(sc.TTL)
	r.lat = r.us(sc.Network.MinDelay)
	defer r.closeAll()

	if t.Cluster != nil {
		sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		err := t.Cluster.Settle(sctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s: the cluster did not settle before the run: %w", t.Info.Name, err)
		}
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	admin, err := t.Open(octx, t.Addr)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %w", t.Info.Name, err)
	}
	r.admin = admin
	clk, _ := admin.(backend.Clock)
	if r.rec, err = NewRecorder(ctx, t.Info, clk); err != nil {
		return nil, err
	}
	r.hearRenewals(admin)
	if err := r.setup(ctx); err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// The scenario's time 0 is now, on the recorder's timeline (which
	// started before the calibration and the connections).
	r.start = r.now()
	r.end = r.start + r.us(sc.Horizon)
	for _, p := range r.procs {
		p.start += r.start
	}
	for _, pf := range append(append(r.board.holder, r.board.server...), r.board.cluster...) {
		pf.at += r.start
	}
	r.applyOffsets()
	var wg sync.WaitGroup
	var holders sync.WaitGroup
	r.holdersDone = make(chan struct{})
	for _, p := range r.procs {
		wg.Add(1)
		if !p.reader {
			holders.Add(1)
		}
		go func() {
			defer wg.Done()
			p.run(runCtx)
			if !p.reader {
				holders.Done()
			}
		}()
	}
	go func() { holders.Wait(); close(r.holdersDone) }()
	if opt.Extra != nil {
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		b, err := t.Open(octx, t.Addr)
		cancel()
		if err != nil {
			stop()
			wg.Wait()
			return nil, fmt.Errorf("%s: connect: %w", t.Info.Name, err)
		}
		defer b.Close()
		wg.Add(1)
		go func() { defer wg.Done(); opt.Extra(runCtx, r.rec, b, time.Duration(r.end)*time.Microsecond) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); r.serverLoop(runCtx) }()
	wg.Add(1)
	go func() { defer wg.Done(); r.clusterLoop(runCtx) }()
	if t.Cluster != nil {
		wg.Add(1)
		go func() { defer wg.Done(); r.watchLeader(runCtx) }()
	}
	watched := make(chan struct{})
	go func() { defer close(watched); r.watch(runCtx, stop) }()
	wg.Wait()
	stop()
	<-watched
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var runErr error
	r.mu.Lock()
	switch {
	case r.deadErr != nil:
		runErr = r.deadErr
	case r.serverErr != nil:
		runErr = fmt.Errorf("%s: restarting the server: %w", t.Info.Name, r.serverErr)
	}
	r.mu.Unlock()
	if runErr != nil {
		r.dead.Store(true) // the cleanup gets a short deadline
		// The partial history; its end calibration may fail on a dead
		// server, and then the start's alone maps `at`.
		fctx, fcancel := context.WithTimeout(ctx, 2*time.Second)
		defer fcancel()
		h, err := r.rec.FinishPartial(fctx)
		if err != nil {
			return nil, runErr
		}
		return r.result(h, ttl), runErr
	}
	h, err := r.rec.Finish(ctx)
	if err != nil {
		return nil, err
	}
	if d := r.restartSlack(h); d > 0 {
		h.Header.ClockUncertainty += int64(d / unit)
		r.logf("%11s %-17s %s restores its leases with a fresh TTL after a restart: clock uncertainty +%v for this run",
			logTime(r.now()), faults.CoordinatorCrash, t.Info.Name, inMs(d))
	}
	if d := r.leaderSlack(h); d > 0 {
		h.Header.ExpiryLateness += int64(d / unit)
		r.logf("%11s %-17s %s's new leader restarts every lease's TTL: expiry lateness +%v for this run (late freeing only; a grant still needs the expiry)",
			logTime(r.now()), LeaderRecord, t.Info.Name, inMs(d))
	}
	return r.result(h, ttl), nil
}

// result assembles the Result from the recorded history h.
func (r *runner) result(h *model.History, ttl time.Duration) *Result {
	end := r.now()
	r.mu.Lock()
	for i := range r.beliefs {
		if r.beliefs[i].Open {
			r.beliefs[i].To = end
		}
	}
	sort.SliceStable(r.records, func(i, j int) bool { return r.records[i].Start < r.records[j].Start })
	h.Faults = r.records
	recording.Finish(h) // numbered again: the fault records come before the ops
	res := &Result{History: h, Ops: len(h.Ops), Faults: r.injected, Partial: r.partial, Beliefs: r.beliefs,
		Scenario: r.asRun(), TTL: ttl, Scale: float64(r.num) / float64(r.den),
		CalibrationError: r.rec.CalibrationError, Drift: r.rec.Drift, Traffic: r.traffic()}
	r.mu.Unlock()
	res.Losses = r.judgeLosses(h, end) // after Finish: the lines it names are the file's
	return res
}

// watch ends the run (stop) when the backend stops answering during the
// workload: some client has been asking for DeadAfter and no client got
// an answer in that time, outside the faults that cut clients off on
// purpose (a stopped or restarting server, a partition) and the DeadAfter
// after each of them. A backend that died or hangs gives a clear error
// within seconds instead of a history of unknowns.
func (r *runner) watch(ctx context.Context, stop context.CancelFunc) {
	limit := DeadAfter(time.Duration(r.ttl) * time.Microsecond)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.holdersDone:
			return // the workload is over: nobody asks any more
		case <-t.C:
		}
		now := r.rec.Now()
		if now >= time.Duration(r.end)*time.Microsecond {
			return
		}
		asking, last := r.rec.Silence()
		r.mu.Lock()
		cut, from := r.cut, r.quietFrom
		r.mu.Unlock()
		if asking < 0 || cut > 0 || min(asking, now-from) < limit {
			continue
		}
		if last == "" {
			last = "none"
		}
		r.mu.Lock()
		r.deadErr = fmt.Errorf("%s: %w: no client got a reply for %v while they kept asking (last error: %s); the run was ended, its partial history kept",
			r.t.Info.Name, ErrStopped, limit, last)
		r.mu.Unlock()
		stop()
		return
	}
}

// cutOff brackets a fault that cuts clients off on purpose, for the
// watchdog: a stopped or restarting server, a partition.
func (r *runner) cutOff(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.cut++
		return
	}
	r.cut--
	r.quietFrom = max(r.quietFrom, time.Duration(r.now())*time.Microsecond)
}

// excuse tells the watchdog that a fault cuts a client off on purpose
// until until (µs): silence before then, and for DeadAfter after, is the
// harness's doing.
func (r *runner) excuse(until int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.quietFrom = max(r.quietFrom, time.Duration(until)*time.Microsecond)
}

// restartSlack is how much longer than their deadlines leases may have
// lived because the server restarted and restores its leases with a fresh
// TTL (Info.LeasesRestart): the longest outage, the longest TTL granted,
// and the backend's RestartGrace. Nobody could renew while the server was
// down, so by design a lease outlives its deadline that much: the lease
// clock lagged true time, and the run declares it (docs/design.md §5: a run is
// never flagged for the clock it was given).
func (r *runner) restartSlack(h *model.History) time.Duration {
	r.mu.Lock()
	outage := r.outage
	r.mu.Unlock()
	return r.restartedTTLs(h, outage)
}

// restartedTTLs is the slack of leases whose TTL restarted after a span
// nobody could renew in (a server restart's outage, a leader change): the
// span, the longest TTL granted and the backend's RestartGrace; none where
// the backend does not restart leases (Info.LeasesRestart) or nothing did.
func (r *runner) restartedTTLs(h *model.History, span time.Duration) time.Duration {
	if !r.t.Info.LeasesRestart || span == 0 {
		return 0
	}
	var ttl int64
	for _, op := range h.Ops {
		ttl = max(ttl, op.TTL)
	}
	return span + time.Duration(ttl)*unit + r.t.Info.RestartGrace
}

// leaderSlack is how much later than their deadlines leases may have been
// freed because the cluster's leader changed and the new leader restarts
// every lease's TTL (Info.LeasesRestart on a Target.Cluster: etcd's lessor
// Promote refreshes each lease to its TTL plus an election timeout,
// ZooKeeper's new leader starts every session's timeout afresh): the
// longest span nobody could renew (leaderChanged), the longest TTL granted
// and RestartGrace. Only late: the new leader never frees a lease before
// its holder's deadline, so it is expiry lateness (the old holder's late
// renew or write accepted, another's acquire refused late), and a grant to
// another before the deadline is still a violation.
func (r *runner) leaderSlack(h *model.History) time.Duration {
	r.mu.Lock()
	span := r.leaderLate
	r.mu.Unlock()
	return r.restartedTTLs(h, span)
}

// runner is one run: the processes, the fault plan and what was recorded.
type runner struct {
	t        Target
	sc       *scenario.Scenario
	opt      Options
	num, den int64 // scenario time x is x·num/den µs
	ttl, lat int64 // real TTL and ambient one-way latency, µs

	admin   backend.Backend // calibration and cleanup, straight to the server
	rec     *Recorder
	procs   []*proc
	board   *board
	offsets []faults.Fault

	start, end  int64 // µs on the recorder's timeline
	holdersDone chan struct{}

	logMu sync.Mutex

	mu        sync.Mutex
	injected  map[faults.Kind]int
	partial   map[faults.Kind]int
	records   []model.FaultRecord
	beliefs   []Belief
	serverErr error // the harness could not bring the server back
	deadErr   error // the watchdog ended the run
	// outage is the longest restart, from the kill until the server took
	// requests again.
	outage time.Duration
	// leaderLate is the longest span a leader change left leases
	// unrenewable (leaderChanged): one-sided, it widens the history's
	// expiry lateness, not its clock uncertainty.
	leaderLate time.Duration
	// clusterSince is when the last cluster fault that hit the leader struck.
	clusterSince int64
	// cut counts the faults in progress that cut clients off on purpose;
	// quietFrom is when the last one ended (on the recorder's clock).
	cut       int
	quietFrom time.Duration

	dead atomic.Bool // the run ended on an error: clean up in a hurry

	// observed: the backend.Holding values whose background renewals the
	// recorder already hears (clients may share one).
	obsMu    sync.Mutex
	observed []backend.Holding

	// watches are the holds of a library that signals its loss
	// (losswatch.go); wholeStops when an in-process Stopper had each
	// node's whole client stopped. Under mu.
	watches    []*lossWatch
	wholeStops map[string][]Span
}

// us scales a scenario time (ms) to real µs.
func (r *runner) us(x int64) int64 { return x * r.num / r.den }

// now is the recorder's clock: µs since it started, monotonic.
func (r *runner) now() int64 { return int64(r.rec.Now() / time.Microsecond) }

// setup opens a client (and a proxy) per process and lays out the plan.
func (r *runner) setup(ctx context.Context) error {
	sc := r.sc
	r.board = &board{retarget: r.opt.Retarget, ttl: r.ttl}
	for _, hp := range sc.Holders {
		p := r.newProc(hp.Name, false)
		p.start = r.us(hp.Start)
		p.prog = hp
		r.procs = append(r.procs, p)
	}
	if sc.ReadEvery > 0 {
		r.procs = append(r.procs, r.newProc("r1", true))
	}
	for _, p := range r.procs {
		if err := p.connect(ctx); err != nil {
			return err
		}
	}
	for i, f := range sc.Faults {
		switch {
		case slices.Contains(faults.ClusterKinds, f.Kind):
			r.board.cluster = append(r.board.cluster, &planned{idx: i, f: f, at: r.us(f.At)})
		case f.Target == faults.Coordinator || f.Target == faults.Resource:
			r.board.server = append(r.board.server, &planned{idx: i, f: f, at: r.us(f.At)})
		case f.Kind == faults.ClockOffset:
			r.offsets = append(r.offsets, f) // from the start, on the holder named: nothing to retarget
		default:
			r.board.holder = append(r.board.holder, &planned{idx: i, f: f, at: r.us(f.At)})
		}
	}
	byAt := func(ps []*planned) {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].at < ps[j].at })
	}
	byAt(r.board.holder)
	byAt(r.board.server)
	byAt(r.board.cluster)
	return nil
}

// applyOffsets sets the clock offsets, which hold from the start; two on
// one holder add up, as in the simulator and vclient.
func (r *runner) applyOffsets() {
	for _, f := range r.offsets {
		p := r.proc(f.Target)
		p.clock.Offset(r.us(f.Amount))
		r.count(f.Kind, model.FaultRecord{Kind: string(f.Kind), Target: p.process, Start: r.start, Amount: r.us(f.Amount),
			Detail: fmt.Sprintf("%s's clocks are %v off true time from the start (harmless to a holder that measures its lease relatively on its monotonic clock)", p.process, msUS(r.us(f.Amount)))})
	}
}

func (r *runner) proc(node string) *proc {
	for _, p := range r.procs {
		if p.node == node {
			return p
		}
	}
	panic("realrun: no process " + node) // Validate guarantees targets exist
}

func (r *runner) newProc(node string, reader bool) *proc {
	return &proc{r: r, node: node, process: node, owner: node, reader: reader, inc: 1,
		wakeLocal: machine.Never, belief: -1, results: make(chan result, 4)}
}

// holderConfig is the machine's configuration for an incarnation, in µs.
func (r *runner) holderConfig(p scenario.Process, process, owner string) holder.Config {
	work := make([]holder.Item, len(p.Work))
	for i, it := range p.Work {
		work[i] = holder.Item{Work: r.us(it.Work), Writes: it.Writes}
	}
	return holder.Config{Key: r.sc.Key, Owner: owner, Name: process, TTL: r.ttl, RhoPPM: r.sc.RhoPPM,
		Timeout: r.us(p.Timeout), RetryMax: r.us(p.RetryMax), Work: work,
		// A lock library grants no fence: its holders write without one (and
		// only a fenced write could refuse a late one).
		NoFences: r.t.Info.Fences == backend.NoFences}
}

// opTimeout is the hard bound on one backend call: OpTimeout, or the rest
// of the run.
func (r *runner) opTimeout(now int64) time.Duration {
	if r.opt.OpTimeout > 0 {
		return r.opt.OpTimeout
	}
	return time.Duration(max(r.end-now, 0))*time.Microsecond + time.Second
}

// closeAll closes every client, all at once (a dead backend's clients may
// each take seconds to give up), then removes what the run stored through
// the admin client: within 10 s, or 2 s when the run ended on an error (a
// dead backend will not answer the cleanup either).
func (r *runner) closeAll() {
	var wg sync.WaitGroup
	for _, p := range r.procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.disconnect() }()
	}
	wg.Wait()
	if r.admin != nil {
		if cl, ok := r.admin.(backend.Cleaner); ok {
			d := 10 * time.Second
			if r.dead.Load() {
				d = 2 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), d)
			cl.Cleanup(ctx)
			cancel()
		}
		r.admin.Close()
	}
}

func (r *runner) logf(format string, args ...any) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	r.opt.Log(format, args...)
}

// count records a fault injected in full; partialf one applied in part or
// not at all. Both log it and return the record's index (for its end).
func (r *runner) count(k faults.Kind, rec model.FaultRecord) int {
	return r.note(k, rec, false)
}

func (r *runner) partialf(k faults.Kind, rec model.FaultRecord) int {
	rec.Partial = true
	return r.note(k, rec, true)
}

func (r *runner) note(k faults.Kind, rec model.FaultRecord, partial bool) int {
	if rec.Start == 0 && r.rec != nil {
		rec.Start = r.now()
	}
	r.mu.Lock()
	if partial {
		r.partial[k]++
	} else {
		r.injected[k]++
	}
	r.records = append(r.records, rec)
	i := len(r.records) - 1
	r.mu.Unlock()
	tag := ""
	if partial {
		tag = " [partial]"
	}
	r.logf("%11s %-17s %s%s", logTime(rec.Start), k, rec.Detail, tag)
	return i
}

// ended marks record i as ended at end — never before it started: a
// pause of a client process starts when the kernel reported it stopped,
// which may be after the instant the runner took for a fault that ends it
// (a crash at the same step).
func (r *runner) ended(i int, end int64) {
	if i < 0 {
		return
	}
	r.mu.Lock()
	// A fault ended by another that struck in the same step — a crash at
	// the instant a pause struck — may be ended at a time read before its
	// own start was: a process client's pause starts when the kernel
	// reported it stopped, read after the crash's clock. It then ends
	// where it began: a record may not end before it starts.
	r.records[i].End, r.records[i].HasEnd = max(end, r.records[i].Start), true
	r.mu.Unlock()
}

func (r *runner) believe(p *proc, b bool, fence, now int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.belief >= 0 {
		r.beliefs[p.belief].To, r.beliefs[p.belief].Open = now, false
		p.belief = -1
	}
	if b {
		r.beliefs = append(r.beliefs, Belief{Process: p.process, Owner: p.owner, Fence: fence, From: now, Open: true})
		p.belief = len(r.beliefs) - 1
	}
}

// asRun is the scenario with each struck holder fault's target set to the
// holder it struck.
func (r *runner) asRun() *scenario.Scenario {
	sc := *r.sc
	sc.Faults = append(faults.Plan(nil), r.sc.Faults...)
	r.board.mu.Lock()
	for _, pf := range r.board.holder {
		if pf.struck != "" {
			sc.Faults[pf.idx].Target = pf.struck
		}
	}
	r.board.mu.Unlock()
	sc.Implementation = "backend:" + r.t.Info.Name
	return &sc
}

// serverLoop applies the faults on the coordinator (and on the resource,
// which for a real backend is the same server) when they fall due.
func (r *runner) serverLoop(ctx context.Context) {
	for _, pf := range r.board.server {
		if !sleepUntil(ctx, r, pf.at, r.holdersDone) {
			return
		}
		r.serverFault(ctx, pf.f)
	}
}

func (r *runner) serverFault(ctx context.Context, f faults.Fault) {
	name := r.t.Info.Name
	rec := model.FaultRecord{Kind: string(f.Kind), Target: f.Target}
	switch f.Kind {
	case faults.CoordinatorCrash, faults.Freeze:
		down := time.Duration(r.us(f.Duration)) * time.Microsecond
		if rs, ok := r.t.Server.(Restarter); ok && f.Kind == faults.CoordinatorCrash {
			rec.Detail = fmt.Sprintf("%s killed (SIGKILL), restarted on its data after %v", name, inMs(down))
			if r.t.Info.LeasesRestart {
				rec.Detail += fmt.Sprintf("; it restores its leases with a fresh TTL, so the run's clock uncertainty grows by the outage, a TTL and %v", inMs(r.t.Info.RestartGrace))
			}
			i := r.count(f.Kind, rec)
			begin := r.rec.Now()
			r.cutOff(true)
			err := rs.Restart(ctx, down)
			r.cutOff(false)
			r.mu.Lock()
			if err != nil && ctx.Err() == nil {
				r.serverErr = err
			} else if err == nil {
				r.outage = max(r.outage, r.rec.Now()-begin)
			}
			r.mu.Unlock()
			r.ended(i, r.now())
			return
		}
		if r.t.Server == nil {
			rec.Detail = fmt.Sprintf("not applied: the harness does not control %s's server process", name)
			r.partialf(f.Kind, rec)
			return
		}
		var i int
		if f.Kind == faults.Freeze {
			// The fenced resource is the backend itself: freezing it is
			// stopping the server.
			rec.Detail = fmt.Sprintf("%s stopped (SIGSTOP) for %v: the resource is the backend's own store", name, inMs(down))
			i = r.count(f.Kind, rec)
		} else {
			rec.Detail = fmt.Sprintf("%s stopped (SIGSTOP) for %v and resumed, not crashed: it cannot be restarted here, so requests were delayed, not lost", name, inMs(down))
			i = r.partialf(f.Kind, rec)
		}
		r.cutOff(true)
		if err := r.t.Server.Stop(); err != nil {
			r.cutOff(false)
			r.logf("stop: %v", err)
			return
		}
		sleepFor(ctx, down)
		r.t.Server.Cont()
		r.cutOff(false)
		r.ended(i, r.now())
	case faults.ClockStep, faults.ClockOffset:
		amt := time.Duration(r.us(f.Amount)) * time.Microsecond
		rec.Amount = r.us(f.Amount)
		if r.t.Clock == nil {
			rec.Detail = fmt.Sprintf("not applied: %s's clock belongs to its host; stepping it needs the host's clock (or libfaketime under a server the harness starts)", name)
			r.partialf(f.Kind, rec)
			return
		}
		r.t.Clock.StepClock(amt)
		rec.Detail = fmt.Sprintf("the coordinator's clock stepped by %v", inMs(amt))
		r.count(f.Kind, rec)
	default:
		rec.Detail = fmt.Sprintf("not applied: %s on the %s has no real counterpart here", f.Kind, f.Target)
		r.partialf(f.Kind, rec)
	}
}

// sleepUntil waits until the run's clock reads at; false when ctx ended or
// stop closed first.
func sleepUntil(ctx context.Context, r *runner, at int64, stop <-chan struct{}) bool {
	d := time.Duration(at-r.now()) * time.Microsecond
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

func sleepFor(ctx context.Context, d time.Duration) {
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

// board holds the plan's faults until they strike.
type board struct {
	mu       sync.Mutex
	retarget bool
	ttl      int64
	holder   []*planned // holder faults, by At
	server   []*planned // coordinator and resource faults, by At
	cluster  []*planned // faults between a cluster's servers, by At
}

// planned is one fault of the plan: f, due at at (µs since the start).
type planned struct {
	idx    int // index in the scenario's plan
	f      faults.Fault
	at     int64
	taken  bool
	struck string // the node it struck
}

// take returns the holder faults due at now for node: its own; or, when
// retargeting, those due while node believes it holds the lease and runs
// (believes) — every due one that leaves it running, and at most one that
// stops or ends it (exclusive), which needs it free as well (no pause
// armed). writing says whether node is about to write: the faults that
// strike at a write (atWrite) wait for one, for a TTL at most.
func (b *board) take(node string, now int64, believes, free, writing bool) []*planned {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*planned
	for _, pf := range b.holder {
		if pf.taken || pf.at > now {
			continue
		}
		if !b.retarget {
			if pf.f.Target == node {
				pf.taken, pf.struck = true, node
				out = append(out, pf)
			}
			continue
		}
		// An at-write fault overdue by a TTL (no free holder wrote) strikes at
		// any step, as the simulator's pause does.
		waits := atWrite(pf.f.Kind) && !writing && now < pf.at+b.ttl
		ex := exclusive(pf.f.Kind)
		if !believes || waits || ex && !free {
			continue
		}
		pf.taken, pf.struck = true, node
		out = append(out, pf)
		if ex {
			break // it stops or ends the holder: the rest go elsewhere
		}
	}
	return out
}

// exclusive lists the faults that stop or end a holder.
func exclusive(k faults.Kind) bool {
	switch k {
	case faults.Pause, faults.Freeze, faults.Crash, faults.OwnerReuse:
		return true
	}
	return false
}

// atWrite lists the faults a retargeted plan strikes at the lease holder's
// next write, between its re-check and its send: the moment a stop (and,
// for a freeze, a clock that stops with it) turns a checked write into a
// zombie's.
func atWrite(k faults.Kind) bool { return k == faults.Pause || k == faults.Freeze }

// next is the earliest due time after now of a fault node may take, or -1.
func (b *board) next(node string, now int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, pf := range b.holder {
		if !pf.taken && pf.at > now && (b.retarget || pf.f.Target == node) {
			return pf.at
		}
	}
	return -1
}

// hearRenewals has the recorder hear b's background renewals (backend.Holding),
// once per library instance.
func (r *runner) hearRenewals(b backend.Backend) {
	h, ok := backend.As[backend.Holding](b)
	if !ok {
		return
	}
	r.obsMu.Lock()
	defer r.obsMu.Unlock()
	for _, o := range r.observed {
		if o == h {
			return
		}
	}
	r.observed = append(r.observed, h)
	h.Observe(r.rec.RecordRenewal)
}
