package holder_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// halfTTL is the reference coordinator granting half the TTL asked (a
// service with a maximum TTL, or one that rounds down): a correct
// coordinator, whose replies say so (machine.Granter).
type halfTTL struct{ *memstore.Store }

func (halfTTL) GrantTTL(ttl int64) int64 { return max(ttl/2, 1) }

// grantedRun: h1 works past the TTL and renews every 85 of its 100 (a
// renew interval near the TTL, safe only for the TTL it asked); h2 waits
// for the lease. The coordinator grants 50. With pause, h1 is paused
// at t=120 for 200: the lease expires under it and h2 is granted.
func grantedRun(t *testing.T, bugs holder.Bug, pause bool) *sim.Result {
	t.Helper()
	sc := &scenario.Scenario{
		Version: scenario.Version, Seed: 1, Semantics: "seed", Key: "k", TTL: 100, Horizon: 1500,
		Network: scenario.Network{MinDelay: 1, MaxDelay: 1},
		Holders: []scenario.Process{
			{Name: "h1", RenewEvery: 85, Work: []holder.Item{{Work: 200, Writes: 2}}},
			{Name: "h2", Start: 10, Work: []holder.Item{{Work: 10, Writes: 1}}},
		},
	}
	if pause {
		sc.Faults = faults.Plan{{Kind: faults.Pause, Target: "h1", At: 120, Duration: 200}}
	}
	r, err := sim.Run(sc, &sim.Options{
		NewCoordinator: func() machine.Coordinator { return machine.ClockedCoordinator(halfTTL{memstore.New()}) },
		NewHolder: func(c holder.Config) machine.Holder {
			c.Bugs = bugs
			return holder.New(c)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func checkHistory(t *testing.T, h *model.History) *checker.Result {
	t.Helper()
	res, err := checker.Check(context.Background(), h, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A coordinator that grants less than asked is judged on what it granted,
// and the reference holder keeps to it: no finding, and the history
// carries the granted TTL. Recorded with the TTL asked, the same history
// blames the coordinator — what honouring the grant prevents.
func TestGrantedTTLHonoured(t *testing.T) {
	r := grantedRun(t, 0, true)
	grants := 0
	for _, op := range r.History.Ops {
		if (op.Kind == model.Acquire || op.Kind == model.Renew) && op.Returned && op.OK {
			grants++
			if op.TTL != 50 {
				t.Errorf("line %d: %s recorded with TTL %d, want the 50 granted", op.Line, op.Kind, op.TTL)
			}
		}
	}
	if !slices.ContainsFunc(r.History.Ops, func(op model.Op) bool { return op.Kind == model.Acquire && op.OK && op.Owner == "h2" && op.Call < 300 }) {
		t.Fatal("h2 was not granted the lease under h1's pause: the expiry was not exercised")
	}
	if grants < 3 {
		t.Fatalf("%d grants and renewals: the run exercised nothing", grants)
	}
	if res := checkHistory(t, r.History); res.Violated() {
		t.Errorf("checker on the reference under a shorter grant: %+v", res.Violations)
	}
	if fs := runprop.Judge(sim.Record(r)); len(fs) > 0 {
		t.Errorf("run properties on the reference under a shorter grant: %+v", fs)
	}

	asked := *r.History
	asked.Ops = append([]model.Op(nil), r.History.Ops...)
	for i := range asked.Ops {
		if asked.Ops[i].TTL > 0 {
			asked.Ops[i].TTL = 100
		}
	}
	if res := checkHistory(t, &asked); !res.Violated() {
		t.Error("the history with the TTL asked instead of granted passed: the test shows nothing")
	}
}

// A holder that counts the TTL it asked for instead of the one granted is
// caught, and against the holder: its belief outlives the lease
// (exclusive-belief, naming h1 as the older grant), while the coordinator,
// judged on what it granted, is right.
func TestIgnoredGrantBlamesHolder(t *testing.T) {
	r := grantedRun(t, holder.BugIgnoreGrantedTTL, false)
	if res := checkHistory(t, r.History); res.Violated() {
		t.Errorf("checker blames the coordinator for the holder's bug: %+v", res.Violations)
	}
	var found bool
	for _, f := range runprop.Judge(sim.Record(r)) {
		if f.Property == runprop.ExclusiveBelief && strings.HasPrefix(f.Explanation, "h1 believed") {
			found = true
		}
	}
	if !found {
		t.Errorf("exclusive-belief against h1 not found: %+v", runprop.Judge(sim.Record(r)))
	}
}
