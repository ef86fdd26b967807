package sim_test

import (
	"math/rand/v2"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// TestCanonicalHashMergesOnlyImages judges the symmetry reduction's digest
// against the plain one on random walks over a space of two identical
// holders: a canonical class never holds more than |G| = 2 plain states (a
// canonical digest blind to some of the state would merge more), some
// class holds two (mirror images do meet), and one plain state never gets
// two canonical digests. Holders that start apart or differ in program are
// not interchangeable.
func TestCanonicalHashMergesOnlyImages(t *testing.T) {
	sc := space()
	sc.Space.Faults = []faults.Kind{faults.Pause, faults.Crash, faults.OwnerReuse}
	sym0, why := mustWorld(t, sc, nil).HolderSymmetry()
	if sym0 == nil {
		t.Fatalf("two identical holders not symmetric: %s", why)
	}
	classes := map[uint64]map[uint64]bool{} // canonical -> plain digests
	plainToSym := map[uint64]uint64{}
	for seed := uint64(1); seed <= 300; seed++ {
		p := &walker{r: rand.New(rand.NewPCG(seed, 11))}
		w := mustWorld(t, sc, p)
		sym, _ := w.HolderSymmetry()
		for step := 0; step < 60; step++ {
			ms := w.Moves()
			if len(ms) == 0 {
				break
			}
			plain, canon := w.StateHash(), w.CanonicalHash(sym) // one plain state, one canonical digest
			if classes[canon] == nil {
				classes[canon] = map[uint64]bool{}
			}
			classes[canon][plain] = true
			if c, ok := plainToSym[plain]; ok && c != canon {
				t.Fatalf("one plain state, two canonical digests")
			}
			plainToSym[plain] = canon
			w.Do(p.r.IntN(len(ms)))
		}
	}
	pairs := 0
	for _, c := range classes {
		if len(c) > 2 {
			t.Fatalf("a canonical class of %d plain states: it merges states that are no images", len(c))
		}
		if len(c) == 2 {
			pairs++
		}
	}
	t.Logf("%d plain states, %d canonical classes, %d of two", len(plainToSym), len(classes), pairs)
	if pairs == 0 {
		t.Errorf("no two mirror images met: the test shows nothing")
	}
	// Staggered starts: no symmetry.
	sc.Holders[1].Start = 2
	if s, _ := mustWorld(t, sc, nil).HolderSymmetry(); s != nil {
		t.Errorf("holders starting apart found interchangeable")
	}
	sc.Holders[1].Start = 0
	sc.Holders[1].Work = []holder.Item{{Work: 6, Writes: 1}}
	if s, _ := mustWorld(t, sc, nil).HolderSymmetry(); s != nil {
		t.Errorf("holders with different programs found interchangeable")
	}
}

func mustWorld(t *testing.T, sc *scenario.Scenario, p sim.Picker) *sim.World {
	t.Helper()
	o := &sim.Options{}
	if p != nil {
		o.Chooser = p
	}
	w, err := sim.NewWorld(sc, o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
