package realrun_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/machine"
)

// These tests run the real runner on real time against in-process
// coordinators (no server needed): the reference, and a fence-less one.

// shared hands every client of a run the same in-process backend.
type shared struct{ backend.Backend }

func (shared) Close() error { return nil }

func (s shared) ServerNow(ctx context.Context) (time.Time, error) {
	return s.Backend.(backend.Clock).ServerNow(ctx)
}

func inProcess(c machine.Clocked, clk *realrun.SteppableClock) realrun.Target {
	var now func() time.Time
	if clk != nil {
		now = clk.Now
	}
	b := shared{backend.InProcess(c, time.Microsecond, now)}
	tg := realrun.Target{Info: backend.InProcessInfo("mem"), Open: func(context.Context, string) (backend.Backend, error) { return b, nil }}
	if clk != nil {
		tg.Clock = clk
	}
	return tg
}

func check(t *testing.T, res *realrun.Result) *checker.Result {
	t.Helper()
	cr, err := checker.Check(context.Background(), res.History, checker.Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("the recorded history is not valid: %v", err)
	}
	if cr.Undecided() {
		t.Fatalf("undecided")
	}
	return cr
}

// TestRunWorkload: the generated workload with every applicable fault
// against the reference coordinator: every kind injected, every fault a
// record on the history's timeline, beliefs recorded, and no violation.
func TestRunWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: 4s")
	}
	tg := inProcess(memstore.New(), &realrun.SteppableClock{})
	kinds := realrun.ApplicableKinds(tg, faults.AllKinds)
	var mu sync.Mutex
	var lines int
	cfg := realrun.Config{Seed: 7, Duration: 3 * time.Second, TTL: 300 * time.Millisecond, Faults: kinds,
		Log: func(string, ...any) { mu.Lock(); lines++; mu.Unlock() }}
	res, err := realrun.Run(context.Background(), tg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// In-process, realrun.MinTTL does not apply to an explicit TTL: the
	// scale is 1.
	if res.TTL != 300*time.Millisecond || res.Scale != 1000 {
		t.Errorf("TTL %v, scale %v: want 300ms, 1000µs per ms", res.TTL, res.Scale)
	}
	for _, v := range check(t, res).Violations {
		t.Errorf("VIOLATION %s: %s", v.Property, v.Explanation)
	}
	var n int
	for _, k := range kinds {
		if res.Faults[k] == 0 {
			t.Errorf("%s not injected (faults %v, partial %v)", k, res.Faults, res.Partial)
		}
		n += res.Faults[k] + res.Partial[k]
	}
	if len(res.History.Faults) != n || lines != n {
		t.Errorf("%d fault records and %d log lines for %d faults", len(res.History.Faults), lines, n)
	}
	last := res.History.Ops[len(res.History.Ops)-1].Call
	for _, f := range res.History.Faults {
		if f.Start < 0 || f.Start > last || f.HasEnd && f.End < f.Start || f.Detail == "" || f.Target == "" {
			t.Errorf("fault record %+v outside the history [0, %d] or incomplete", f, last)
		}
	}
	if len(res.Beliefs) < 3 {
		t.Errorf("beliefs %+v: want one per tenure", res.Beliefs)
	}
	// The scenario as run names the holders the faults struck.
	for i, f := range res.Scenario.Faults {
		if f.Target == "" || res.Scenario.Implementation != "backend:mem" {
			t.Errorf("scenario as run: fault %d %+v, implementation %q", i, f, res.Scenario.Implementation)
		}
	}
	if err := res.Scenario.Validate(); err != nil {
		t.Errorf("the scenario as run does not validate: %v", err)
	}
}

