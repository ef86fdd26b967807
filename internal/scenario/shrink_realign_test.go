package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
)

// alignedRenew is the period of the renewals of the aligned model: prime,
// so that no halving of a time lands a fault back on the grid by luck.
const alignedRenew = 13

// alignedModel is a stand-in for the simulator in which, as there, a
// failure can hang on a fault hitting one instant: the holders take the
// lease one after the other in the order of their starts (each waits for
// the one before to finish); each works through its items back to back,
// an item's writes 1 ms apart after its work, and renews every
// alignedRenew ms from when it got the lease. The run fails when a
// drop-heartbeats window on a holder covers one of its renewals and the
// holder writes after it (a write after a failed renewal); the run stops
// at the horizon. Its size is
// scored like campaign's: operations (acquires, renewals, writes), and 4
// per holder and per fault.
func alignedModel(s *Scenario) (bool, int) {
	order := make([]int, len(s.Holders))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(s.Holders[a].Start - s.Holders[b].Start) })
	ops, fails, end := 0, false, int64(0)
	for _, i := range order {
		p := s.Holders[i]
		begin := max(p.Start, end)
		t := begin
		var writes []int64
		for _, it := range p.Work {
			t += it.Work
			for range it.Writes {
				if t < s.Horizon {
					writes = append(writes, t)
				}
				t++
			}
		}
		end = t
		if begin < s.Horizon {
			ops += 1 + len(writes)
		}
		for r := begin + alignedRenew; r < min(end, s.Horizon); r += alignedRenew {
			ops++
			for _, f := range s.Faults {
				if f.Kind == faults.DropHeartbeats && f.Target == p.Name && f.At <= r && r < f.At+f.Duration &&
					len(writes) > 0 && writes[len(writes)-1] > r {
					fails = true
				}
			}
		}
	}
	return fails, ops + 4*len(s.Holders) + 4*len(s.Faults)
}

// alignedScenario is the shape of the saved renew-loop-dies failure: h3
// holds the lease for half a second, h1 waits, and a 1 ms heartbeat drop
// hits one of h1's renewals only because of where h3's work put them. h1
// starts at h1Start (before h3 is done).
func alignedScenario(t *testing.T, h1Start int64) *Scenario {
	s := &Scenario{
		Version: Version, Seed: 23, Semantics: "fenced-storage", Key: "k", TTL: 178, Horizon: 1273,
		Network: Network{MinDelay: 3, MaxDelay: 17},
		Holders: []Process{
			{Name: "h1", Start: h1Start, Work: []holder.Item{{Work: 16, Writes: 2}, {Work: 64, Writes: 2}, {Work: 12, Writes: 3}}},
			{Name: "h3", Start: 106, Work: []holder.Item{{Work: 16, Writes: 3}, {Work: 459, Writes: 2}}},
		},
	}
	// h3 has the lease over [106, 586); h1's fourth renewal is at 586+4*13.
	s.Faults = faults.Plan{{Kind: faults.DropHeartbeats, Target: "h1", At: 586 + 4*alignedRenew, Duration: 1}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := alignedModel(s); !ok {
		t.Fatal("the aligned scenario does not fail its model")
	}
	return s
}

// alignedMinimum is the smallest size a failing scenario of alignedModel
// has: one holder that acquires, renews once and writes, one fault.
const alignedMinimum = 3 + 4 + 4

func TestShrinkEscapesAlignedLocalMinimum(t *testing.T) {
	// At 111, h3's work is how much earlier h1 gets the lease without h3
	// (the shifted deletion finds it); at 140 it is not (only the widened
	// window does).
	for _, h1Start := range []int64{111, 140} {
		t.Run(fmt.Sprint("h1-at-", h1Start), func(t *testing.T) { testEscapesAligned(t, h1Start) })
	}
}

func testEscapesAligned(t *testing.T, h1Start int64) {
	s := alignedScenario(t, h1Start)
	before := s.Clone()

	// The plain candidates alone stop in a local minimum: every deletion
	// or halving moves h1's renewals off the fault.
	plain := shrink(s, alignedModel, 10_000, plain(shrinkCandidates)...)
	if _, n := alignedModel(plain); n <= alignedMinimum {
		t.Fatalf("plain candidates reached the minimum (%d); the case no longer needs realigning", n)
	}

	m := Shrink(s, alignedModel, 10_000)
	if !reflect.DeepEqual(s, before) {
		t.Fatal("Shrink modified its input")
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("shrunk scenario invalid: %v", err)
	}
	ok, n := alignedModel(m)
	if !ok {
		t.Fatal("shrunk scenario no longer fails")
	}
	_, np := alignedModel(plain)
	t.Logf("plain shrink: size %d; with realigning: size %d (minimum %d): %+v %v", np, n, alignedMinimum, m.Holders, m.Faults)
	if n != alignedMinimum {
		t.Errorf("size %d, want the minimum %d: holders %+v, faults %v", n, alignedMinimum, m.Holders, m.Faults)
	}
	if len(m.Faults) == 1 && m.Faults[0].Duration != 1 {
		t.Errorf("fault window %v not narrowed back to 1 ms", m.Faults[0])
	}
	if len(m.Holders) == 1 && m.Holders[0].Start != 0 {
		t.Errorf("h1 still starts at %d: the quiet start was not cut", m.Holders[0].Start)
	}
	if again := Shrink(s, alignedModel, 10_000); !reflect.DeepEqual(again, m) {
		t.Fatal("Shrink is not deterministic")
	}
}

// The realigning candidates run only where the plain ones are stuck, so a
// shrink with them is never bigger than one without: checked over drawn
// scenarios and a failure that hangs on alignment.
func TestShrinkRealignNeverWorse(t *testing.T) {
	// Fails when some holder's renewal (model above) falls in a window of
	// any windowed fault on it, whatever the kind: drawn plans have few
	// drop-heartbeats.
	anyWindow := func(s *Scenario) (bool, int) {
		c := s.Clone()
		for i := range c.Faults {
			if windowed(c.Faults[i].Kind) && c.Faults[i].Kind != faults.CoordinatorCrash {
				c.Faults[i].Kind = faults.DropHeartbeats
			}
		}
		return alignedModel(c)
	}
	found, better := 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		s := FromSeed(seed, Options{Kinds: []faults.Kind{faults.DropHeartbeats, faults.Delay, faults.Partition, faults.Pause}})
		if ok, _ := anyWindow(s); !ok {
			continue
		}
		found++
		_, np := anyWindow(shrink(s, anyWindow, 3000, plain(shrinkCandidates)...))
		m := Shrink(s, anyWindow, 3000)
		ok, n := anyWindow(m)
		if !ok || m.Validate() != nil {
			t.Fatalf("seed %d: shrunk scenario invalid or passing", seed)
		}
		if n > np {
			t.Errorf("seed %d: realigning made it worse: size %d, plain %d", seed, n, np)
		}
		if n < np {
			better++
		}
	}
	t.Logf("%d failing seeds, %d shrunk further by realigning", found, better)
	if found < 5 {
		t.Fatalf("only %d failing seeds; the test is vacuous", found)
	}
}

