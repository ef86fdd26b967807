package sim_test

import (
	"context"
	"fmt"
	"io"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/model"
)

// Run a scenario generated from a seed, write its history (format v1) and
// check it.
func ExampleRun() {
	sc := scenario.FromSeed(42, scenario.Options{Kinds: faults.AllKinds})
	r, err := sim.Run(sc, nil)
	if err != nil {
		panic(err)
	}
	if err := model.WriteHistory(io.Discard, r.History); err != nil { // a file, os.Stdout, ...
		panic(err)
	}
	res, err := checker.Check(context.Background(), r.History, checker.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("ok:", res.OK(), "same again:", mustRun(sc).Hash == r.Hash)
	// Output: ok: true same again: true
}

func mustRun(sc *scenario.Scenario) *sim.Result {
	r, err := sim.Run(sc, nil)
	if err != nil {
		panic(err)
	}
	return r
}

// A hand-written scenario: the article's GC pause between the check and the
// write, replayed exactly.
func ExampleRun_gcPause() {
	sc := &scenario.Scenario{
		Version: scenario.Version, Seed: 1, Semantics: "fenced-storage", Key: "k",
		TTL: 100, Horizon: 5000,
		Network: scenario.Network{MinDelay: 1, MaxDelay: 3},
		Holders: []scenario.Process{
			{Name: "h1", Work: []holder.Item{{Work: 150, Writes: 1}}},
			{Name: "h2", Start: 20, Work: []holder.Item{{Work: 10, Writes: 1}}},
		},
		Faults: faults.Plan{{Kind: faults.Pause, Target: "h1", At: 140, Duration: 300}},
	}
	r, err := sim.Run(sc, nil)
	if err != nil {
		panic(err)
	}
	for _, e := range r.Trace {
		if e.Node == "coordinator" {
			fmt.Println(e.What, e.Detail)
		}
	}
	// Output:
	// granted h1 fence=1
	// granted h2 fence=2
	// released h2
	// granted h1 fence=3
	// released h1
}
