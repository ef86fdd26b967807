package mutants

import (
	"reflect"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// TestCopiesAreReference: the coordinator, resource and holder copies with
// no bug switched in give the reference's history, byte for byte, so every
// mutant is exactly its one marked change away from the reference.
func TestCopiesAreReference(t *testing.T) {
	copies := &sim.Options{
		NewCoordinator: func() sim.Coordinator { return newCoordinator(coordOK) },
		NewResource:    func() sim.Resource { return newResource(false) },
		NewHolder:      func(c holder.Config) sim.Machine { return newHolder(holderOK, c) },
	}
	n := uint64(200)
	if testing.Short() {
		n = 50
	}
	for seed := uint64(1); seed <= n; seed++ {
		sc := scenario.FromSeed(seed, scenario.Options{Kinds: faults.AllKinds})
		ref, err := sim.Run(sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := sim.Run(sc, copies)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ref.History, cp.History) {
			t.Fatalf("seed %d: the copies' history differs from the reference's", seed)
		}
		if ref.Stats.DoubleBelief != cp.Stats.DoubleBelief {
			t.Fatalf("seed %d: double belief %d, reference %d", seed, cp.Stats.DoubleBelief, ref.Stats.DoubleBelief)
		}
	}
}
