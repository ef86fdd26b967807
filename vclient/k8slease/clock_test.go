package k8slease

import (
	"context"
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
)

func timingNamed(t *testing.T, name string) Timing {
	t.Helper()
	for _, tm := range Timings {
		if tm.Name == name {
			return tm
		}
	}
	t.Fatalf("no timing %q", name)
	return Timing{}
}

// TestClockFastTakeoverFound: a candidate whose clock runs twice as fast
// (through client-go's own clock, vclient.Candidate.Clock) takes the
// Lease over while the holder it cut off from the API server still
// believes and writes, at client-go's default timing, which tolerates a
// rate ratio of about LeaseDuration/RenewDeadline = 1.5 (safeAt: not safe
// at 2×). The same seeds with the drift taken out are clean: the fast
// clock, not the partition, is what the sweep found.
func TestClockFastTakeoverFound(t *testing.T) {
	tm := timingNamed(t, "default")
	if tm.safeAt(k8ssweep.FastClockPPM) || !tm.Safe() {
		t.Fatalf("default timing: want safe at one rate and unsafe at 2x")
	}
	r := sweep(t, k8ssweep.Unfenced, "clock", []Timing{tm}, seeds(60), nil)
	if len(r.failures) == 0 {
		t.Fatalf("a fast clock at an unsafe timing: no seed failed in %d", r.sum.Seeds)
	}
	t.Logf("%d of %d seeds failed", len(r.failures), r.sum.Seeds)
	gen := testGenerator(k8ssweep.Unfenced, "clock", []Timing{tm})
	var seedsFailed []uint64
	props := map[string]int{}
	for _, f := range r.failures {
		seedsFailed = append(seedsFailed, f.Seed)
		for _, p := range f.Outcome.Failed() {
			props[p]++
		}
	}
	t.Logf("properties violated (seeds): %v", props)
	tg, err := target(t, k8ssweep.Unfenced)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range seedsFailed[:min(len(seedsFailed), 5)] {
		sc := gen(seed)
		sc.Faults = slices.DeleteFunc(slices.Clone(sc.Faults), func(f faults.Fault) bool { return f.Kind == faults.ClockDrift })
		o, err := campaign.Judge(context.Background(), tg, sc, campaign.JudgeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Violated() {
			t.Errorf("seed %d without its drift: %v", seed, o.Failed())
		}
	}
}

// TestClockSafeTimingClean: the same fault at a timing safe at 2× (60 s /
// 15 s / 5 s: a follower waits 30 s of true time, the cut-off holder
// believes 20 s at most) is clean.
func TestClockSafeTimingClean(t *testing.T) {
	var safe []Timing
	for _, tm := range Timings {
		if tm.safeAt(k8ssweep.FastClockPPM) {
			safe = append(safe, tm)
		}
	}
	if len(safe) == 0 {
		t.Fatal("no timing is safe at 2x")
	}
	sweep(t, k8ssweep.Unfenced, "clock", safe, seeds(60), nil).clean(t, "a fast clock at a timing safe for it")
}
