package vclient_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// toyScenario: n holders, a TTL of 1 s, a network of exactly delay ms each
// way, the given faults.
func toyScenario(seed uint64, n int, delay, horizon int64, fs ...faults.Fault) *scenario.Scenario {
	sc := &scenario.Scenario{Version: scenario.Version, Seed: seed, Semantics: "seed", Key: "lease", TTL: 1000, Horizon: horizon,
		Network: scenario.Network{MinDelay: delay, MaxDelay: delay}, Implementation: "vclient:toy"}
	for i := range n {
		sc.Holders = append(sc.Holders, scenario.Process{Name: fmt.Sprintf("h%d", i+1)})
	}
	sc.Faults = faults.Plan(fs).Sorted()
	return sc
}

// runOne runs sc against cl as a sweep does (Target.Run) and returns what
// the run produced.
func runOne(t *testing.T, sc *scenario.Scenario, cl vclient.Client, opts vclient.Options) (*sim.Result, error) {
	e, err := (&vclient.Target{T: t, Client: cl, Options: opts}).Run(context.Background(), sc)
	if err != nil {
		return nil, err
	}
	return e.Sim, nil
}

// toyRun runs sc against cl and returns the result and the server the run
// used.
func toyRun(t *testing.T, sc *scenario.Scenario, cl vclient.Client) (*sim.Result, *toyServer) {
	t.Helper()
	var srv *toyServer
	opts := vclient.Options{Fences: model.NoFences,
		Server: func() vclient.Server { srv = &toyServer{ttl: sc.TTL}; return srv }}
	r, err := runOne(t, sc, cl, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.overlap.Load(); n > 0 {
		t.Errorf("the server was called while serving another request %d times", n)
	}
	return r, srv
}

func traceHas(r *sim.Result, node, what, detail string) []sim.TraceEvent {
	var out []sim.TraceEvent
	for _, e := range r.Trace {
		if e.Node == node && e.What == what && strings.Contains(e.Detail, detail) {
			out = append(out, e)
		}
	}
	return out
}

func faultRecord(t *testing.T, r *sim.Result, kind faults.Kind) model.FaultRecord {
	t.Helper()
	for _, f := range r.History.Faults {
		if f.Kind == string(kind) {
			return f
		}
	}
	t.Fatalf("no %s fault record in %+v", kind, r.History.Faults)
	return model.FaultRecord{}
}

// TestRequestsSerialized: four goroutines of each of three candidates send
// at the same instants; the server is called for one request at a time,
// the same seed gives the same order every run, and the order is the
// seed's (different seeds order the same instant's requests differently),
// not the goroutines'.
func TestRequestsSerialized(t *testing.T) {
	order := func(seed uint64) string {
		sc := toyScenario(seed, 3, 0, 350)
		_, srv := toyRun(t, sc, &toyClient{Senders: 4, Every: 100 * time.Millisecond, Timeout: time.Second})
		var b strings.Builder
		for _, s := range srv.log {
			fmt.Fprintf(&b, "%d %s/%s ", s.at, s.proc, s.sender)
		}
		if len(srv.log) != 3*4*3 {
			t.Fatalf("seed %d: %d requests served, want 36", seed, len(srv.log))
		}
		for i, s := range srv.log {
			if s.at%100 != 0 || i > 0 && s.at < srv.log[i-1].at {
				t.Fatalf("seed %d: request %d served at t=%d: not in time order at the instants sent (%s)", seed, i, s.at, b.String())
			}
		}
		return b.String()
	}
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 8; seed++ {
		first := order(seed)
		for range 4 {
			if again := order(seed); again != first {
				t.Fatalf("seed %d: the order changed between runs:\n%s\n%s", seed, first, again)
			}
		}
		orders[first] = true
	}
	if len(orders) < 2 {
		t.Errorf("8 seeds gave one order: the seed does not order the instant's requests")
	}
}

// TestContextEndedBeforeSendingIsNotSent: a sender whose ticker and its
// request's deadline fire at the same instant (every 100 ms, bounded by a
// context that ends at 300 ms) would send at t=300 or not as the scheduler
// chose; the harness never sends it, every run.
func TestContextEndedBeforeSendingIsNotSent(t *testing.T) {
	sc := toyScenario(7, 1, 0, 1000)
	var first []int64
	for i := range 20 {
		var srv *toyServer
		opts := vclient.Options{Fences: model.NoFences,
			Server: func() vclient.Server { srv = &toyServer{ttl: sc.TTL}; return srv }}
		if _, err := runOne(t, sc, tieClient{}, opts); err != nil {
			t.Fatal(err)
		}
		var ats []int64
		for _, s := range srv.log {
			ats = append(ats, s.at)
		}
		if slices.Contains(ats, 300) {
			t.Fatalf("run %d: a request sent as its context ended was served: %v", i, ats)
		}
		if !slices.Equal(ats, []int64{100, 200}) {
			t.Fatalf("run %d: served at %v, want [100 200]", i, ats)
		}
		if i == 0 {
			first = ats
		} else if !slices.Equal(ats, first) {
			t.Fatalf("run %d: %v, run 0: %v", i, ats, first)
		}
	}
}

// tieClient sends every 100 ms under one context that ends at 300 ms.
type tieClient struct{}

func (tieClient) Start(ctx context.Context, c *vclient.Candidate) {
	hc := &http.Client{Transport: c.Transport()}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-cctx.Done():
			<-ctx.Done()
			return
		case <-tick.C:
			_, _, _ = post(cctx, hc, c.Identity, "0")
		}
	}
}

