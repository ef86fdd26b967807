package sim_test

import (
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// FuzzScenario is Go native fuzzing of the scenario generator through
// rapid.MakeFuzz: the fuzzer's bytes are rapid's draws, every scenario is
// run (with rapid also choosing the network) and checked for the four
// properties. The seed corpus lives in the repository's
// testdata/fuzz/FuzzScenario/ (raw bytes); `make fuzz` runs it for
// $(FUZZTIME). Inputs the fuzzer finds failing land in Go's usual
// sim/testdata/fuzz/FuzzScenario/.
func FuzzScenario(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "fuzz", "FuzzScenario", "*.bin"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
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
