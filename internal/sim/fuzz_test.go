package sim_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// FuzzScenario is Go native fuzzing of the scenario generator through
// rapid.MakeFuzz: the fuzzer's bytes are rapid's draws, every scenario is
// run (with rapid also choosing the network) and judged on every
// property. The seed corpus lives in the repository's
// testdata/fuzz/FuzzScenario/ (raw bytes); `make fuzz` runs it for
// $(FUZZTIME). Inputs the fuzzer finds failing land in Go's usual
// internal/sim/testdata/fuzz/FuzzScenario/.
func FuzzScenario(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fuzz", "FuzzScenario", "*.bin"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	boundFuzzMinimization()
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

// fuzzMinimizeExecs bounds how many executions the fuzzer spends
// minimizing one input. Go's fuzzer minimizes every input that finds new
// coverage, for -fuzzminimizetime (default 60 s) per input, and does not
// count those executions; this target's inputs are rapid bitstreams of 2 to
// 16 KiB, each execution a whole simulated run, and new coverage keeps
// coming, so with the default both workers spent nearly all their time
// minimizing: ~40 executions in the first 3 s, then 0 per second to the
// end, reported as PASS. Minimizing a rapid bitstream buys little (a
// failure prints its scenario and the input replays as is), so 10
// executions per input suffice.
const fuzzMinimizeExecs = "10x"

// boundFuzzMinimization sets -test.fuzzminimizetime to fuzzMinimizeExecs
// unless the command line set it. The fuzzing coordinator reads the flag
// when f.Fuzz starts, so it must run before.
func boundFuzzMinimization() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		flag.Set("test.fuzzminimizetime", fuzzMinimizeExecs)
	}
}

// TestFuzzMinimizationIsBounded: FuzzScenario's minimization budget is a
// small count of executions, not the 60 s default that stalled it, and a
// budget given on the command line is kept.
func TestFuzzMinimizationIsBounded(t *testing.T) {
	f := flag.Lookup("test.fuzzminimizetime")
	old := f.Value.String()
	defer f.Value.Set(old)
	boundFuzzMinimization()
	if got := f.Value.String(); got != fuzzMinimizeExecs && old == "1m0s" {
		t.Errorf("-test.fuzzminimizetime = %s after FuzzScenario's setup, want %s", got, fuzzMinimizeExecs)
	}
}