// TestPauseHoldsTheCandidate: a pause armed at t=500 strikes at h1's write
// at t=1000 and holds everything h1 sends — its four senders' requests and
// the write — until t=3000; h2 goes on meanwhile. The fault record and the
// run's stops say when it struck and on whom.
func TestPauseHoldsTheCandidate(t *testing.T) {
	sc := toyScenario(3, 2, 0, 4000, faults.Fault{Kind: faults.Pause, Target: "h1", At: 500, Duration: 2000})
	sc.Holders[0].Name, sc.Holders[1].Name = "h1", "h2"
	r, srv := toyRun(t, sc, &toyClient{Senders: 4, Every: 100 * time.Millisecond, Timeout: 10 * time.Second, WriteAt: 1000 * time.Millisecond})
	var h1During, h2During, h1After int
	for _, s := range srv.log {
		switch {
		case s.proc == "h1" && s.at > 1000 && s.at < 3000:
			h1During++
		case s.proc == "h2" && s.at > 1000 && s.at < 3000:
			h2During++
		case s.proc == "h1" && s.at >= 3000:
			h1After++
		}
	}
	if h1During != 0 {
		t.Errorf("%d of h1's requests served while it was paused", h1During)
	}
	if h2During == 0 || h1After == 0 {
		t.Errorf("h2 served %d times during h1's pause, h1 %d times after it: want both > 0", h2During, h1After)
	}
	for _, op := range r.History.Ops {
		if op.Process == "h1/work" && op.At < 3000 {
			t.Errorf("h1's write applied at t=%d, inside its pause", op.At)
		}
	}
	f := faultRecord(t, r, faults.Pause)
	if f.Target != "h1" || f.Start != 1000 || !f.HasEnd || f.End != 3000 || f.Partial {
		t.Errorf("pause record %+v: want h1 from t=1000 (its write) to t=3000", f)
	}
	if len(r.Stops) != 1 || r.Stops[0].Process != "h1" || r.Stops[0].From != 1000 || r.Stops[0].To != 3000 {
		t.Errorf("stops %+v: want h1 [1000, 3000]", r.Stops)
	}
	if len(traceHas(r, "h1", "paused", "")) != 1 || len(traceHas(r, "h1", "resumed", "")) != 1 {
		t.Errorf("trace lacks h1's pause and resume:\n%v", r.Trace)
	}

	// No write after the arming: the pause never strikes, and says so.
	sc.Faults[0].At = 1500
	r, srv = toyRun(t, sc, &toyClient{Senders: 1, Every: 100 * time.Millisecond, Timeout: time.Second, WriteAt: 1000 * time.Millisecond})
	if f := faultRecord(t, r, faults.Pause); !f.Partial || len(r.Stops) != 0 {
		t.Errorf("a pause with no write after it: record %+v, stops %+v; want partial, none", f, r.Stops)
	}
	for _, s := range srv.log {
		if s.proc == "h1" && s.at%100 != 0 {
			t.Errorf("h1's request served at t=%d: held by a pause that never struck", s.at)
		}
	}
}

