package tablestore

import (
	"context"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/explorejudge"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/machine"
)

func machines(f flaw) leasetest.Machines {
	return leasetest.Machines{
		Name:        "tablestore",
		Coordinator: func() machine.Coordinator { return machine.ClockedCoordinator(flawed(f)) },
	}
}

// small keeps the exploration quick: crashes and pauses with one delayed
// message, then one adversarial request.
var small = leasetest.SimOptions{
	Explore: []explore.Bounds{{Faults: []faults.Kind{faults.Crash, faults.Pause}, MaxFaults: 1, Deviations: 1}, {Adversary: 1}}}

// TestConformance: the sound store passes the in-process conformance suite
// (a seeded sweep and a bounded exploration) with the reference holders.
func TestConformance(t *testing.T) {
	leasetest.RunMachines(t, machines(sound), small)
}

// TestFlawsAreCaught: each planted flaw is caught by the suite's sweep and
// by its exploration.
func TestFlawsAreCaught(t *testing.T) {
	for _, f := range []flaw{renewByToken, lateExpiry} {
		r, err := leasetest.CheckMachines(context.Background(), machines(f), small)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Failures["Sweep"]) == 0 || len(r.Failures["Explore"]) == 0 {
			t.Errorf("flaw %d: sweep found %d failures, exploration %d", f, len(r.Failures["Sweep"]), len(r.Failures["Explore"]))
		}
	}
}

// target runs scenarios against the store: a sweep of one's own with
// leasecheck run's loop (campaign.Run), as `leasecheck run` runs the
// reference.
type target struct{ f flaw }

func (t target) Implementation() string { return "third-party:tablestore" }

func (t target) Run(_ context.Context, sc *scenario.Scenario) (*campaign.Execution, error) {
	r, err := sim.Run(sc, &sim.Options{NewCoordinator: machines(t.f).Coordinator})
	if err != nil {
		return nil, err
	}
	return &campaign.Execution{Scenario: sc, History: r.History, Sim: r, Faults: r.Stats.Faults}, nil
}

func sweep(t *testing.T, f flaw, seeds int) *campaign.Summary {
	gen := func(seed uint64) *scenario.Scenario {
		return scenario.FromSeed(seed, scenario.Options{Kinds: faults.AllKinds})
	}
	sum, err := campaign.Run(context.Background(), campaign.Config{Target: target{f}, Scenario: gen, Kinds: faults.AllKinds,
		First: 1, Seeds: seeds, Workers: 1, Judge: campaign.JudgeOptions{Budget: -1}})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestRunLikeSweep: the sound store passes a run-like sweep; each flaw
// fails it.
func TestRunLikeSweep(t *testing.T) {
	if sum := sweep(t, sound, 300); sum.Failed > 0 {
		t.Fatalf("the sound store failed seeds %v", sum.FailedSeeds)
	}
	for _, f := range []flaw{renewByToken, lateExpiry} {
		if sum := sweep(t, f, 300); sum.Failed == 0 {
			t.Errorf("flaw %d passed 300 seeds", f)
		}
	}
}

// TestExplore: the explorer proves the sound store in a bounded space
// (complete, no violation) and finds each flaw.
func TestExplore(t *testing.T) {
	spaces := []explore.Bounds{{Adversary: 1}, {Faults: []faults.Kind{faults.Crash}, MaxFaults: 1, Deviations: 1}}
	run := func(f flaw, b explore.Bounds) *explore.Report {
		r, err := explore.Explore(explore.Space(b), explore.Options{Judges: explorejudge.Judges{}, Sim: &sim.Options{NewCoordinator: machines(f).Coordinator}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, b := range spaces {
		if r := run(sound, b); !r.Complete || r.Counterexample != nil {
			t.Fatalf("sound store in %s: complete %v, counterexample %+v", r.Bounds, r.Complete, r.Counterexample)
		}
	}
	for i, f := range []flaw{renewByToken, lateExpiry} {
		if r := run(f, spaces[i]); r.Counterexample == nil {
			t.Errorf("flaw %d not found in %d states", f, r.DistinctStates)
		}
	}
}
