package scenario

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
)

// workModel is a stand-in for the simulator in which a failure, as the
// planted shape bugs' do, needs its workload's dimensions somewhere in
// their range but not at their extremes: each holder acquires at its start
// and holds from a round trip later (a message takes the network's
// largest delay), works through its items, each write one round trip, and
// renews every renew interval (TTL/3 by default) while it holds. The run
// fails when a client's stale write, sent at its time or, if later, at the
// holder's first write (it waits for a grant, as "after" does), comes
// after that holder's second renewal and before its lease ends, which
// does at least 60 ms of work, with a TTL of at least 100 ms, a renew interval of at most 30 ms (shorter than
// the default: zeroing it loses the failure) and a delay of at least 2 ms
// (zeroing loses it too). Its size is scored like campaign's: operations (acquires, writes,
// renewals, reads, client requests before the horizon), and 4 per holder,
// fault and client.
func workModel(s *Scenario) (bool, int) {
	d := s.Network.MaxDelay
	ops, fails := 0, false
	for _, p := range s.Holders {
		if p.Start >= s.Horizon {
			continue
		}
		ops++
		every := p.RenewEvery
		if every <= 0 {
			every = max(s.TTL/3, 1)
		}
		begin := p.Start + 2*d
		t, first, work := begin, int64(-1), int64(0)
		for _, it := range p.Work {
			t += it.Work
			work += it.Work
			for range it.Writes {
				t += 2 * d
				if t < s.Horizon {
					ops++
					if first < 0 {
						first = t
					}
				}
			}
		}
		end := min(t, s.Horizon)
		for r := begin + every; r < end; r += every {
			ops++
		}
		for _, cl := range s.Clients {
			for _, r := range cl.Requests {
				at := max(r.At, first) // it waits for the grant the write is under
				if r.Op == "write" && first >= 0 && at >= begin+2*every && at < end && every <= 30 && d >= 2 && s.TTL >= 100 && work >= 60 {
					fails = true
				}
			}
		}
	}
	if s.ReadEvery > 0 {
		ops += int((s.Horizon + s.ReadEvery - 1) / s.ReadEvery)
	}
	for _, cl := range s.Clients {
		for _, r := range cl.Requests {
			if r.At < s.Horizon {
				ops++
			}
		}
	}
	return fails, ops + 4*(len(s.Holders)+len(s.Faults)+len(s.Clients))
}

