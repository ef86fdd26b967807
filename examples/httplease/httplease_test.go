package httplease

// The tests a team writes for its own client, against leasecheck's public
// packages only (vclient/k8slease's sweep, faults; httplease.go: vclient,
// model): copy them into your module. Run as your module runs them:
//
//	go test -run TestInVirtualTime -seeds 10000
//	go test -run TestPlantedBugCaught -v -save DIR
//	go test -run TestPlantedBugCaught -count=1 -scenario DIR/seed-N.scenario.json
//	go test -run TestRegressions

import (
	"os"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

// timing is the client's own: a TTL of 3 s, renewed every TTL/3, each
// renewal given up after TTL/3. The client reads its TTL from its
// Candidate, and the sweep keeps every seed — and the shrinker — at it.
var timing = k8slease.Timing{Name: "httplease", LeaseDuration: 3000, RenewDeadline: 1000, RetryPeriod: 1000}

// config is the sweep of the client (bug: with its renewal failures
// ignored): three candidates against its own server (Options: fenced
// storage, sequential fences), under a mix of pauses at a write, latency
// and crashes.
func config(bug bool) k8slease.SweepConfig {
	name := "vclient:httplease"
	if bug {
		name += "+ignore-renew-failure"
	}
	opts := Options()
	return k8slease.SweepConfig{Name: name, Client: &Adapter{IgnoreRenewFailure: bug}, Options: &opts, Timing: &timing,
		Kinds: []faults.Kind{faults.Pause, faults.Delay, faults.Crash}, MinReplicas: 3, MaxReplicas: 3, Seeds: 300}
}

// TestInVirtualTime: the client, its goroutines and timers unmodified,
// runs against its in-process server under pauses, latency and crashes:
// fenced and stopping at the first failed renewal, it violates nothing,
// and the sweep exercised it (grants made).
func TestInVirtualTime(t *testing.T) {
	k8slease.Sweep(t, config(false))
}

// TestPlantedBugCaught: the same client with its renewal failures ignored
// keeps believing (and working) after its lease is gone: caught, shrunk
// and saved with a story told in lease terms.
func TestPlantedBugCaught(t *testing.T) {
	cfg := config(true)
	cfg.Want = k8slease.WantViolation
	cfg.FailFast, cfg.MaxSaved = true, 1
	r := k8slease.Sweep(t, cfg)
	if r.Replayed != nil || len(r.Failures) == 0 {
		return // -scenario judged the file; no violation failed t already
	}
	f := r.Failures[0]
	if !f.Outcome.Fails("exclusive-belief") && !f.Outcome.Fails("stop-on-renew-failure") {
		t.Errorf("seed %d violates %v, want exclusive-belief or stop-on-renew-failure", f.Seed, f.Outcome.Violated)
	}
	if f.Saved == nil {
		t.Fatalf("seed %d not saved: %v", f.Seed, f.SaveErr)
	}
	story, err := os.ReadFile(f.Saved.Story)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(story), "## In lease terms") || strings.Contains(string(story), "Kubernetes") {
		t.Errorf("the saved story is not told in lease terms:\n%s", story)
	}
	t.Logf("seed %d: %v, saved as %s", f.Seed, f.Outcome.Violated, f.Saved.Scenario)
}

// TestRegressions replays the failures kept in testdata/regressions (the
// planted bug's, saved by TestPlantedBugCaught): each must violate exactly
// what it expects and record its saved history again.
func TestRegressions(t *testing.T) {
	k8slease.Regressions(t, config(true))
}
