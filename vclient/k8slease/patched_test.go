//go:build clientgopatched

package k8slease

// Built with the clientgopatched tag and the overlay that
// internal/overlaygen writes (make test-clientgo-patched): client-go's
// tools/leaderelection, as go.mod names it, with the one condition changed
// — tryRelease returns without clearing the Lease unless the record its
// Lock.Get just read names this elector. The overlay's marker makes this
// file fail to compile without it, so a tagged build never runs unpatched
// client-go under the patched names.

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
)

func init() { clientGoPatched = leaderelection.LeasecheckPatchedRelease }

// TestReleaseSweepPatched: TestReleaseSweep's seeds on the patched
// tryRelease violate nothing. -seeds 10000 for the finding's figures.
func TestReleaseSweepPatched(t *testing.T) {
	n := seeds(100)
	began := time.Now()
	p := sweep(t, k8ssweep.ReleaseFencedPatched, "pause", safeTimings(), n, nil)
	p.clean(t, k8ssweep.ReleaseFencedPatched+", pause profile")
	if p.sum.Faults["pause"] == 0 {
		t.Errorf("no pause struck in %d seeds", n)
	}
	t.Logf("%s, pause profile, %d seeds: %d failing, %d warned (%v)", k8ssweep.ReleaseFencedPatched, n, len(p.failures), p.sum.Warnings["exclusive-belief"], time.Since(began).Round(time.Second))
}

// TestStepDownCleanPatched: the patched ReleaseOnCancel elector, fenced,
// with a step-down a seed, is clean under every profile.
func TestStepDownCleanPatched(t *testing.T) {
	stepDownClean(t, []stepDownRow{{k8ssweep.ReleaseFencedPatched, Profiles}})
}

// TestReleaseClearsNewLeaderPatched replays the finding's saved scenario on
// the patched tryRelease: no release is applied, nothing is violated, and
// the leader the unpatched run's release cleared (the saved history's)
// keeps renewing its Lease past the instant that release was applied.
func TestReleaseClearsNewLeaderPatched(t *testing.T) {
	saved, err := model.ReadHistoryFile(strings.TrimSuffix(releaseScenario, ".scenario.json") + ".history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	fr := findForeignRelease(&campaign.Outcome{Execution: &campaign.Execution{History: saved}})
	if fr == nil || fr.Victim == nil {
		t.Fatal("the saved history has no release of another's Lease")
	}
	sc, err := scenario.Load(releaseScenario)
	if err != nil {
		t.Fatal(err)
	}
	sc.Implementation, sc.Expect = k8ssweep.ReleaseFencedPatched, nil
	file := filepath.Join(t.TempDir(), "patched.scenario.json")
	if err := sc.Save(file); err != nil {
		t.Fatal(err)
	}
	p, err := replayOwn(t, file)
	if err != nil {
		t.Fatal(err)
	}
	if p.Violated() || findForeignRelease(p) != nil {
		var b strings.Builder
		campaign.WriteOutcome(&b, p)
		t.Fatalf("patched: %v\n%s", p.Failed(), b.String())
	}
	// Not vacuous: the same takeover happened, and the new holder kept its
	// Lease through the deposed leader's return to the end of the run.
	renewed := 0
	for _, op := range p.History.Ops {
		switch {
		case op.Kind == model.Release && op.OK:
			t.Errorf("patched: line %d: a release was applied", op.Line)
		case op.Owner == fr.Victim.Owner && op.Kind == model.Renew && op.HasAt && op.At > fr.Release.At:
			if !op.OK {
				t.Errorf("patched: line %d: %s's renewal refused", op.Line, op.Owner)
			}
			renewed++
		}
	}
	if renewed == 0 {
		t.Errorf("patched: %s renewed nothing after t=%d", fr.Victim.Owner, fr.Release.At)
	}
}
