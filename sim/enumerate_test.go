package sim_test

import (
	"math/rand/v2"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// space is a small enumerable scenario: two holders, delays 1..2, a lossy
// network, faults and the adversary.
func space() *scenario.Scenario {
	return &scenario.Scenario{
		Version: scenario.Version, Seed: 1, Semantics: "seed", Key: "k", TTL: 30, RhoPPM: 50_000, Horizon: 400,
		Network: scenario.Network{MinDelay: 1, MaxDelay: 2, DropPPM: 1, DupPPM: 1},
		Holders: []scenario.Process{
			{Name: "h1", Work: []holder.Item{{Work: 5, Writes: 1}}},
			{Name: "h2", Work: []holder.Item{{Work: 5, Writes: 1}}},
		},
		Space: &scenario.Space{Faults: []faults.Kind{faults.Pause, faults.Crash, faults.ClockStep}, MaxFaults: 2, Adversary: 2, Deviations: 4},
	}
}

// walker is a Picker that picks at random and records what it picked.
type walker struct {
	r  *rand.Rand
	cs []scenario.Choice
}

func (p *walker) Pick(n int, label string) int {
	v := p.r.IntN(n)
	p.cs = append(p.cs, scenario.Choice{Label: label, Value: v})
	return v
}

func (p *walker) Int64(lo, hi int64, label string) int64 {
	return lo + int64(p.Pick(int(hi-lo+1), label))
}

// TestScheduleReplaysAWalk: a random walk over every choice point, saved as
// a Schedule, replays to the same history and trace (sim.Run with no other
// option), and its saved scenario does too.
func TestScheduleReplaysAWalk(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		sc := space()
		p := &walker{r: rand.New(rand.NewPCG(seed, 7))}
		r1, err := sim.Run(sc, &sim.Options{Chooser: p})
		if err != nil {
			t.Fatal(err)
		}
		sc2 := sc.Clone()
		sc2.Schedule = scenario.NewSchedule(p.cs, r1.Steps)
		back, err := scenario.Parse(sc2.Marshal())
		if err != nil {
			t.Fatal(err)
		}
		r2, err := sim.Run(back, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if r1.Hash != r2.Hash || len(r1.History.Ops) != len(r2.History.Ops) {
			t.Fatalf("seed %d: walk and replay differ: %x vs %x (%d vs %d ops)", seed, r1.Hash, r2.Hash, len(r1.History.Ops), len(r2.History.Ops))
		}
	}
}

// TestScheduleMismatchIsAnError: a schedule recorded for another run is an
// error naming the choice, not a silently different run.
func TestScheduleMismatchIsAnError(t *testing.T) {
	sc := space()
	sc.Schedule = &scenario.Schedule{Choices: []string{"delay=7"}}
	if _, err := sim.Run(sc, nil); err == nil {
		t.Fatal("a schedule that does not fit ran without error")
	}
}

// TestCloneIsIndependent: stepping a copy leaves the original as it was
// (its machines, shared until written, and their kept digests too); both
// continue to the same end as a run never copied.
func TestCloneIsIndependent(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		sc := space()
		rec := &walker{r: rand.New(rand.NewPCG(seed, 9))}
		whole, err := sim.Run(sc, &sim.Options{Chooser: rec, NoTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		sched := scenario.NewSchedule(rec.cs, whole.Steps)
		sc.Schedule = sched
		w, err := sim.NewWorld(sc, &sim.Options{NoTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		w.EnableHashing()
		cut := int(seed) % max(whole.Steps, 1)
		for w.Steps() < cut && w.Step() {
		}
		before := w.StateHash()
		c := w.Clone()
		if c == nil {
			t.Fatal("the reference world cannot be cloned")
		}
		for c.Step() {
		}
		// The digests the original keeps beside its machines are checked
		// against fresh ones: a copy that wrote a machine they share would
		// leave them stale.
		w.VerifyDigests()
		if got := w.StateHash(); got != before || w.Err() != nil {
			t.Fatalf("seed %d: stepping the copy changed the original's state (%v)", seed, w.Err())
		}
		rc := c.Result()
		for w.Step() {
		}
		rw := w.Result()
		if rc.Hash != whole.Hash || rw.Hash != whole.Hash {
			t.Fatalf("seed %d: copy %x, original %x, uncopied %x", seed, rc.Hash, rw.Hash, whole.Hash)
		}
	}
}
