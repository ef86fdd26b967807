package sim_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// FuzzScenario is Go native fuzzing of the scenario generator through
// rapid.MakeFuzz: the fuzzer's bytes are rapid's draws, every scenario is
// run (with rapid also choosing the network) and judged on every
// property. Its seed corpus (rapid bitstreams of 2 to 16 KiB) is Go's
// usual testdata/fuzz/FuzzScenario/, where inputs the fuzzer finds
// failing land too; `make fuzz` runs it with each new input's
// minimization bounded (internal/fuzzing/fuzzall: each execution is a
// whole simulated run, and go test's 60 s per input left it executing
// nothing new for most of its minute).
func FuzzScenario(f *testing.F) {
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		c := sim.NewRapid(t)
		sc := scenario.Generate(c, scenario.Options{Kinds: faults.AllKinds})
		opts := &sim.Options{}
		if c.Int64(0, 1, "rapid-network") == 1 {
			sc.Horizon = min(sc.Horizon, 12*sc.TTL)
			opts.Chooser = c
		}
		checkRun(t, "FuzzScenario", sc, opts)
	}))
}
