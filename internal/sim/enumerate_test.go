package sim_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/model"
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

// walk runs the space's scenario along a random walk of seed and returns
// a world replaying that walk (traced unless noTrace), stepped cut(n)
// moves in of the walk's n, and the uncut run's Result.
func walk(t testing.TB, seed uint64, cut func(n int) int, noTrace bool) (*sim.World, *sim.Result) {
	t.Helper()
	sc := space()
	// Freezes too: their spans and held sends among the states copied. (A
	// frozen node's inbox stays empty on these walks, measured; explore's
	// TestSpareWorldsAreExact copies states where it fills.)
	sc.Space.Faults = append(sc.Space.Faults, faults.Freeze)
	sc.Space.MaxFaults = 3
	rec := &walker{r: rand.New(rand.NewPCG(seed, 9))}
	whole, err := sim.Run(sc, &sim.Options{Chooser: rec, NoTrace: noTrace})
	if err != nil {
		t.Fatal(err)
	}
	sc.Schedule = scenario.NewSchedule(rec.cs, whole.Steps)
	w, err := sim.NewWorld(sc, &sim.Options{NoTrace: noTrace})
	if err != nil {
		t.Fatal(err)
	}
	w.EnableHashing()
	for w.Steps() < cut(whole.Steps) && w.Step() {
	}
	return w, whole
}

// TestCloneIntoASpareWorld: a copy made in a spare world — one another
// run used, to any point, its Result taken or not — is the same state as
// a fresh copy and runs to the same end, reusing the spare; the original
// is left as it was.
func TestCloneIntoASpareWorld(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		noTrace := seed%2 == 0
		_, whole := walk(t, seed, func(int) int { return 0 }, noTrace)
		// Every third point of the walk, so paused nodes' held messages
		// and open spans are among the states copied.
		for cut := int(seed % 3); cut < whole.Steps; cut += 3 {
			w, _ := walk(t, seed, func(int) int { return cut }, noTrace)
			spare, _ := walk(t, seed+1000, func(n int) int { return (cut * 7) % max(n, 1) }, cut%3 == 0)
			if cut%5 == 0 {
				spare.Result() // a leaf's world: judged, then spare
			}
			before := w.StateHash()
			c := w.CloneInto(spare)
			if c != spare {
				t.Fatalf("seed %d, cut %d: the copy is not made in the spare world", seed, cut)
			}
			if got := c.StateHash(); got != before {
				t.Fatalf("seed %d, cut %d: the copy's digest %x, the original's %x", seed, cut, got, before)
			}
			for c.Step() {
			}
			w.VerifyDigests()
			if got := w.StateHash(); got != before || w.Err() != nil {
				t.Fatalf("seed %d, cut %d: stepping the copy changed the original's state (%v)", seed, cut, w.Err())
			}
			rc := c.Result()
			for w.Step() {
			}
			if rw := w.Result(); rc.Hash != whole.Hash || rw.Hash != whole.Hash {
				t.Fatalf("seed %d, cut %d: copy %x, original %x, uncopied %x", seed, cut, rc.Hash, rw.Hash, whole.Hash)
			}
		}
	}
}

// TestResultSoFarLeavesTheRunAsItWas: the Result of a run so far is the
// Result of a copy ended there (history, spans, measurements, trace),
// whether its history is gathered into a new slice or into the room of
// another run's, and the run goes on to the same end as one never judged.
func TestResultSoFarLeavesTheRunAsItWas(t *testing.T) {
	var room []model.Op // another run's history, reused
	for seed := uint64(1); seed <= 60; seed++ {
		noTrace := seed%2 == 1
		w, whole := walk(t, seed, func(n int) int { return int(seed*3) % max(n, 1) }, noTrace)
		before := w.StateHash()
		var buf []model.Op
		if seed%3 != 0 {
			buf = room
		}
		so := w.ResultSoFar(buf)
		ended := w.Clone().Result()
		if so.Hash != ended.Hash || !reflect.DeepEqual(so.History, ended.History) || !reflect.DeepEqual(so.Beliefs, ended.Beliefs) ||
			!reflect.DeepEqual(so.Stops, ended.Stops) || !reflect.DeepEqual(so.Stats, ended.Stats) || len(so.Trace) != len(ended.Trace) {
			t.Fatalf("seed %d: the Result so far differs from a copy's ended there", seed)
		}
		if got := w.StateHash(); got != before {
			t.Fatalf("seed %d: taking the Result so far changed the state", seed)
		}
		other, _ := walk(t, seed+500, func(n int) int { return n }, true)
		room = other.Result().History.Ops[:0]
		for w.Step() {
		}
		if r := w.Result(); r.Hash != whole.Hash {
			t.Fatalf("seed %d: the run judged on the way ended at %x, unjudged %x", seed, r.Hash, whole.Hash)
		}
	}
}