// TestDelay: a delay fault of 40 ms on h1 makes each of its round trips
// 40 ms longer, half each way; h2's stay at the network's 3 ms a leg.
func TestDelay(t *testing.T) {
	sc := toyScenario(5, 2, 3, 2000, faults.Fault{Kind: faults.Delay, Target: "h1", At: 0, Duration: 1000, Amount: 40})
	r, _ := toyRun(t, sc, &toyClient{Senders: 1, Every: 100 * time.Millisecond, Timeout: time.Second})
	var slow, fast int
	for _, op := range r.History.Ops {
		if !op.Returned {
			continue
		}
		want := int64(6)
		if op.Process == "h1" && op.Call < 1000 {
			want = 46
			slow++
		} else {
			fast++
		}
		if op.Return-op.Call != want || op.At-op.Call != want/2 {
			t.Errorf("%s's op sent at t=%d: applied %d ms and answered %d ms later; want %d and %d", op.Process, op.Call, op.At-op.Call, op.Return-op.Call, want/2, want)
		}
	}
	if slow == 0 || fast == 0 {
		t.Errorf("%d delayed, %d undelayed round trips: want both", slow, fast)
	}
}

// TestPartition: while h1 is partitioned from the lease server each of its
// requests is either lost (never served) or applied with its answer lost
// (an op with no return); both happen; the rest are answered.
func TestPartition(t *testing.T) {
	sc := toyScenario(11, 2, 1, 3000, faults.Fault{Kind: faults.Partition, Target: "h1", Peer: faults.Coordinator, At: 1000, Duration: 1000})
	r, srv := toyRun(t, sc, &toyClient{Senders: 1, Every: 50 * time.Millisecond, Timeout: 200 * time.Millisecond})
	lost := len(traceHas(r, "h1", "lost", "dropped the request"))
	unanswered := len(traceHas(r, "h1", "lost", "dropped the answer"))
	if lost == 0 || unanswered == 0 {
		t.Errorf("%d requests lost, %d answers lost in a 1 s partition: want both", lost, unanswered)
	}
	servedIn := 0
	for _, s := range srv.log {
		if s.proc == "h1" && s.at >= 1000 && s.at < 2000 {
			servedIn++
		}
	}
	if servedIn != unanswered {
		t.Errorf("%d of h1's requests reached the server during the partition, %d answers lost: want equal", servedIn, unanswered)
	}
	for _, op := range r.History.Ops {
		in := op.At >= 1000 && op.At < 2000
		if op.Process == "h1" && in && op.Returned {
			t.Errorf("h1's op applied at t=%d in the partition was answered", op.At)
		}
		if !in && !op.Returned && op.At < 2900 {
			t.Errorf("%s's op applied at t=%d outside the partition unanswered", op.Process, op.At)
		}
	}
	if f := faultRecord(t, r, faults.Partition); f.Target != "h1" || f.Peer != faults.Coordinator || f.Start != 1000 || f.End != 2000 {
		t.Errorf("partition record %+v", f)
	}
}

// TestServerDown: while the lease server is down (coordinator-crash) every
// request is answered 503 by the harness and none reaches the server.
func TestServerDown(t *testing.T) {
	sc := toyScenario(2, 2, 1, 3000, faults.Fault{Kind: faults.CoordinatorCrash, Target: faults.Coordinator, At: 1000, Duration: 500})
	r, srv := toyRun(t, sc, &toyClient{Senders: 1, Every: 100 * time.Millisecond, Timeout: time.Second})
	for _, s := range srv.log {
		if s.at >= 1000 && s.at < 1500 {
			t.Errorf("%s's request reached the server at t=%d, while it was down", s.proc, s.at)
		}
	}
	refused := 0
	for _, e := range r.Trace {
		if e.What == "refused" && strings.Contains(e.Detail, "503") {
			refused++
			if e.T < 1000 || e.T >= 1500 {
				t.Errorf("refused at t=%d, outside the outage", e.T)
			}
		}
	}
	heard := len(traceHas(r, "h1", "client", "503")) + len(traceHas(r, "h2", "client", "503"))
	if refused == 0 || heard != refused {
		t.Errorf("%d requests refused with 503, the clients heard %d: want equal, > 0", refused, heard)
	}
}

