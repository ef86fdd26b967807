package faultgen

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
)

// seeded is a Chooser over a PCG stream.
type seeded struct{ r *rand.Rand }

func seededChooser(seed uint64) *seeded { return &seeded{rand.New(rand.NewPCG(seed, 1))} }

func (s *seeded) Int64(lo, hi int64, _ string) int64 {
	if hi <= lo {
		return lo
	}
	return lo + s.r.Int64N(hi-lo+1)
}

// Generate draws every parameter from the chooser: the same seed, the same
// plan; every generated plan is valid; force puts each kind in.
func TestGenerate(t *testing.T) {
	env := Env{Horizon: 5000, TTL: 100, RhoPPM: 1000, Holders: []string{"h1", "h2"}, Fenced: true}
	for seed := uint64(0); seed < 200; seed++ {
		a := Generate(seededChooser(seed), env, faults.AllKinds, 2, true)
		b := Generate(seededChooser(seed), env, faults.AllKinds, 2, true)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two plans differ", seed)
		}
		if err := a.Validate(env.Holders, env.RhoPPM); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if c := a.Counts(); len(c) != len(faults.AllKinds) {
			t.Fatalf("seed %d: forced plan has kinds %v", seed, c)
		}
	}
}
