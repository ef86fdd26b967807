package tablestore

import (
	"context"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
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
	Explore: []leasetest.ExploreBounds{{Faults: []faults.Kind{faults.Crash, faults.Pause}, MaxFaults: 1, Deviations: 1}, {Adversary: 1}}}

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

// sweep runs the suite's seeded sweep alone: seeds scenarios with every
// fault kind, as `leasecheck run` runs the reference, until the first
// failure.
func sweep(t *testing.T, f flaw, seeds int) *leasetest.MachinesResult {
	r, err := leasetest.CheckMachines(context.Background(), machines(f), leasetest.SimOptions{Seeds: seeds, Skip: []string{"Explore"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunLikeSweep: the sound store passes a run-like sweep; each flaw
// fails it.
func TestRunLikeSweep(t *testing.T) {
	if r := sweep(t, sound, 300); !r.OK() || r.Seeds != 300 {
		t.Fatalf("the sound store: %d seeds swept, failures %q", r.Seeds, r.Failures["Sweep"])
	}
	for _, f := range []flaw{renewByToken, lateExpiry} {
		if r := sweep(t, f, 300); len(r.Failures["Sweep"]) == 0 {
			t.Errorf("flaw %d passed 300 seeds", f)
		}
	}
}

// TestExplore: the exploration alone proves the sound store in a bounded
// space (complete, no violation) and finds each flaw.
func TestExplore(t *testing.T) {
	spaces := []leasetest.ExploreBounds{{Adversary: 1}, {Faults: []faults.Kind{faults.Crash}, MaxFaults: 1, Deviations: 1}}
	run := func(f flaw, b leasetest.ExploreBounds) *leasetest.MachinesResult {
		r, err := leasetest.CheckMachines(context.Background(), machines(f), leasetest.SimOptions{Explore: []leasetest.ExploreBounds{b}, Skip: []string{"Sweep"}, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, b := range spaces {
		if r := run(sound, b); !r.Complete || !r.OK() {
			t.Fatalf("sound store in %+v: complete %v, failures %q", b, r.Complete, r.Failures["Explore"])
		}
	}
	for i, f := range []flaw{renewByToken, lateExpiry} {
		if r := run(f, spaces[i]); len(r.Failures["Explore"]) == 0 {
			t.Errorf("flaw %d not found in %d states", f, r.States)
		}
	}
}