// TestCrashAndRestart: a crash ends the incarnation's context — its Start
// returns, with every goroutine it started — and a restart after the
// fault's duration starts a new one, under a new identity after a crash
// and under the same one after an owner-reuse.
func TestCrashAndRestart(t *testing.T) {
	for _, kind := range []faults.Kind{faults.Crash, faults.OwnerReuse} {
		sc := toyScenario(4, 2, 1, 3000, faults.Fault{Kind: kind, Target: "h1", At: 1000, Duration: 500})
		cl := &toyClient{Senders: 3, Every: 100 * time.Millisecond, Timeout: time.Second}
		r, srv := toyRun(t, sc, cl)
		if cl.started != 3 || cl.returned != 3 {
			t.Errorf("%s: %d incarnations started, %d returned; want 3 (h1, h1#2, h2), all returned", kind, cl.started, cl.returned)
		}
		wantID := "h1#2"
		if kind == faults.OwnerReuse {
			wantID = "h1"
		}
		if len(traceHas(r, "h1", "crashed", "")) != 1 || len(traceHas(r, "h1#2", "started", "identity "+wantID)) != 1 {
			t.Errorf("%s: trace lacks the crash or the restart as %s:\n%v", kind, wantID, r.Trace)
		}
		for _, s := range srv.log {
			switch {
			case s.proc == "h1" && s.at > 1001:
				t.Errorf("%s: the crashed incarnation's request served at t=%d", kind, s.at)
			case s.proc == "h1#2" && (s.at < 1500 || s.id != wantID):
				t.Errorf("%s: the restart's request at t=%d as %q", kind, s.at, s.id)
			}
		}
		if !slices.ContainsFunc(srv.log, func(s served) bool { return s.proc == "h1#2" }) {
			t.Errorf("%s: the restarted incarnation sent nothing", kind)
		}
		if f := faultRecord(t, r, kind); f.Target != "h1" || f.Start != 1000 || f.End != 1500 {
			t.Errorf("%s record %+v", kind, f)
		}
	}
}

// TestShutdown: a graceful shutdown ends the candidate's context and, unlike
// a crash, lets what it sends on its way out through: its goodbye is
// served after the shutdown, and its restart (same identity) waits for it
// to return. A crash at the same instant lets nothing through.
func TestShutdown(t *testing.T) {
	for _, kind := range []faults.Kind{faults.Shutdown, faults.Crash} {
		sc := toyScenario(4, 2, 1, 3000, faults.Fault{Kind: kind, Target: "h1", At: 1000, Duration: 500})
		cl := &toyClient{Senders: 2, Every: 100 * time.Millisecond, Timeout: time.Second, Goodbye: true}
		r, srv := toyRun(t, sc, cl)
		var goodbye []served
		for _, s := range srv.log {
			if s.proc == "h1" && s.sender == "goodbye" {
				goodbye = append(goodbye, s)
			}
			if s.proc == "h1" && s.sender != "goodbye" && s.at > 1001 {
				t.Errorf("%s: h1's request served at t=%d, after its end", kind, s.at)
			}
		}
		wantID := "h1#2"
		if kind == faults.Shutdown {
			wantID = "h1"
			if len(goodbye) != 1 || goodbye[0].at < 1000 {
				t.Errorf("shutdown: h1's goodbye served %v; want once, after t=1000", goodbye)
			}
			if len(traceHas(r, "h1", "shutting-down", "")) != 1 || len(traceHas(r, "h1", "exited", "")) != 1 {
				t.Errorf("shutdown: the trace lacks the shutdown or the exit:\n%v", r.Trace)
			}
			if f := faultRecord(t, r, kind); f.Target != "h1" || f.Start != 1000 || f.Partial || !strings.Contains(f.Detail, "graceful") {
				t.Errorf("shutdown record %+v", f)
			}
		} else if len(goodbye) != 0 {
			t.Errorf("crash: h1's goodbye served %v", goodbye)
		}
		if len(traceHas(r, "h1#2", "started", "identity "+wantID)) != 1 {
			t.Errorf("%s: no restart as %s:\n%v", kind, wantID, r.Trace)
		}
		if cl.started != 3 || cl.returned != 3 {
			t.Errorf("%s: %d incarnations started, %d returned; want 3", kind, cl.started, cl.returned)
		}
	}
}