// workloadScenario fails workModel only on its core — one holder's write
// and two renewals before a client's stale write that lands in its lease —
// and carries every extra the generator draws: writes per grant, a second
// holder (which does not write), a reader every 9 ms, delays of 40-60 ms, a renew interval of
// 7 ms (TTL/14), a short request timeout and backoff, and the client's
// write late in the run (at 900 ms, so the lease must last until then).
func workloadScenario(t *testing.T) *Scenario {
	s := &Scenario{
		Version: Version, Seed: 7, Semantics: "fenced-storage", Key: "k", TTL: 100, Horizon: 2000,
		Network:   Network{MinDelay: 40, MaxDelay: 60},
		ReadEvery: 9,
		Holders: []Process{
			{Name: "h1", Work: []holder.Item{{Work: 10, Writes: 5}, {Work: 400, Writes: 3}}, RenewEvery: 7, Timeout: 9, RetryMax: 4},
			{Name: "h2", Start: 300, Work: []holder.Item{{Work: 50}}},
		},
		Clients: []Client{{Name: "x1", Requests: []ClientRequest{{At: 900, After: "grant", Op: "write", Fence: "stale"}}}},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := workModel(s); !ok {
		t.Fatal("the workload scenario does not fail its model")
	}
	return s
}

// oldShrink is Shrink without its workload phase: what it was before.
func oldShrink(s *Scenario, test ShrinkTest, maxTests int) *Scenario {
	return shrink(s, test, maxTests, plain(shrinkCandidates, realignCandidates, nil)...)
}

func TestShrinkReducesWorkloadDimensions(t *testing.T) {
	s := workloadScenario(t)
	before := s.Clone()
	old := oldShrink(s, workModel, 10_000)
	m := Shrink(s, workModel, 10_000)
	if !reflect.DeepEqual(s, before) {
		t.Fatal("Shrink modified its input")
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("shrunk scenario invalid: %v", err)
	}
	ok, n := workModel(m)
	if !ok {
		t.Fatal("shrunk scenario no longer fails")
	}
	_, nOld := workModel(old)
	t.Logf("size %d without the workload phase, %d with it; without: ttl %d horizon %d network %+v reader %d holders %+v clients %+v", nOld, n, old.TTL, old.Horizon, old.Network, old.ReadEvery, old.Holders, old.Clients)
	t.Logf("shrunk: ttl %d horizon %d network %+v reader %d holders %+v clients %+v", m.TTL, m.Horizon, m.Network, m.ReadEvery, m.Holders, m.Clients)
	// The plain shrink is stuck on the late request and the short renew
	// interval: the lease must last until t=900, renewing every 7 ms.
	if nOld < 2*n {
		t.Errorf("without the workload phase size %d, with it %d: the case no longer shows what the phase adds", nOld, n)
	}
	// The extras are gone: one holder with one write, no reader, shorter
	// delays, the renew interval near the longest that still fails
	// (30 ms), the client's write early, the run short.
	if len(m.Holders) != 1 || m.ReadEvery != 0 {
		t.Fatalf("%d holders, reader every %d: want one holder, no reader", len(m.Holders), m.ReadEvery)
	}
	p := m.Holders[0]
	writes := 0
	for _, it := range p.Work {
		writes += it.Writes
	}
	if writes != 1 {
		t.Errorf("%d writes, want 1", writes)
	}
	if m.Network.MaxDelay >= 40 {
		t.Errorf("network %+v: want the delays below the drawn 40-60 ms", m.Network)
	}
	if p.RenewEvery < 20 || p.RenewEvery > 30 {
		t.Errorf("renew every %d: want it moved toward the default (33) while it still fails (<= 30)", p.RenewEvery)
	}
	if at := m.Clients[0].Requests[0].At; at > 150 || m.Horizon > 150 {
		t.Errorf("client write at %d, horizon %d: want both early", at, m.Horizon)
	}
	if n > 13 {
		t.Errorf("size %d, want 13 (an acquire, a write, two renewals, the client's write; a holder and a client)", n)
	}
}

// A shrinker's result is never bigger than that of the shrink without the
// workload phase (oldShrink) on the same scenario, test and budget.
// neverWorse returns where shrinker ends bigger, over drawn seeds, for the
// stand-in failures of these tests and the budgets the callers use.
func neverWorse(shrinker func(*Scenario, ShrinkTest, int) *Scenario) (worse []string, compared, better int) {
	tests := []struct {
		name string
		test ShrinkTest
		opts Options
	}{
		{"crash", hasCrash, Options{Kinds: faults.AllKinds}},
		{"window", anyWindow, Options{Kinds: []faults.Kind{faults.DropHeartbeats, faults.Delay, faults.Partition, faults.Pause}}},
		{"work", drawnWorkModel, Options{Kinds: faults.AllKinds}},
	}
	for _, tc := range tests {
		for seed := uint64(1); seed <= 25; seed++ {
			s := FromSeed(seed, tc.opts)
			if ok, _ := tc.test(s); !ok {
				continue
			}
			for _, budget := range []int{40, 1000} {
				compared++
				_, nOld := tc.test(oldShrink(s, tc.test, budget))
				m := shrinker(s, tc.test, budget)
				ok, n := tc.test(m)
				switch {
				case !ok || m.Validate() != nil:
					worse = append(worse, fmt.Sprintf("%s seed %d budget %d: the result is invalid or passes", tc.name, seed, budget))
				case n > nOld:
					worse = append(worse, fmt.Sprintf("%s seed %d budget %d: size %d, %d without the workload phase", tc.name, seed, budget, n, nOld))
				case n < nOld:
					better++
				}
			}
		}
	}
	return worse, compared, better
}

// anyWindow is alignedModel with every windowed fault (but a coordinator
// crash) taken for a heartbeat drop: drawn plans have few of those.
func anyWindow(s *Scenario) (bool, int) {
	c := s.Clone()
	for i := range c.Faults {
		if windowed(c.Faults[i].Kind) && c.Faults[i].Kind != faults.CoordinatorCrash {
			c.Faults[i].Kind = faults.DropHeartbeats
		}
	}
	return alignedModel(c)
}

// drawnWorkModel is workModel's sizing for drawn scenarios, which have no
// clients: it fails when some holder renews at least twice and writes at
// least twice under a renew interval of at most 30 ms, a reader reads,
// and the delay is at least 1 ms.
func drawnWorkModel(s *Scenario) (bool, int) {
	_, n := workModel(s)
	d := s.Network.MaxDelay
	for _, p := range s.Holders {
		every := p.RenewEvery
		if every <= 0 {
			every = max(s.TTL/3, 1)
		}
		var hold int64
		writes := 0
		for _, it := range p.Work {
			hold += it.Work + 2*d*int64(it.Writes)
			writes += it.Writes
		}
		if hold >= 2*every && writes >= 2 && every <= 30 && s.ReadEvery > 0 && d >= 1 && p.Start+hold < s.Horizon {
			return true, n
		}
	}
	return false, n
}

func TestShrinkNeverWorseThanWithoutWorkloadPhase(t *testing.T) {
	worse, compared, better := neverWorse(Shrink)
	for _, w := range worse {
		t.Error(w)
	}
	t.Logf("%d shrinks compared, %d smaller with the workload phase", compared, better)
	if compared < 30 || better == 0 {
		t.Fatalf("%d shrinks compared, %d smaller: the comparison is vacuous", compared, better)
	}
	// The comparison has teeth: a shrinker that returns a bigger scenario
	// — here the workload candidates tried first, a greedy path of its
	// own, or plainly one that stops halfway — is caught.
	first := func(s *Scenario, test ShrinkTest, maxTests int) *Scenario {
		return shrink(s, test, maxTests, append([]candidates{{list: workloadCandidates}}, plain(shrinkCandidates, realignCandidates, nil)...)...)
	}
	halfway := func(s *Scenario, test ShrinkTest, maxTests int) *Scenario {
		return Shrink(s, test, maxTests/2)
	}
	for _, bad := range []struct {
		name   string
		shrink func(*Scenario, ShrinkTest, int) *Scenario
	}{{"workload first", first}, {"half the budget", halfway}} {
		w, _, _ := neverWorse(bad.shrink)
		t.Logf("%s: bigger on %d shrinks", bad.name, len(w))
		if bad.name == "half the budget" && len(w) == 0 {
			t.Errorf("a shrinker with half the budget was never bigger: the comparison cannot fail")
		}
	}
}

// The same scenario and test give the same result, byte for byte.
func TestShrinkWorkloadDeterministic(t *testing.T) {
	s := workloadScenario(t)
	a, _ := json.Marshal(Shrink(s, workModel, 10_000))
	for range 3 {
		if b, _ := json.Marshal(Shrink(s, workModel, 10_000)); string(a) != string(b) {
			t.Fatalf("Shrink is not deterministic:\n%s\n%s", a, b)
		}
	}
	for seed := uint64(1); seed <= 20; seed++ {
		s := FromSeed(seed, Options{Kinds: faults.AllKinds})
		if ok, _ := drawnWorkModel(s); !ok {
			continue
		}
		a, _ := json.Marshal(Shrink(s, drawnWorkModel, 3000))
		if b, _ := json.Marshal(Shrink(s, drawnWorkModel, 3000)); string(a) != string(b) {
			t.Fatalf("seed %d: Shrink is not deterministic", seed)
		}
	}
}

func TestWorkloadHelpers(t *testing.T) {
	for _, c := range []struct{ v, def, want int64 }{{7, 33, 20}, {20, 33, 26}, {32, 33, 0}, {85, 14, 50}, {0, 33, 0}} {
		v := c.v
		changed := towards(&v, c.def)
		if v != c.want || changed != (c.v != 0) {
			t.Errorf("towards(%d, %d) = %d, %v; want %d", c.v, c.def, v, changed, c.want)
		}
	}
	s := workloadScenario(t)
	s.Faults = faults.Plan{{Kind: faults.Pause, Target: "h1", At: 5, Duration: 3}, {Kind: faults.Pause, Target: "h1", At: 300, Duration: 3}}
	c := s.Clone()
	if !foldHolder(c, 0, 1) || len(c.Holders) != 1 || c.Holders[0].Name != "h2" || c.Holders[0].Start != 0 ||
		len(c.Holders[0].Work) != 3 || c.Faults[0].Target != "h2" || c.Faults[1].Target != "h2" {
		t.Errorf("foldHolder: %+v %v", c.Holders, c.Faults)
	}
	// Work 10 and 400 halved to 5 and 200: the fault at 5 is before the
	// first cut ([5, 10)), the one at 300 after both (15 saved by 300).
	c = s.Clone()
	if !halveWork(c, 0) || c.Holders[0].Work[0].Work != 5 || c.Holders[0].Work[1].Work != 200 ||
		c.Faults[0].At != 5 || c.Faults[1].At != 300-5-90 {
		t.Errorf("halveWork: %+v %v", c.Holders[0].Work, c.Faults)
	}
	cl := Client{Name: "x", Requests: []ClientRequest{{At: 30, Op: "renew"}, {At: 50, Op: "renew"}}}
	if !shiftClient(&cl) || cl.Requests[0].At != 0 || cl.Requests[1].At != 20 || shiftClient(&cl) {
		t.Errorf("shiftClient: %+v", cl.Requests)
	}
	// Every candidate is valid or filtered, and none is the scenario itself.
	for _, c := range workloadCandidates(s) {
		if reflect.DeepEqual(c, s) {
			t.Errorf("a workload candidate is the scenario unchanged: %+v", c)
		}
	}
}
