package k8slease

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/campaign"
	"github.com/leasecheck/leasecheck/checker"
)

// TestReleaseSweep: client-go's elector with ReleaseOnCancel, its writes
// fenced, under pauses (and a step-down per seed) on the safe timings. On
// client-go v0.37.2 a deposed leader's release clears the new leader's
// Lease — every failing seed is one of those, and there must be some; on
// the patched copy of tryRelease (it checks the Lease it just read names
// this elector) the same seeds violate nothing. -seeds 10000 for the
// finding's figures.
func TestReleaseSweep(t *testing.T) {
	n := seeds(100)
	began := time.Now()
	r := sweep(t, ReleaseFenced, Pauses, safeTimings(), n, nil)
	unpatched := time.Since(began)
	if len(r.failures) == 0 {
		t.Fatalf("%s: no failure in %d seeds of pauses", ReleaseFenced, n)
	}
	for _, f := range r.failures {
		fr := FindForeignRelease(f.Outcome)
		if fr == nil || !f.Outcome.Fails(checker.Linearizable) {
			var w strings.Builder
			campaign.WriteOutcome(&w, f.Outcome)
			t.Errorf("seed %d fails %v without a release of another's Lease:\n%s", f.Seed, f.Outcome.Failed(), w.String())
		}
	}
	t.Logf("%s, pause profile, %d seeds: %d failing, each a release of another's Lease (%v)", ReleaseFenced, n, len(r.failures), unpatched.Round(time.Second))
	began = time.Now()
	p := sweep(t, ReleaseFencedPatched, Pauses, safeTimings(), n, nil)
	p.clean(t, ReleaseFencedPatched+", pause profile")
	t.Logf("%s, pause profile, %d seeds: %d failing (%v)", ReleaseFencedPatched, n, len(p.failures), time.Since(began).Round(time.Second))
}

// TestStepDownClean: the step-down path (faults.Shutdown) raises no false
// alarm. The fenced elector without ReleaseOnCancel, with a step-down
// added to every seed, is clean under every profile; the unfenced one and
// the ReleaseOnCancel ones under the profiles with no pause (a release
// from a leader that holds its Lease is sound); the patched
// ReleaseOnCancel elector, fenced, under every profile. The warnings a
// fenced run may carry are TestFencedClean's (a late renewal answer).
// -seeds 10000 for the figures.
func TestStepDownClean(t *testing.T) {
	type row struct {
		impl     string
		profiles []Profile
	}
	rows := []row{
		{Fenced, Profiles},
		{Unfenced, []Profile{NoFaults, Latency}},
		{Release, []Profile{NoFaults, Latency}},
		{ReleaseFenced, []Profile{NoFaults, Latency}},
		{ReleaseFencedPatched, Profiles},
	}
	n := seeds(40)
	for _, rw := range rows {
		for _, p := range rw.profiles {
			t.Run(fmt.Sprintf("%s/%s", strings.TrimPrefix(rw.impl, "vclient:"), p), func(t *testing.T) {
				began := time.Now()
				r := sweep(t, rw.impl, p, safeTimings(), n, func(c *campaign.Config) {
					c.Scenario = StepDowns(generator(rw.impl, p, safeTimings()))
					c.Kinds = p.KindsFor(rw.impl)
					if !slices.Contains(c.Kinds, "shutdown") {
						c.Kinds = append(c.Kinds, "shutdown")
					}
				})
				r.clean(t, rw.impl+" with step-downs, "+string(p))
				if r.sum.Faults["shutdown"] == 0 {
					t.Errorf("no step-down struck in %d seeds", n)
				}
				t.Logf("%s %s: %d seeds, %d failing, %d warned, %v", rw.impl, p, n, len(r.failures), r.sum.Warnings["exclusive-belief"], time.Since(began).Round(time.Second))
			})
		}
	}
}
