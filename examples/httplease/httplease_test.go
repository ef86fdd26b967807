package httplease

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/vclient"
)

// generate draws a seed's scenario: three candidates with a TTL of 3 s,
// pauses at a write, API latency and crashes.
func generate(impl string) func(uint64) *scenario.Scenario {
	return func(seed uint64) *scenario.Scenario {
		r := rand.New(rand.NewPCG(seed, 1))
		const ttl = 3000
		sc := &scenario.Scenario{Version: scenario.Version, Seed: seed, Semantics: "fenced-storage", Key: "lease", TTL: ttl,
			Horizon: 8 * ttl, Network: scenario.Network{MaxDelay: 5}, Implementation: impl,
			FaultKinds: []faults.Kind{faults.Pause, faults.Delay, faults.Crash}}
		for i := range 3 {
			sc.Holders = append(sc.Holders, scenario.Process{Name: fmt.Sprintf("h%d", i+1),
				Work: []holder.Item{{Work: 1 + r.Int64N(500), Writes: 1 + r.IntN(3)}, {Work: 1 + r.Int64N(500), Writes: 1}}})
		}
		for range 1 + r.IntN(3) {
			f := faults.Fault{Target: fmt.Sprintf("h%d", 1+r.IntN(3)), At: r.Int64N(4 * ttl)}
			switch r.IntN(3) {
			case 0:
				f.Kind, f.Duration = faults.Pause, 1+r.Int64N(2*ttl)
			case 1:
				f.Kind, f.Duration, f.Amount = faults.Delay, 1+r.Int64N(2*ttl), r.Int64N(ttl/4)
			case 2:
				f.Kind, f.Duration = faults.Crash, 1+r.Int64N(ttl)
			}
			sc.Faults = append(sc.Faults, f)
		}
		sc.Faults = sc.Faults.Sorted()
		return sc
	}
}

// sweep runs the house's seed loop (internal/campaign) over the client,
// with scenarios of this client's own (generate). A module outside
// leasecheck cannot import it: there, k8slease.Sweep runs a vclient.Client
// over the Kubernetes sweeps' scenarios (SweepConfig.Client, and Options
// for a lease server of its own), and vclient has no sweep of its own.
func sweep(t *testing.T, bug bool, seeds int, failFast bool) (*campaign.Summary, []*campaign.Failure) {
	impl := "vclient:httplease"
	if bug {
		impl += "+ignore-renew-failure"
	}
	tg := &vclient.Target{T: t, Name: impl, Client: &Adapter{IgnoreRenewFailure: bug}, Options: Options()}
	var fs []*campaign.Failure
	sum, err := campaign.Run(context.Background(), campaign.Config{Target: tg, Scenario: generate(impl), Seeds: seeds, First: 1,
		Kinds: []faults.Kind{faults.Pause, faults.Delay, faults.Crash}, FailFast: failFast,
		OnFailure: func(f *campaign.Failure) { fs = append(fs, f) }})
	if err != nil {
		t.Fatal(err)
	}
	return sum, fs
}

// TestInVirtualTime: the client, its goroutines and timers unmodified,
// runs against its in-process server under pauses, latency and crashes:
// fenced and stopping at the first failed renewal, it violates nothing.
func TestInVirtualTime(t *testing.T) {
	sum, fs := sweep(t, false, 300, false)
	var b strings.Builder
	sum.WriteText(&b, 0)
	t.Log(b.String())
	for _, f := range fs {
		var w strings.Builder
		campaign.WriteOutcome(&w, f.Outcome)
		t.Errorf("seed %d:\n%s", f.Seed, w.String())
		break
	}
}

// TestPlantedBugCaught: the same client with its renewal failures ignored
// keeps believing (and working) after its lease is gone: caught.
func TestPlantedBugCaught(t *testing.T) {
	_, fs := sweep(t, true, 300, true)
	if len(fs) == 0 {
		t.Fatal("IgnoreRenewFailure not caught in 300 seeds")
	}
	o := fs[0].Outcome
	if !o.Fails(runprop.ExclusiveBelief) && !o.Fails("stop-on-renew-failure") {
		t.Errorf("seed %d violates %v, want exclusive-belief or stop-on-renew-failure", fs[0].Seed, o.Failed())
	}
	t.Logf("seed %d: %v", fs[0].Seed, o.Failed())
}
