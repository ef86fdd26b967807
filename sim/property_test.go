package sim_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// rootDir moves the test to the module root, so rapid keeps its fail files
// in the repository's testdata/rapid/<Test>/ (DESIGN.md §5 layout).
func rootDir(t *testing.T) {
	t.Chdir("..")
}

// replay saves the failing scenario and returns the one command that
// replays it. During shrinking the file is overwritten, so it ends up
// holding the last (smallest) failing scenario.
func replay(t *rapid.T, name string, sc *scenario.Scenario) string {
	path := filepath.Join(os.TempDir(), "leasecheck-"+name+".scenario.json")
	if err := sc.Save(path); err != nil {
		return fmt.Sprintf("(cannot save scenario: %v)\n%s", err, sc.Marshal())
	}
	return "replay: go run ./cmd/leasecheck repro " + path
}

// checkBudget bounds one history's linearizability search in the tests. The
// simulator's histories decide in milliseconds; the budget only keeps a
// regression from hanging the suite.
const checkBudget = 60 * time.Second

// checkRun runs sc and checks its history for the four properties.
func checkRun(t *rapid.T, name string, sc *scenario.Scenario, opts *sim.Options) *sim.Result {
	r, err := sim.Run(sc, opts)
	if err != nil {
		t.Fatalf("generated an invalid scenario: %v\n%s", err, sc.Marshal())
	}
	res, err := checker.Check(context.Background(), r.History, checker.Options{Workers: 1, Timeout: checkBudget})
	if err != nil {
		t.Fatalf("the simulator recorded a malformed history: %v\n%s", err, replay(t, name, sc))
	}
	if res.Undecided() {
		// No verdict is not a pass: the checker must decide what the
		// simulator writes (keep the history as testdata/scenarios/checker-hard-*).
		t.Fatalf("linearizability undecided within %v on seed %d\n%s", checkBudget, sc.Seed, replay(t, name, sc))
	}
	if !res.OK() {
		var msg string
		for _, v := range res.Violations {
			msg += fmt.Sprintf("\n  %s lines %v: %s", v.Property, v.Lines, v.Explanation)
		}
		t.Fatalf("the reference implementation failed on seed %d:%s\n%s", sc.Seed, msg, replay(t, name, sc))
	}
	return r
}

// TestPropertyReference: rapid draws scenarios with every fault kind; the
// reference coordinator, resource and holder never violate a property.
func TestPropertyReference(t *testing.T) {
	rootDir(t)
	rapid.Check(t, func(rt *rapid.T) {
		sc := scenario.Generate(sim.NewRapid(rt), scenario.Options{Kinds: faults.AllKinds})
		checkRun(rt, "TestPropertyReference", sc, nil)
	})
}

// TestPropertyReferenceRapidNetwork lets rapid choose every message's delay,
// loss and duplication too, so a failure shrinks down to the network's
// choices.
func TestPropertyReferenceRapidNetwork(t *testing.T) {
	rootDir(t)
	rapid.Check(t, func(rt *rapid.T) {
		c := sim.NewRapid(rt)
		sc := scenario.Generate(c, scenario.Options{Kinds: faults.AllKinds, MaxPerKind: 1})
		sc.Horizon = min(sc.Horizon, 12*sc.TTL) // bound the number of draws
		checkRun(rt, "TestPropertyReferenceRapidNetwork", sc, &sim.Options{Chooser: c})
	})
}

// TestPropertyLiveness: on a quiet network with holder crashes and clock
// faults (offsets, drift within rho, wall-clock steps), after the lease's holder crashes another acquires within TTL + the
// clock bound + its retry interval (+ a round trip); after a release the
// next acquire succeeds without waiting out the TTL.
func TestPropertyLiveness(t *testing.T) {
	rootDir(t)
	rapid.Check(t, func(rt *rapid.T) {
		sc := scenario.Generate(sim.NewRapid(rt), scenario.Options{Kinds: livenessKinds, MaxPerKind: 1, Clean: true})
		r := checkRun(rt, "TestPropertyLiveness", sc, nil)
		if bad := r.Liveness(); len(bad) > 0 {
			rt.Fatalf("liveness: %v\n%s", bad, replay(rt, "TestPropertyLiveness", sc))
		}
	})
}

// livenessKinds are the faults under which the liveness bounds must hold.
var livenessKinds = []faults.Kind{faults.ClockOffset, faults.ClockDrift, faults.ClockStep, faults.Crash}

// TestLivenessIsMeasured makes sure the liveness property is not vacuous:
// across seeds, crashes of the holder and handoffs do get measured.
func TestLivenessIsMeasured(t *testing.T) {
	var rec, hand int
	for seed := uint64(1); seed <= 300; seed++ {
		sc := scenario.FromSeed(seed, scenario.Options{Kinds: livenessKinds, MaxPerKind: 1, ForceAll: true, Clean: true})
		r, err := sim.Run(sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bad := r.Liveness(); len(bad) > 0 {
			t.Fatalf("seed %d: %v", seed, bad)
		}
		rec += len(r.Stats.Recoveries)
		hand += len(r.Stats.Handoffs)
	}
	if rec < 10 || hand < 50 {
		t.Errorf("measured %d recoveries and %d handoffs over 300 seeds; want >= 10 and >= 50", rec, hand)
	}
}

// TestPropertyIntervalModeHolds strips `at` from the reference's histories:
// checked in interval mode (the coordinator's clock known only within the
// declared uncertainty of [call, return], as for etcd), they must still hold.
// This is the no-false-alarm rule of DESIGN.md §3 on realistic histories,
// with every fault kind and lost responses.
func TestPropertyIntervalModeHolds(t *testing.T) {
	rootDir(t)
	rapid.Check(t, func(rt *rapid.T) {
		sc := scenario.Generate(sim.NewRapid(rt), scenario.Options{Kinds: faults.AllKinds})
		r, err := sim.Run(sc, nil)
		if err != nil {
			rt.Fatalf("generated an invalid scenario: %v", err)
		}
		h := *r.History
		h.Ops = append([]model.Op(nil), r.History.Ops...)
		for i := range h.Ops {
			h.Ops[i].At, h.Ops[i].HasAt = 0, false
		}
		res, err := checker.Check(context.Background(), &h, checker.Options{Workers: 1, Timeout: checkBudget})
		if err != nil {
			rt.Fatal(err)
		}
		if !res.OK() {
			rt.Fatalf("interval mode: verdicts %+v violations %+v\n%s", res.Properties, res.Violations, replay(rt, "TestPropertyIntervalModeHolds", sc))
		}
	})
}
