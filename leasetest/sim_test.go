package leasetest_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/machine"
)

var quick = leasetest.SimOptions{Seeds: 300,
	Explore: []explore.Bounds{{Faults: []faults.Kind{faults.Crash}, MaxFaults: 1}, {Adversary: 1}}}

// TestRunMachinesReference: leasecheck's own machines, handed in as a third
// party's, pass the in-process suite (no false alarm).
func TestRunMachinesReference(t *testing.T) {
	leasetest.RunMachines(t, leasetest.Machines{
		Name:        "reference",
		Coordinator: func() machine.Coordinator { return machine.ClockedCoordinator(memstore.New()) },
		Holder:      func(c holder.Config) machine.Holder { return holder.New(c) },
	}, quick)
}

// TestCheckMachinesCatches: a broken coordinator and a broken holder fail
// both parts, each failure a story naming the property with a saved file
// that replays it.
func TestCheckMachinesCatches(t *testing.T) {
	for name, m := range map[string]leasetest.Machines{
		"coordinator": {Name: "greedy", Coordinator: func() machine.Coordinator {
			return machine.ClockedCoordinator(memstore.WithBugs(memstore.BugGreedyGrant))
		}},
		"holder": {Name: "iron-rule", Holder: func(c holder.Config) machine.Holder {
			c.Bugs |= holder.BugWriteAfterFailedRenew
			return holder.New(c)
		}},
	} {
		opts := quick
		opts.Explore = []explore.Bounds{{Faults: []faults.Kind{faults.DropHeartbeats}, MaxFaults: 1}}
		opts.Dir = t.TempDir()
		r, err := leasetest.CheckMachines(context.Background(), m, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{"Sweep", "Explore"} {
			fs := r.Failures[part]
			if len(fs) != 1 {
				t.Fatalf("%s: %s found %d failures, want 1", name, part, len(fs))
			}
			file, story, _ := strings.Cut(fs[0], "\n")
			if _, err := os.Stat(file); err != nil || !strings.Contains(story, "violated") || !strings.Contains(story, "VIOLATION") {
				t.Errorf("%s %s: file %q (%v), story:\n%s", name, part, file, err, story)
			}
		}
	}
}

// The in-process conformance suite for a third party's machines.
func ExampleRunMachines() {
	// In your own test file:
	//
	//	func TestMyCoordinator(t *testing.T) {
	//		leasetest.RunMachines(t, leasetest.Machines{
	//			Name:        "mine",
	//			Coordinator: func() machine.Coordinator { return machine.ClockedCoordinator(mine.New()) },
	//		}, leasetest.SimOptions{})
	//	}
	//
	// Outside a test, CheckMachines returns what it found.
	r, err := leasetest.CheckMachines(context.Background(), leasetest.Machines{
		Name:        "reference",
		Coordinator: func() machine.Coordinator { return machine.ClockedCoordinator(memstore.New()) },
	}, leasetest.SimOptions{Seeds: 50, Explore: []explore.Bounds{{}}})
	if err != nil {
		panic(err)
	}
	fmt.Println("ok:", r.OK(), "seeds:", r.Seeds, "complete:", r.Complete)
	// Output: ok: true seeds: 50 complete: true
}
