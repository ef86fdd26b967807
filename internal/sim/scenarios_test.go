package sim_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// TestScenarioFiles runs the regression scenarios in testdata/scenarios/:
// one per failure mode of the article (docs/specification.md §1), each replayed exactly.
// The reference must pass every property, every fault in the file must be
// injected, and the story the file is named after must happen.
func TestScenarioFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "scenarios", "*.scenario.json"))
	if len(files) == 0 {
		t.Fatal("no scenario files")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".scenario.json")
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			r, err := sim.Run(sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := checker.Check(context.Background(), r.History, checker.Options{Workers: 1, Timeout: checkBudget})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() {
				t.Fatalf("%s: %+v (undecided=%v)\nreplay: go run ./cmd/leasecheck repro %s", name, res.Violations, res.Undecided(), f)
			}
			if fs := runprop.Judge(sim.Record(r)); len(fs) > 0 {
				t.Fatalf("%s: run properties %+v\nreplay: go run ./cmd/leasecheck repro %s", name, fs, f)
			}
			// Every fault due before the run ended was injected (a run ends
			// when every holder is done).
			for _, f := range sc.Faults {
				if f.At < r.Stats.End && r.Stats.Faults[f.Kind] == 0 {
					t.Errorf("fault %s was not injected (run ended at %d)", f, r.Stats.End)
				}
			}
			story(t, name, r)
		})
	}
}

func traceHas(r *sim.Result, node, what string) bool {
	for _, e := range r.Trace {
		if strings.HasPrefix(e.Node, node) && e.What == what {
			return true
		}
	}
	return false
}

// story checks that the failure mode a file is named after shows in its run.
func story(t *testing.T, name string, r *sim.Result) {
	grants := 0
	for _, e := range r.Trace {
		if e.What == "granted" {
			grants++
		}
	}
	switch name {
	case "crash-without-release":
		// The lease blocks for about one TTL, then h2 gets it.
		if len(r.Stats.Recoveries) != 1 || r.Stats.Recoveries[0] < r.Scenario.TTL/2 {
			t.Errorf("recoveries %v, want one of about a TTL", r.Stats.Recoveries)
		}
		if fs := runprop.Judge(sim.Record(r)); len(fs) > 0 {
			t.Error(fs)
		}
	case "gc-pause", "container-freeze":
		// h1 loses the lease while stopped and has to re-acquire.
		if grants < 3 {
			t.Errorf("%d grants, want h1 to lose the lease and re-acquire", grants)
		}
	case "container-freeze-double-belief":
	case "renew-death", "dropped-heartbeats":
		if grants < 3 {
			t.Errorf("%d grants, want a lost lease and a re-acquire", grants)
		}
	case "negative-clock-offset":
		// h2's clock reads negative times (offset -222); its timers must
		// still fire (a regression: -1 was once the "no timer" value).
		if !traceHas(r, "h2", "believes") {
			t.Error("h2 never got the lease")
		}
	case "owner-reuse":
		if !traceHas(r, "h1#2", "restarted") {
			t.Error("no second incarnation of h1")
		}
	}
	if r.Stats.Truncated {
		t.Error("run hit the event bound")
	}
	_ = faults.AllKinds
}

// TestCrashEndsStopRecords: a holder crashed while frozen, or while paused,
// is no longer stopped: the history's record of the freeze or pause ends
// at the crash, not at its planned end, and says so; a freeze of another
// process is not touched.
func TestCrashEndsStopRecords(t *testing.T) {
	sc, err := scenario.Load(filepath.Join("..", "..", "testdata", "scenarios", "container-freeze.scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	// h1 frozen 130..430 and crashed at 200 (restarting at 260); h2 frozen
	// 300..350 and not crashed.
	sc.Faults = append(sc.Faults,
		faults.Fault{Kind: faults.Crash, Target: "h1", At: 200, Duration: 60},
		faults.Fault{Kind: faults.Freeze, Target: "h2", At: 300, Duration: 50})
	r, err := sim.Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h1, h2 bool
	for _, f := range r.History.Faults {
		if f.Kind != string(faults.Freeze) {
			continue
		}
		switch {
		case strings.HasPrefix(f.Target, "h1"):
			h1 = true
			if !f.HasEnd || f.End != 200 || !strings.Contains(f.Detail, "cut short by the crash at t=200") {
				t.Errorf("h1's freeze record = %+v; want it to end at the crash, t=200, and say so", f)
			}
		case strings.HasPrefix(f.Target, "h2"):
			h2 = true
			if !f.HasEnd || f.Start != 300 || f.End != 350 || f.Detail != "" {
				t.Errorf("h2's freeze record = %+v; want 300..350 untouched", f)
			}
		}
	}
	if !h1 || !h2 {
		t.Fatalf("freeze records of h1 %v, h2 %v; want both in %+v", h1, h2, r.History.Faults)
	}
	res, err := checker.Check(context.Background(), r.History, checker.Options{Workers: 1, Timeout: checkBudget})
	if err != nil || !res.OK() {
		t.Fatalf("the reference fails the scenario: %+v, %v", res, err)
	}
}