// TestShutdownRestartWaits: a restart due while the shut-down incarnation
// is still on its way out (its goodbye unanswered) starts only once it has
// returned: never two incarnations of one candidate at once.
func TestShutdownRestartWaits(t *testing.T) {
	sc := toyScenario(4, 2, 5, 3000, faults.Fault{Kind: faults.Shutdown, Target: "h1", At: 1000, Duration: 1})
	cl := &toyClient{Senders: 1, Every: 100 * time.Millisecond, Timeout: time.Second, Goodbye: true}
	r, _ := toyRun(t, sc, cl)
	exited, started := traceHas(r, "h1", "exited", ""), traceHas(r, "h1#2", "started", "identity h1")
	if len(exited) != 1 || len(started) != 1 {
		t.Fatalf("want one exit of h1 and one start of h1#2:\n%v", r.Trace)
	}
	if started[0].T < exited[0].T || exited[0].T <= 1001 {
		t.Errorf("h1 exited at t=%d (its goodbye takes 10 ms), h1#2 started at t=%d: want the start after the exit, past t=1001", exited[0].T, started[0].T)
	}
}

// TestHistoryRecorded: what the server applied is the history, in exact
// mode — each op's call (sent), at (applied) and return (answered) — the
// writes under the incarnation's "/work" process with the harness's names,
// and the beliefs from the client's own callbacks.
func TestHistoryRecorded(t *testing.T) {
	sc := toyScenario(9, 2, 2, 2000)
	r, srv := toyRun(t, sc, &toyClient{Senders: 1, Every: 100 * time.Millisecond, Timeout: time.Second, WriteEvery: 150 * time.Millisecond})
	leaseOps, writes := 0, 0
	for _, op := range r.History.Ops {
		if !op.HasAt || op.At-op.Call != 2 || op.Returned && op.Return-op.At != 2 {
			t.Errorf("op %+v: want at = call + 2, return = at + 2", op)
		}
		if op.Kind == model.Write {
			writes++
			if !strings.HasSuffix(op.Process, "/work") || op.Value != fmt.Sprintf("%s:w%d", op.Owner, countWrites(r, op.Owner, op.Line)) {
				t.Errorf("write %+v: want process OWNER/work, value OWNER:wN", op)
			}
		} else {
			leaseOps++
		}
	}
	if leaseOps != len(srv.log) || writes == 0 {
		t.Errorf("%d lease ops recorded for %d requests served, %d writes", leaseOps, len(srv.log), writes)
	}
	if len(r.Beliefs) != 1 || r.Beliefs[0].Process != "h1" && r.Beliefs[0].Process != "h2" || !r.Beliefs[0].Open {
		t.Errorf("beliefs %+v: want one holder believing to the end", r.Beliefs)
	}
	o, err := campaign.JudgeExecution(context.Background(), &campaign.Execution{Scenario: sc, History: r.History, Sim: r}, campaign.JudgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Violated() {
		t.Errorf("a correct toy run violates %v", o.Failed())
	}
}

// countWrites is the number of owner's writes up to history line line.
func countWrites(r *sim.Result, owner string, line int) int {
	n := 0
	for _, op := range r.History.Ops {
		if op.Kind == model.Write && op.Owner == owner && op.Line <= line {
			n++
		}
	}
	return n
}

// TestShrinkPlantedFailure: a client whose renewal loop dies at its first
// grant, while its work goes on believing and writing, is caught once its
// lease runs out and another is granted it; the failure shrinks to two
// candidates and no fault (the delays in its scenario have nothing to do
// with it), fails again on replay, and the correct client is clean on the
// same seeds and is the shrinker's control.
func TestShrinkPlantedFailure(t *testing.T) {
	gen := func(seed uint64) *scenario.Scenario {
		sc := toyScenario(seed, 4, 1, 4000,
			faults.Fault{Kind: faults.Delay, Target: "h1", At: 1000, Duration: 3000, Amount: 40},
			faults.Fault{Kind: faults.Delay, Target: "h3", At: 500, Duration: 200, Amount: 10})
		for i := range sc.Holders {
			sc.Holders[i].Start = int64(i) * 7
		}
		return sc
	}
	target := func(bug bool) *vclient.Target {
		return &vclient.Target{T: t, Name: fmt.Sprintf("vclient:toy renew-loop-dies=%v", bug),
			Client:  &toyClient{Senders: 1, Every: 300 * time.Millisecond, Timeout: 300 * time.Millisecond, WriteEvery: 100 * time.Millisecond, RenewLoopDies: bug},
			Options: vclient.Options{Fences: model.NoFences, Server: func() vclient.Server { return &toyServer{ttl: 1000} }}}
	}
	good, bad := target(false), target(true)
	ctx := context.Background()
	var o *campaign.Outcome
	for seed := uint64(1); seed <= 5; seed++ {
		og, err := campaign.Judge(ctx, good, gen(seed), campaign.JudgeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if og.Violated() {
			var b strings.Builder
			campaign.WriteOutcome(&b, og)
			t.Fatalf("seed %d: the correct client violates %v\n%s", seed, og.Failed(), b.String())
		}
		ob, err := campaign.Judge(ctx, bad, gen(seed), campaign.JudgeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ob.Violated() && o == nil {
			o = ob
		}
	}
	if o == nil {
		t.Fatal("the dying renewal loop is not caught in 5 seeds")
	}
	if !o.Fails(runprop.ExclusiveBelief) && !o.Fails(checker.SingleWriterPerFence) {
		t.Errorf("the dying renewal loop violates %v: want exclusive-belief or single-writer-per-fence", o.Failed())
	}
	small, st, err := campaign.ShrinkWithStats(ctx, bad, o, campaign.ShrinkOptions{Budget: 100, Control: good})
	if err != nil {
		t.Fatal(err)
	}
	from, to := campaign.SizeOf(o), campaign.SizeOf(small)
	t.Logf("shrunk from %s to %s (%s): %v", from, to, st, small.Failed())
	if len(small.Scenario.Holders) != 2 || len(small.Scenario.Faults) != 0 || to.Ops >= from.Ops {
		t.Errorf("not shrunk to two candidates and no fault: from %s to %s (%d holders, %d faults)", from, to, len(small.Scenario.Holders), len(small.Scenario.Faults))
	}
	// The shrunk scenario fails again, byte for byte.
	again, err := campaign.Judge(ctx, bad, small.Scenario, campaign.JudgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	model.WriteHistory(&a, small.History)
	model.WriteHistory(&b, again.History)
	if !slices.Equal(again.Failed(), small.Failed()) || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("the shrunk scenario's replay differs: %v vs %v", again.Failed(), small.Failed())
	}
}

// TestRunRefuses: a fault the harness does not inject, and the
// simulator's own machinery, are refused, never run as if absent.
func TestRunRefuses(t *testing.T) {
	sc := toyScenario(1, 1, 0, 100, faults.Fault{Kind: faults.ClockStep, Target: "h1", At: 10, Amount: 5})
	_, err := runOne(t, sc, &toyClient{Every: time.Second, Timeout: time.Second}, vclient.Options{Server: func() vclient.Server { return &toyServer{ttl: 1000} }})
	if err == nil || !strings.Contains(err.Error(), "clock-step") {
		t.Errorf("clock-step: %v", err)
	}
	sc = toyScenario(1, 1, 0, 100)
	sc.ReadEvery = 10
	if _, err := runOne(t, sc, &toyClient{Every: time.Second, Timeout: time.Second}, vclient.Options{Server: func() vclient.Server { return &toyServer{ttl: 1000} }}); err == nil {
		t.Error("a reader: accepted")
	}
}

// TestAdvisoryBeliefFenced: one rule, both ways, in virtual time. The
// client whose renewal loop dies believes, and writes under its fence, on
// after its lease moved on. Declared advisory and fenced, the overlap is a
// warning while the resource refuses the older fence; with the resource's
// fence check planted away (FenceUnchecked) the old holder's write is
// accepted after the new one's, and the overlap is a violation (the
// checker catches the stale write too); not declared advisory, the overlap
// is a violation even with the fence working.
func TestAdvisoryBeliefFenced(t *testing.T) {
	sc := toyScenario(1, 2, 1, 4000)
	sc.Semantics = "fenced-storage"
	sc.Holders[1].Start = 50
	judge := func(advisory, unchecked bool) *campaign.Outcome {
		tg := &vclient.Target{T: t, Name: "vclient:toy", Client: &toyClient{Senders: 1, Every: 300 * time.Millisecond, Timeout: 300 * time.Millisecond,
			WriteEvery: 100 * time.Millisecond, RenewLoopDies: true},
			Options: vclient.Options{Fenced: true, Fences: model.Sequential, AdvisoryBelief: advisory, FenceUnchecked: unchecked,
				Server: func() vclient.Server { return &toyServer{ttl: 1000, fenced: true} }}}
		o, err := campaign.Judge(context.Background(), tg, sc, campaign.JudgeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	o := judge(true, false)
	if o.Violated() || !slices.Equal(o.Warned(), []string{runprop.ExclusiveBelief}) {
		var b strings.Builder
		campaign.WriteOutcome(&b, o)
		t.Fatalf("advisory, fenced, the fence working: violated %v, warned %v; want one exclusive-belief warning\n%s", o.Failed(), o.Warned(), b.String())
	}
	var b strings.Builder
	campaign.WriteOutcome(&b, o)
	if !strings.Contains(b.String(), "WARNING exclusive-belief") || !strings.Contains(b.String(), "with 1 warning") {
		t.Errorf("the outcome does not tell the warning:\n%s", b.String())
	}
	o = judge(true, true)
	if !o.Fails(runprop.ExclusiveBelief) || !o.Fails(checker.FenceMonotonic) {
		t.Errorf("advisory, the fence unchecked: violated %v; want exclusive-belief and fence-monotonic", o.Failed())
	}
	o = judge(false, false)
	if !o.Fails(runprop.ExclusiveBelief) || len(o.Warnings) != 0 {
		t.Errorf("not advisory: violated %v, warned %v; want exclusive-belief violated", o.Failed(), o.Warned())
	}
}

// TestStoreLogJudged: a write the resource applied counts as applied,
// whatever became of its client's answer. Two candidates whose renew
// loops die at their first grant both write at t=1500, when one of them
// holds the lease: the other's write is stale. Written under a context
// that ends before the answer can come back (5 ms against 20 ms each way),
// the client never hears it, and its view says nothing of it — the store's
// log does, and says so. Written under one that lasts, both views show it;
// with no stale write (one candidate that keeps renewing), neither does.
func TestStoreLogJudged(t *testing.T) {
	judge := func(n int, timeout time.Duration, dies bool) *campaign.Outcome {
		t.Helper()
		sc := toyScenario(5, n, 20, 2500)
		tg := &vclient.Target{T: t, Name: "vclient:toy", Client: &toyClient{Senders: 1, Every: 50 * time.Millisecond,
			Timeout: 200 * time.Millisecond, RenewLoopDies: dies, WriteAt: 1500 * time.Millisecond, WriteTimeout: timeout},
			Options: vclient.Options{Fences: model.NoFences, Server: func() vclient.Server { return &toyServer{ttl: sc.TTL} }}}
		o, err := campaign.Judge(context.Background(), tg, sc, campaign.JudgeOptions{Budget: -1})
		if err != nil {
			t.Fatal(err)
		}
		if o.Store == nil {
			t.Fatal("no store's log")
		}
		return o
	}
	views := func(o *campaign.Outcome) map[string]bool {
		out := map[string]bool{}
		for _, v := range o.Violations() {
			if v.Property == checker.SingleWriterPerFence {
				out[v.View] = true
			}
		}
		return out
	}
	gaveUp := judge(2, 5*time.Millisecond, true)
	var b strings.Builder
	campaign.WriteOutcome(&b, gaveUp)
	if !gaveUp.Fails(checker.SingleWriterPerFence) || !views(gaveUp)[campaign.ViewStore] || views(gaveUp)[campaign.ViewClient] {
		t.Errorf("a stale write the client gave up on: want single-writer-per-fence from the store's log only, got:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "the store's log") {
		t.Errorf("the outcome does not say the violation comes from the store's log:\n%s", b.String())
	}
	var story strings.Builder
	campaign.WriteStory(&story, gaveUp, campaign.StoryInfo{Title: "seed 5"})
	if !strings.Contains(story.String(), "the store's log") {
		t.Errorf("the story does not say the violation comes from the store's log:\n%s", story.String())
	}
	// The client's view alone: the write is unanswered, and passes.
	if gaveUp.Check.Verdict(checker.SingleWriterPerFence) != checker.Holds {
		t.Errorf("the client's view alone flags the unanswered write: %v", gaveUp.Check.Violations)
	}
	heard := judge(2, 0, true)
	if v := views(heard); !v[campaign.ViewClient] || v[campaign.ViewStore] {
		t.Errorf("a stale write whose answer came back: want it in the clients' view (and not repeated), got views %v", v)
	}
	if one := judge(1, 5*time.Millisecond, false); one.Violated() {
		b.Reset()
		campaign.WriteOutcome(&b, one)
		t.Errorf("one candidate, no stale write: violated\n%s", b.String())
	}
}
