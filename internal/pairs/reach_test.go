package pairs_test

import (
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/explorejudge"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/pairs"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// TestSeedsReachEveryPair: the first 2,000 seeds of `leasecheck run` (every
// fault kind) reach every pair of the model.
func TestSeedsReachEveryPair(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 simulated runs")
	}
	var s pairs.Set
	for seed := uint64(1); seed <= 2000; seed++ {
		r, err := sim.Run(scenario.FromSeed(seed, scenario.Options{Kinds: faults.AllKinds}), &sim.Options{NoTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		s.Union(&r.Pairs)
	}
	if r := pairs.Judge(s, "seeds 1..2000"); !r.Complete() {
		t.Errorf("%s; never reached: %v", r.Summary(), r.Unreached)
	}
}

// TestPlanReachesEveryPair: the default explore plan reaches every pair
// of the model, and finds no violation.
func TestPlanReachesEveryPair(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole default plan: minutes")
	}
	rep, _, err := explore.ExplorePlan(explore.DefaultPlan(), explore.Options{Workers: 2, Judges: explorejudge.Judges{}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete || rep.Counterexample != nil {
		t.Fatalf("the default plan: complete %v, stopped %s", rep.Complete, rep.Stopped)
	}
	if r := pairs.Judge(rep.Pairs, "the default plan"); !r.Complete() {
		t.Errorf("%s; never reached: %v", r.Summary(), r.Unreached)
	}
	t.Logf("%d states, %d distinct, %v", rep.States, rep.DistinctStates, rep.Elapsed)
}

// A run without faults meets no pair; one whose coordinator crashes while
// the holder's acquire is on its way meets coordinator-crash × acquire
// sent (not × acquire applied) and the retry that follows.
func TestRunPairs(t *testing.T) {
	sc := &scenario.Scenario{Version: scenario.Version, Seed: 1, Semantics: "seed", Key: "k", TTL: 30, Horizon: 200,
		Network: scenario.Network{MinDelay: 5, MaxDelay: 5},
		Holders: []scenario.Process{{Name: "h1", Work: []holder.Item{{Work: 10, Writes: 1}}}}}
	r, err := sim.Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := pairs.Judge(r.Pairs, "no faults"); got.Reached != 0 {
		t.Fatalf("a run without faults: %s", got.Summary())
	}
	sc.Faults = faults.Plan{{Kind: faults.CoordinatorCrash, Target: faults.Coordinator, At: 2, Duration: 1}}
	if r, err = sim.Run(sc, nil); err != nil {
		t.Fatal(err)
	}
	// The acquire it swallowed is retried: a retry after an unknown
	// outcome, met after the crash.
	want := map[string]bool{"coordinator-crash × acquire sent": true, "coordinator-crash × retry-after-unknown": true}
	got := pairs.Judge(r.Pairs, "a crash")
	if got.Reached != len(want) {
		t.Fatalf("a coordinator crash with an acquire in flight: %s", got.Summary())
	}
	for _, p := range got.Unreached {
		if want[p.String()] {
			t.Fatalf("%s not reached: %s", p, got.Summary())
		}
	}
}
