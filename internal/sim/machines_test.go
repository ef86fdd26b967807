package sim

import (
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// threeStepsIn is a one-holder enumerable world, digested, three moves in.
func threeStepsIn(t *testing.T) *World {
	t.Helper()
	sc := &scenario.Scenario{
		Version: scenario.Version, Seed: 1, Semantics: "seed", Key: "k", TTL: 30, RhoPPM: 50_000, Horizon: 400,
		Network: scenario.Network{MinDelay: 1, MaxDelay: 2},
		Holders: []scenario.Process{{Name: "h1", Work: []holder.Item{{Work: 5, Writes: 1}}}},
		Space:   &scenario.Space{Deviations: 1},
	}
	w, err := NewWorld(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.EnableHashing()
	for w.Steps() < 3 && w.Step() {
	}
	return w
}

// TestVerifyDigestsCatchesAWritePastTheAccessors: a machine written without
// holderW (so neither copied nor its kept digest reset) is reported by a
// world that verifies its digests, in the copy that wrote it and in the
// original it shares the machine with; written through holderW, neither
// reports anything and the original is untouched.
func TestVerifyDigestsCatchesAWritePastTheAccessors(t *testing.T) {
	for _, bypass := range []bool{false, true} {
		w := threeStepsIn(t)
		before := w.StateHash()
		c := w.Clone()
		h1 := &c.nodes[w.id("h1")]
		if bypass {
			h1.m.Tick(h1.clock.Mono(c.now) + 1000) // past the lease: the holder's state changes
		} else {
			c.holderW(h1).Tick(h1.clock.Mono(c.now) + 1000)
		}
		c.VerifyDigests()
		w.VerifyDigests()
		c.StateHash()
		got := w.StateHash()
		switch {
		case bypass && (c.Err() == nil || w.Err() == nil):
			t.Errorf("a write past the accessors went unreported: copy %v, original %v", c.Err(), w.Err())
		case !bypass && (c.Err() != nil || w.Err() != nil):
			t.Errorf("a write through holderW reported: copy %v, original %v", c.Err(), w.Err())
		case !bypass && got != before:
			t.Error("a write through holderW in the copy changed the original")
		}
	}
}

// checkKeptDigest runs write on a digested world, once past the keeper of
// a kept digest (bypass) and once through it: past it, the kept digest must
// stay as it was and VerifyDigests must report it stale; through it, the
// digest must follow the write and nothing be reported.
func checkKeptDigest(t *testing.T, keeper string, setup func(w *World), write func(w *World, bypass bool)) {
	t.Helper()
	for _, bypass := range []bool{false, true} {
		w := threeStepsIn(t)
		setup(w)
		before := w.StateHash() // keeps every digest it can
		write(w, bypass)
		after := w.StateHash()
		w.VerifyDigests()
		w.StateHash()
		switch {
		case bypass && (w.Err() == nil || after != before):
			t.Errorf("a write past %s went unreported (%v) or changed the kept digest", keeper, w.Err())
		case !bypass && (w.Err() != nil || after == before):
			t.Errorf("a write through %s: reported %v, or the digest did not follow it", keeper, w.Err())
		}
	}
}

// TestVerifyDigestsCatchesANodeWrittenPastNodeW: a node's own fields
// written without nodeW leave its kept digest stale, which VerifyDigests
// reports; written through nodeW, the digest follows the write.
func TestVerifyDigestsCatchesANodeWrittenPastNodeW(t *testing.T) {
	checkKeptDigest(t, "nodeW", func(*World) {}, func(w *World, bypass bool) {
		id := w.id("h1")
		if bypass {
			w.nodes[id].extraDelay++
		} else {
			w.nodeW(id).extraDelay++
		}
	})
}

// The belief and stop spans' kept digest follows openStop and closeStop,
// and VerifyDigests catches a span written around them.
func TestVerifyDigestsCatchesASpanWrittenPastItsKeeper(t *testing.T) {
	checkKeptDigest(t, "closeStop", func(w *World) {
		w.openStop(w.id("h1"), faults.Pause)
		w.now++
	}, func(w *World, bypass bool) {
		if bypass {
			s := &w.stops[len(w.stops)-1]
			s.To, s.Open = w.now, false
		} else {
			w.closeStop(w.id("h1"), false)
		}
	})
}
