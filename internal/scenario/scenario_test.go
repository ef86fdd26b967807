package scenario_test

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

func TestFromSeedIsDeterministicAndValid(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		a := scenario.FromSeed(seed, scenario.Options{Kinds: faults.AllKinds})
		b := scenario.FromSeed(seed, scenario.Options{Kinds: faults.AllKinds})
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two generations differ", seed)
		}
		if a.Seed != seed {
			t.Fatalf("seed %d: scenario seed %d", seed, a.Seed)
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, a.Marshal())
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	a := scenario.FromSeed(99, scenario.Options{Kinds: faults.AllKinds, ForceAll: true})
	b, err := scenario.Parse(a.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip differs:\n%s\n%s", a.Marshal(), b.Marshal())
	}
	if string(a.Marshal()) != string(b.Marshal()) {
		t.Fatal("re-marshalled bytes differ")
	}
}

func TestParseRejects(t *testing.T) {
	good := string(scenario.FromSeed(1, scenario.Options{}).Marshal())
	for _, tc := range []struct{ name, in, want string }{
		{"unknown field", strings.Replace(good, `"key"`, `"kee"`, 1), "unknown field"},
		{"version", strings.Replace(good, `"version": 1`, `"version": 2`, 1), "version"},
		{"semantics", strings.Replace(good, `"semantics": "seed"`, `"semantics": "eventual"`, 1), "semantics"},
		{"ttl", strings.Replace(good, `"ttl": `, `"ttl": -`, 1), "ttl"},
		{"not json", "{", "scenario"},
	} {
		if _, err := scenario.Parse([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse error = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

// Every scenario rapid can draw survives JSON: Marshal then Parse gives it
// back, so a saved scenario replays what was run.
func TestPropertyScenarioJSON(t *testing.T) {
	t.Chdir("../..") // the module root, as the other property tests
	rapid.Check(t, func(rt *rapid.T) {
		a := scenario.Generate(sim.NewRapid(rt), scenario.Options{Kinds: faults.AllKinds})
		b, err := scenario.Parse(a.Marshal())
		if err != nil {
			rt.Fatalf("Parse(Marshal(s)) = %v\n%s", err, a.Marshal())
		}
		if !reflect.DeepEqual(a, b) {
			rt.Fatalf("round trip differs:\n%s\n%s", a.Marshal(), b.Marshal())
		}
	})
}