// TestRunNotApplicable: Run refuses a fault the target cannot take, and a
// scenario with one runs with the fault recorded as not applied.
func TestRunNotApplicable(t *testing.T) {
	tg := inProcess(memstore.New(), nil)
	if _, err := realrun.Run(context.Background(), tg, realrun.Config{Faults: []faults.Kind{faults.Partition}}); err == nil || !strings.Contains(err.Error(), "not applicable") {
		t.Errorf("Run with a partition and no address: err %v, want not applicable", err)
	}
	sc := &scenario.Scenario{Version: 1, Semantics: "seed", Key: "k", TTL: 1000, Horizon: 1500,
		Holders: []scenario.Process{{Name: "h1", Work: []holder.Item{{Work: 1000, Writes: 1}}}},
		Faults: faults.Plan{{Kind: faults.CoordinatorCrash, Target: faults.Coordinator, At: 100, Duration: 100},
			{Kind: faults.ClockStep, Target: faults.Coordinator, At: 200, Amount: 500}}}
	res, err := realrun.RunScenario(context.Background(), tg, sc, realrun.Options{TTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Partial[faults.CoordinatorCrash] != 1 || res.Partial[faults.ClockStep] != 1 || len(res.Faults) != 0 {
		t.Errorf("faults %v partial %v: want both not applied", res.Faults, res.Partial)
	}
	for _, f := range res.History.Faults {
		if !f.Partial || !strings.HasPrefix(f.Detail, "not applied") {
			t.Errorf("record %+v", f)
		}
	}
}

// unfenced is a lock with a plain write: the lease part is the reference's,
// but Write stores whatever it is given (etcd-mutex's shape, in process).
type unfenced struct {
	*memstore.Store
	mu   sync.Mutex
	data map[string]string
}

func newUnfenced() *unfenced { return &unfenced{Store: memstore.New(), data: map[string]string{}} }

func (u *unfenced) Write(key, owner string, fence int64, value string, now int64) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.data[key] = value
	return nil
}

func (u *unfenced) Read(key string) (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	v, ok := u.data[key]
	return v, ok
}

// TestClockFaultsBite: the clock scenarios of testdata/ against the
// reference coordinator and against a fence-less one, with the reference
// holder and with the one that trusts the wall clock. A frozen monotonic
// clock makes even the reference holder write late: caught without fences,
// refused with them. A wall-clock step is harmless to the reference holder
// and bites the one that trusts the wall clock: caught without fences only.
func TestClockFaultsBite(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	trust := func(c holder.Config) machine.Holder { c.Bugs |= holder.BugTrustWallClock; return holder.New(c) }
	cases := []struct {
		file      string
		newHolder func(holder.Config) machine.Holder
		fenced    bool
		caught    bool
	}{
		{"frozen-clock", nil, true, false},
		{"frozen-clock", nil, false, true},
		{"wall-clock-step-back", nil, true, false},
		{"wall-clock-step-back", nil, false, false},
		{"wall-clock-step-back", trust, true, false},
		{"wall-clock-step-back", trust, false, true},
	}
	// The runs go in parallel (they mostly sleep); the checks after all of
	// them, so that a linearizability search never starves a running holder
	// of the CPU (on two cores under -race that stalled runs for 0.5s).
	type outcome struct {
		name string
		res  *realrun.Result
		err  error
	}
	out := make([]outcome, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		name := c.file
		if c.newHolder != nil {
			name += "/trust-wall-clock"
		}
		if c.fenced {
			name += "/fenced"
		} else {
			name += "/unfenced"
		}
		out[i].name = name
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc, err := scenario.Load("testdata/" + c.file + ".scenario.json")
			if err != nil {
				out[i].err = err
				return
			}
			var co machine.Clocked = memstore.New()
			if !c.fenced {
				co = newUnfenced()
			}
			out[i].res, out[i].err = realrun.RunScenario(context.Background(), inProcess(co, nil), sc, realrun.Options{TTL: time.Second, NewHolder: c.newHolder})
		}()
	}
	wg.Wait()
	for i, c := range cases {
		t.Run(out[i].name, func(t *testing.T) {
			res, err := out[i].res, out[i].err
			if err != nil {
				t.Fatal(err)
			}
			cr := check(t, res)
			if c.caught && cr.OK() {
				t.Errorf("not caught: %d ops, faults %v %+v", res.Ops, res.Faults, res.History.Faults)
				for _, o := range res.History.Ops {
					if o.Process != "r1" {
						t.Log(o.Describe())
					}
				}
			}
			if !c.caught {
				for _, v := range cr.Violations {
					t.Errorf("false alarm: %s: %s", v.Property, v.Explanation)
				}
			}
			if len(res.History.Faults) != 1 || res.Faults[faults.Kind(res.History.Faults[0].Kind)] != 1 {
				t.Errorf("faults %v: want the scenario's one", res.Faults)
			}
		})
	}
}

// TestWorkload: the generated workload is a valid scenario, the same for
// the same seed, with one fault of every kind asked for, each due in
// [10%, 60%] of the run, and programs that keep every holder writing.
func TestWorkload(t *testing.T) {
	tg := inProcess(memstore.New(), &realrun.SteppableClock{})
	for seed := uint64(1); seed <= 50; seed++ {
		cfg := realrun.Config{Seed: seed, Faults: faults.AllKinds}
		sc := realrun.Workload(tg, cfg)
		if err := sc.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if again := realrun.Workload(tg, cfg); string(again.Marshal()) != string(sc.Marshal()) {
			t.Fatalf("seed %d: two workloads differ", seed)
		}
		counts := sc.Faults.Counts()
		for _, k := range faults.AllKinds {
			want := 1
			if k == faults.ClockStep {
				want = 2 // a holder's and, with Target.Clock, the coordinator's
			}
			if counts[k] != want {
				t.Errorf("seed %d: %d faults of kind %s, want %d", seed, counts[k], k, want)
			}
		}
		for _, f := range sc.Faults {
			if f.Kind != faults.ClockOffset && (f.At < 1000 || f.At > 6000) {
				t.Errorf("seed %d: %s due at %dms, outside [10%%, 60%%] of 10s", seed, f, f.At)
			}
		}
		for _, p := range sc.Holders {
			writes := 0
			for _, it := range p.Work {
				writes += it.Writes
			}
			if writes < 10 {
				t.Errorf("seed %d: %s writes %d times, want a program that keeps writing", seed, p.Name, writes)
			}
		}
	}
}

// TestClockScenariosInSimulator: the clock scenarios of testdata/ are
// ordinary scenarios: the simulator runs them against the reference and
// finds nothing (fences refuse the late writes there too).
func TestClockScenariosInSimulator(t *testing.T) {
	for _, name := range []string{"frozen-clock", "wall-clock-step-back"} {
		sc, err := scenario.Load("testdata/" + name + ".scenario.json")
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.Run(sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := checker.Check(context.Background(), r.History, checker.Options{Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !cr.OK() {
			t.Errorf("%s: the reference fails in the simulator: %+v", name, cr.Violations)
		}
		if r.Stats.Faults[sc.Faults[0].Kind] != 1 {
			t.Errorf("%s: faults %v", name, r.Stats.Faults)
		}
	}
}