func TestRealignHelpers(t *testing.T) {
	s := alignedScenario(t, 111)
	// Cutting the quiet start shifts the whole run: same model outcome.
	c := s.Clone()
	if !cutStart(c) || c.Holders[1].Start != 0 || c.Holders[0].Start != 5 || c.Horizon != s.Horizon-106 || c.Faults[0].At != s.Faults[0].At-106 {
		t.Fatalf("cutStart: %+v %v horizon %d", c.Holders, c.Faults, c.Horizon)
	}
	ok0, n0 := alignedModel(s)
	ok1, n1 := alignedModel(c)
	if ok0 != ok1 || n0 != n1 {
		t.Errorf("cutStart changed the run: %v/%d, was %v/%d", ok1, n1, ok0, n0)
	}
	if cutStart(c) {
		t.Error("cutStart cut again with nothing quiet at the start")
	}
	// A span cut moves later faults by its length, faults inside it to its start.
	c = s.Clone()
	c.Faults = append(c.Faults, faults.Fault{Kind: faults.Pause, Target: "h1", At: 120, Duration: 5})
	if !cutFaults(c, "h1", 100, 50) || c.Faults[0].At != s.Faults[0].At-50 || c.Faults[1].At != 100 {
		t.Errorf("cutFaults: %v", c.Faults)
	}
	if cutFaults(c, "h3", 100, 50) {
		t.Error("cutFaults moved a fault aimed at another holder")
	}
	// Widening keeps the end and starts no later than the target's start.
	c = s.Clone()
	end := c.Faults[0].At + c.Faults[0].Duration
	if !widenWindows(c, "", 300) || c.Faults[0].At != 111 || c.Faults[0].At+c.Faults[0].Duration != end {
		t.Errorf("widenWindows: %v", c.Faults)
	}
	f := faults.Fault{Kind: faults.DropHeartbeats, Target: "h1", At: 10, Duration: 8}
	if !trimFront(&f, 4) || f.At != 14 || f.Duration != 4 || trimFront(&f, 4) {
		t.Errorf("trimFront: %v", f)
	}
	// The previous thing scheduled on h1 before its fault is its last
	// item's estimated start.
	if at, ok := previousEvent(s, 0); !ok || at != 111+16+64 {
		t.Errorf("previousEvent = %d, %v", at, ok)
	}
}
