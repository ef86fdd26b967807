package sim_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// TestScenarioFiles runs the regression scenarios in testdata/scenarios/:
// one per failure mode of the article (DESIGN.md §1), each replayed exactly.
// The reference must pass every property, every fault in the file must be
// injected, and the story the file is named after must happen.
func TestScenarioFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*.scenario.json"))
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
		if bad := r.Liveness(); len(bad) > 0 {
			t.Error(bad)
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
