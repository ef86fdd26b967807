package scenario

import (
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
)

// Under a budget of a handful of candidates, as a real backend's shrink has,
// the coarse shrink cuts a long failing scenario to a fraction where the
// one-step shrink cuts a few operations; with budget enough both reach a
// failing scenario, and the coarse one is no bigger.
func TestShrinkCoarseWithinFewCandidates(t *testing.T) {
	s := &Scenario{Version: Version, Semantics: "seed", TTL: 100, Horizon: 10_000}
	for _, name := range []string{"h1", "h2"} {
		p := Process{Name: name}
		for range 50 {
			p.Work = append(p.Work, holder.Item{Work: 20, Writes: 2})
		}
		s.Holders = append(s.Holders, p)
	}
	// The failure: h1's 7th work item runs (an op every 2 writes of an
	// item), and the run lasts past t=300; the size is the ops the run
	// makes, bounded by the horizon (one item per 20 time units).
	size := func(c *Scenario) int {
		n := 0
		for _, p := range c.Holders {
			n += 2 * min(len(p.Work), int(c.Horizon/20))
		}
		return n
	}
	test := func(c *Scenario) (bool, int) {
		fails := len(c.Holders) > 0 && c.Holders[0].Name == "h1" && len(c.Holders[0].Work) >= 7 && c.Horizon > 300
		return fails, size(c)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("the scenario is invalid: %v", err)
	}
	start := size(s)
	fine := size(Shrink(s, test, 6))
	coarse := size(ShrinkCoarse(s, test, 6))
	t.Logf("6 candidates: %d ops to %d (one-step) and %d (coarse)", start, fine, coarse)
	if coarse > start/3 {
		t.Errorf("coarse shrink with 6 candidates: %d ops to %d, want at most a third", start, coarse)
	}
	if coarse >= fine {
		t.Errorf("coarse shrink (%d) no better than one-step (%d) on a budget of 6", coarse, fine)
	}
	full := ShrinkCoarse(s, test, 3000)
	if ok, _ := test(full); !ok {
		t.Fatal("the coarse shrink's result does not fail")
	}
	if a, b := size(full), size(Shrink(s, test, 3000)); a > b {
		t.Errorf("with budget enough, coarse %d ops, one-step %d", a, b)
	}
}

// Under a handful of candidates, the coarse shrink drops the faults a
// failure does not need in chunks: of eight pauses, the one the failure
// needs is left with at most one other, where the one-step shrink, fault by
// fault, keeps most of them.
func TestShrinkCoarseDropsFaultsInChunks(t *testing.T) {
	s := &Scenario{Version: Version, Semantics: "seed", TTL: 100, Horizon: 2_000}
	s.Holders = []Process{{Name: "h1", Work: []holder.Item{{Work: 20, Writes: 1}}}}
	for i := range 8 {
		s.Faults = append(s.Faults, faults.Fault{Kind: faults.Pause, Target: "h1", At: int64(100 + 200*i), Duration: 50})
	}
	needed := s.Faults[5]
	test := func(c *Scenario) (bool, int) {
		return slices.Contains(c.Faults, needed), 10 + 4*len(c.Faults)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("the scenario is invalid: %v", err)
	}
	coarse := ShrinkCoarse(s, test, 6)
	fine := Shrink(s, test, 6)
	t.Logf("6 candidates: 8 faults to %d (coarse), %d (one-step)", len(coarse.Faults), len(fine.Faults))
	if ok, _ := test(coarse); !ok {
		t.Fatal("the coarse result lost the fault the failure needs")
	}
	if len(coarse.Faults) > 2 {
		t.Errorf("coarse shrink kept %d of 8 faults on a budget of 6: %v", len(coarse.Faults), coarse.Faults)
	}
	if len(coarse.Faults) >= len(fine.Faults) {
		t.Errorf("coarse (%d faults) no better than one-step (%d)", len(coarse.Faults), len(fine.Faults))
	}
}

// CutAt: a cut that does not shorten the run is no candidate; otherwise the
// thinned cut (no reader, one write an item) comes before the cut alone,
// and neither touches the scenario it came from.
func TestCutAt(t *testing.T) {
	s := &Scenario{Version: Version, Semantics: "seed", TTL: 100, Horizon: 2_000, ReadEvery: 50}
	s.Holders = []Process{{Name: "h1", Work: []holder.Item{{Work: 20, Writes: 3}, {Work: 20, Writes: 1}}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if c := CutAt(s, 2_000); c != nil {
		t.Errorf("a cut at the horizon: %d candidates", len(c))
	}
	cs := CutAt(s, 700)
	if len(cs) != 2 {
		t.Fatalf("%d candidates, want the thinned cut and the cut", len(cs))
	}
	thin, cut := cs[0], cs[1]
	if thin.Horizon != 700 || thin.ReadEvery != 0 || thin.Holders[0].Work[0].Writes != 1 {
		t.Errorf("thinned cut: horizon %d, read every %d, writes %d", thin.Horizon, thin.ReadEvery, thin.Holders[0].Work[0].Writes)
	}
	if cut.Horizon != 700 || cut.ReadEvery != 50 || cut.Holders[0].Work[0].Writes != 3 {
		t.Errorf("cut: horizon %d, read every %d, writes %d", cut.Horizon, cut.ReadEvery, cut.Holders[0].Work[0].Writes)
	}
	if s.Horizon != 2_000 || s.ReadEvery != 50 || s.Holders[0].Work[0].Writes != 3 {
		t.Error("CutAt changed the scenario it cut")
	}
	s.ReadEvery, s.Holders[0].Work[0].Writes = 0, 1
	if cs := CutAt(s, 700); len(cs) != 1 {
		t.Errorf("nothing to thin: %d candidates, want the cut alone", len(cs))
	}
}

// Under a handful of candidates, the coarse shrink cuts the run before a
// late fault: a failure that needs 400 time units after its pause, the
// pause at 8,000 of 10,000, comes out far shorter than the horizon halving
// alone can make it.
func TestShrinkCoarseCutsBeforeTheFault(t *testing.T) {
	s := &Scenario{Version: Version, Semantics: "seed", TTL: 100, Horizon: 10_000}
	s.Holders = []Process{{Name: "h1", Work: []holder.Item{{Work: 20_000, Writes: 1}}}}
	s.Faults = faults.Plan{{Kind: faults.Pause, Target: "h1", At: 8_000, Duration: 50}}
	test := func(c *Scenario) (bool, int) {
		ok := len(c.Faults) == 1 && c.Horizon-c.Faults[0].At >= 400
		return ok, int(c.Horizon / 20)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	coarse := ShrinkCoarse(s, test, 8)
	if ok, _ := test(coarse); !ok {
		t.Fatal("the coarse result does not fail")
	}
	t.Logf("8 candidates: horizon 10000 to %d, the pause at %d", coarse.Horizon, coarse.Faults[0].At)
	if coarse.Horizon > 2_500 {
		t.Errorf("coarse shrink on a budget of 8: horizon %d, want at most 2500", coarse.Horizon)
	}
}
