package runprop

import (
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// TestRunPropertiesHoldForReference: the run properties are no false alarm
// on the reference across every fault kind where they are judged.
func TestRunPropertiesHoldForReference(t *testing.T) {
	kinds := slices.DeleteFunc(slices.Clone(faults.AllKinds), func(k faults.Kind) bool { return k == faults.Pause || k == faults.Freeze })
	n := uint64(400)
	if testing.Short() {
		n = 100
	}
	for seed := uint64(1); seed <= n; seed++ {
		for _, o := range []scenario.Options{{Kinds: kinds}, {Kinds: livenessKinds, Clean: true}, {Clean: true}} {
			sc := scenario.FromSeed(seed, o)
			r, err := sim.Run(sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Stats.DoubleBelief > 0 {
				t.Errorf("seed %d %+v: the reference overlapped beliefs for %dms", seed, o, r.Stats.DoubleBelief)
			}
			if fs := Judge(r); len(fs) > 0 {
				t.Errorf("seed %d %+v: Judge = %+v on the reference", seed, o, fs)
			}
			if livenessApplies(sc) {
				if bad := r.Liveness(); len(bad) > 0 {
					t.Errorf("seed %d: %v", seed, bad)
				}
				if why := unrecovered(r); why != "" {
					t.Errorf("seed %d: %s", seed, why)
				}
			}
			if renewalApplies(sc) {
				if why, _ := lostLease(r.History); why != "" {
					t.Errorf("seed %d: %s", seed, why)
				}
			}
		}
	}
}

// TestPauseOverlapsBeliefs documents why exclusive-belief is not judged
// under pauses and freezes: a stopped holder cannot drop its belief, so the
// reference too overlaps for a while (harmlessly: its writes are re-checked).
func TestPauseOverlapsBeliefs(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		sc := scenario.FromSeed(seed, scenario.Options{Kinds: []faults.Kind{faults.Pause, faults.Freeze}})
		r, err := sim.Run(sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stats.DoubleBelief > 0 {
			return
		}
	}
	t.Fatal("no overlap under pauses in 300 seeds: exclusive-belief could be judged there too")
}
