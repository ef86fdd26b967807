package scenario

import (
	"reflect"
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
)

// hasCrash is a stand-in failure: "the plan crashes some holder before t=ttl*2".
func hasCrash(s *Scenario) (bool, int) {
	for _, f := range s.Faults {
		if f.Kind == faults.Crash {
			n := len(s.Faults) + len(s.Holders)
			for _, p := range s.Holders {
				n += len(p.Work)
			}
			return true, n
		}
	}
	return false, 0
}

func TestShrinkMinimizes(t *testing.T) {
	found := 0
	for seed := uint64(1); seed <= 40; seed++ {
		s := FromSeed(seed, Options{Kinds: faults.AllKinds})
		if ok, _ := hasCrash(s); !ok {
			continue
		}
		found++
		before := s.Clone()
		m := Shrink(s, hasCrash, 10_000)
		if !reflect.DeepEqual(s, before) {
			t.Fatalf("seed %d: Shrink modified its input", seed)
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("seed %d: shrunk scenario invalid: %v", seed, err)
		}
		if ok, _ := hasCrash(m); !ok {
			t.Fatalf("seed %d: shrunk scenario no longer fails", seed)
		}
		if len(m.Faults) != 1 || len(m.Holders) != 1 || m.ReadEvery != 0 || m.Network.DropPPM != 0 || len(m.Holders[0].Work) != 0 {
			t.Errorf("seed %d: not minimal: %d faults, %d holders, reader %d, drop %d, work %v",
				seed, len(m.Faults), len(m.Holders), m.ReadEvery, m.Network.DropPPM, m.Holders[0].Work)
		}
		if m.Faults[0].At != 0 || m.Horizon > 8 || m.TTL > 1 {
			t.Errorf("seed %d: times not shrunk: at=%d horizon=%d ttl=%d", seed, m.Faults[0].At, m.Horizon, m.TTL)
		}
		if again := Shrink(s, hasCrash, 10_000); !reflect.DeepEqual(again, m) {
			t.Fatalf("seed %d: Shrink is not deterministic", seed)
		}
	}
	if found < 5 {
		t.Fatalf("only %d seeds with a crash; the test is vacuous", found)
	}
}

func TestShrinkRespectsBudgetAndSize(t *testing.T) {
	s := FromSeed(3, Options{Kinds: faults.AllKinds, ForceAll: true})
	calls := 0
	test := func(c *Scenario) (bool, int) { calls++; return true, 0 }
	Shrink(s, test, 5)
	if calls != 6 { // the initial measurement and five candidates
		t.Errorf("test called %d times, want 6", calls)
	}
	// A candidate whose size grew is refused.
	grow := func(c *Scenario) (bool, int) { return true, 1000 - len(c.Faults) }
	if m := Shrink(s, grow, 1000); len(m.Faults) != len(s.Faults) {
		t.Errorf("a larger candidate was kept: %d faults, had %d", len(m.Faults), len(s.Faults))
	}
}

// TestShrinkNarrowsASpace: an explored space's choices are shrinkable too
// (package explore minimizes its counterexamples with Shrink): a fault
// kind the failure does not need goes, and each bound comes down to what
// it needs.
func TestShrinkNarrowsASpace(t *testing.T) {
	s := &Scenario{Version: Version, Seed: 1, Semantics: "seed", Key: "k", TTL: 30, Horizon: 300,
		Network: Network{MinDelay: 1, MaxDelay: 2},
		Holders: []Process{{Name: "h1"}},
		Space:   &Space{Faults: []faults.Kind{faults.Pause, faults.Crash}, MaxFaults: 2, Adversary: 2, Deviations: 3}}
	needsCrash := func(c *Scenario) (bool, int) {
		sp := c.Space
		if !slices.Contains(sp.Faults, faults.Crash) || sp.MaxFaults < 1 || sp.Deviations < 1 {
			return false, 0
		}
		return true, len(sp.Faults) + sp.MaxFaults + sp.Adversary + sp.Deviations
	}
	m := Shrink(s, needsCrash, 1000)
	want := Space{Faults: []faults.Kind{faults.Crash}, MaxFaults: 1, Deviations: 1}
	if !reflect.DeepEqual(*m.Space, want) {
		t.Errorf("shrunk space %+v, want %+v", *m.Space, want)
	}
	if len(s.Space.Faults) != 2 || s.Space.MaxFaults != 2 {
		t.Errorf("Shrink modified its input's space: %+v", *s.Space)
	}
}
