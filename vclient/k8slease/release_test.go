package k8slease

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
)

// TestReleaseSweep: client-go's elector with ReleaseOnCancel, its writes
// fenced, under pauses (and a step-down per seed) on the safe timings. On
// client-go v0.37.2 a deposed leader's release clears the new leader's
// Lease — every failing seed is one of those, and there must be some
// (TestReleaseSweepPatched: the same seeds on the patched tryRelease
// violate nothing). -seeds 10000 for the finding's figures; -save DIR
// keeps the first failure, shrunk.
func TestReleaseSweep(t *testing.T) {
	n := seeds(100)
	began := time.Now()
	r := sweep(t, k8ssweep.ReleaseFenced, "pause", safeTimings(), n, func(c *campaign.Config) {
		if *saveFlag != "" { // -save DIR: the first failure, shrunk, with its page and story
			c.Save.Dir, c.Save.Max = *saveFlag, 1
		}
	})
	unpatched := time.Since(began)
	if len(r.failures) == 0 {
		t.Fatalf("%s: no failure in %d seeds of pauses", k8ssweep.ReleaseFenced, n)
	}
	for _, f := range r.failures {
		fr := findForeignRelease(f.Outcome)
		if fr == nil || !f.Outcome.Fails(checker.Linearizable) {
			var w strings.Builder
			campaign.WriteOutcome(&w, f.Outcome)
			t.Errorf("seed %d fails %v without a release of another's Lease:\n%s", f.Seed, f.Outcome.Failed(), w.String())
		}
	}
	t.Logf("%s, pause profile, %d seeds: %d failing, each a release of another's Lease (%v)", k8ssweep.ReleaseFenced, n, len(r.failures), unpatched.Round(time.Second))
}

// TestStepDownClean: the step-down path (faults.Shutdown) raises no false
// alarm. The fenced elector without ReleaseOnCancel, with a step-down
// added to every seed, is clean under every profile; the unfenced one and
// the ReleaseOnCancel ones under the profiles with no pause (a release
// from a leader that holds its Lease is sound); the patched
// ReleaseOnCancel elector, fenced, under every profile in
// TestStepDownCleanPatched. The warnings a
// fenced run may carry are TestFencedClean's (a late renewal answer).
// -seeds 10000 for the figures.
func TestStepDownClean(t *testing.T) {
	rows := []stepDownRow{
		{k8ssweep.Fenced, Profiles},
		{k8ssweep.Unfenced, []Profile{"none", "latency"}},
		{k8ssweep.Release, []Profile{"none", "latency"}},
		{k8ssweep.ReleaseFenced, []Profile{"none", "latency"}},
	}
	stepDownClean(t, rows)
}

type stepDownRow struct {
	impl     string
	profiles []Profile
}

func stepDownClean(t *testing.T, rows []stepDownRow) {
	n := seeds(40)
	for _, rw := range rows {
		for _, p := range rw.profiles {
			t.Run(fmt.Sprintf("%s/%s", strings.TrimPrefix(rw.impl, "vclient:"), p), func(t *testing.T) {
				began := time.Now()
				r := sweep(t, rw.impl, p, safeTimings(), n, func(c *campaign.Config) {
					c.Scenario = k8ssweep.StepDowns(k8ssweep.NewGenerator(k8ssweep.GenOptions{Impl: rw.impl, Fenced: isFenced(rw.impl), Profile: k8ssweep.Profile(p), Timings: houseTimings(safeTimings())}))
					c.Kinds = k8ssweep.Profile(p).KindsFor(rw.impl)
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

// releaseScenario is the finding's minimal reproduction: two candidates,
// one pause, client-go v0.37.2 with ReleaseOnCancel, the writes fenced.
const releaseScenario = "testdata/regressions/release-clears-new-leader.scenario.json"

// TestReleaseClearsNewLeader replays the finding from its saved scenario:
// the deposed leader's release is applied while the other holds the
// Lease (linearizable, exactly the scenario's expect; the history byte
// for byte as saved), and its own account shows why — its Lock.Get read
// the new holder, IsLeader() still said true over observedRecord, and the
// Update sent the resourceVersion just read. (TestReleaseClearsNewLeaderPatched:
// the same scenario on the patched tryRelease releases nothing of
// another's and violates nothing.)
func TestReleaseClearsNewLeader(t *testing.T) {
	o, err := replayOwn(t, releaseScenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := campaign.CheckExpect(o); err != nil {
		t.Fatalf("%s: %v", releaseScenario, err)
	}
	want, err := os.ReadFile(strings.TrimSuffix(releaseScenario, ".scenario.json") + ".history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := model.WriteHistory(&got, o.History); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the replay recorded a different history:\n%s", firstDiff(want, got.Bytes()))
	}
	fr := findForeignRelease(o)
	if fr == nil {
		t.Fatal("no release of another's Lease in the replay")
	}
	if len(o.Scenario.Holders) > 3 || len(o.Scenario.Faults) != 1 || o.Scenario.Faults[0].Kind != faults.Pause {
		t.Errorf("not minimal: %d candidates, faults %v", len(o.Scenario.Holders), o.Scenario.Faults)
	}
	for _, w := range []string{fmt.Sprintf("Lock.Get read holderIdentity=%q", fr.Victim.Owner), "IsLeader()=true",
		fmt.Sprintf("observedRecord holderIdentity=%q", fr.Release.Owner), `Update sets holderIdentity=""`} {
		if !strings.Contains(fr.Read, w) {
			t.Errorf("the releaser's account %q lacks %q", fr.Read, w)
		}
	}
	var story strings.Builder
	campaign.WriteStory(&story, o, campaign.StoryInfo{Title: "release", ScenarioFile: releaseScenario})
	for _, w := range []string{"`tryRelease`", "`IsLeader()`", "`observedRecord`", "`Lock.Get`", "`resourceVersion`", "`holderIdentity` empty", k8ssweep.ReleaseFencedPatched} {
		if !strings.Contains(story.String(), w) {
			t.Errorf("the story lacks %q:\n%s", w, story.String())
		}
	}
	t.Logf("%s released %s's Lease at t=%d (line %d): %s", fr.Release.Owner, fr.Victim.Owner, fr.Release.At, fr.Release.Line, fr.Read)
}

// TestReleaseOverlapToEnd measures how long the two leaders' beliefs
// overlap after the deposed leader's release, to the overlap's end: the
// finding's scenario replayed with its horizon two LeaseDurations longer,
// so that neither belief is cut off by the run's end. The new leader's
// belief is the end of its OnStartedLeading context, which client-go
// cancels only once its renew loop has given up — after its first refused
// renewal, not at it; this checks that too, both ways (a belief that ended
// at the refused renewal, or one still open, fails). -save DIR writes the
// longer run's page (the finding's timeline picture is its screenshot).
func TestReleaseOverlapToEnd(t *testing.T) {
	sc, err := scenario.Load(releaseScenario)
	if err != nil {
		t.Fatal(err)
	}
	sc.Horizon += 2 * sc.TTL
	sc.Expect = nil
	file := filepath.Join(t.TempDir(), "longer.scenario.json")
	if err := sc.Save(file); err != nil {
		t.Fatal(err)
	}
	o, err := replayOwn(t, file)
	if err != nil {
		t.Fatal(err)
	}
	fr := findForeignRelease(o)
	if fr == nil || fr.Victim == nil || o.Sim == nil {
		t.Fatal("no release of another's Lease in the longer replay")
	}
	at, victim, releaser := fr.Release.At, fr.Victim.Owner, fr.Release.Owner
	var v, r *struct{ from, to int64 }
	for _, b := range o.Sim.Beliefs {
		span := &struct{ from, to int64 }{b.From, b.To}
		switch {
		case b.Owner == victim && b.From <= at && (b.Open || b.To > at):
			if b.Open {
				t.Fatalf("%s's belief from t=%d is still open at the horizon (%d)", victim, b.From, sc.Horizon)
			}
			v = span
		case b.Owner == releaser && b.From >= at && r == nil:
			if b.Open { // the new term goes on: the overlap ends with the victim's
				span.to = sc.Horizon
			}
			r = span
		}
	}
	if v == nil || r == nil {
		t.Fatalf("beliefs around the release at t=%d: %s's %v, %s's %v", at, victim, v, releaser, r)
	}
	refused := int64(-1)
	for _, op := range o.History.Ops {
		if op.Owner == victim && op.Kind == model.Renew && op.HasAt && op.At > at && !op.OK {
			refused = op.At
			break
		}
	}
	if refused < 0 {
		t.Fatalf("%s's renewal was never refused after t=%d", victim, at)
	}
	overlap := min(v.to, r.to) - max(v.from, r.from)
	if v.to <= refused {
		t.Errorf("%s's belief ended at t=%d, by its first refused renewal (t=%d): its work context does not outlive the renew loop", victim, v.to, refused)
	}
	if *saveFlag != "" {
		page := filepath.Join(*saveFlag, "release-clears-new-leader.html")
		if err := campaign.WriteFile(page, func(w io.Writer) error {
			return campaign.WritePage(w, o, campaign.PageInfo{Title: "client-go v0.37.2: a deposed leader's release clears the new leader's Lease (horizon +2 LeaseDuration)"})
		}); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", page)
	}
	t.Logf("release at t=%d; %s believes from t=%d to t=%d; %s from t=%d to t=%d; %s's first renewal refused at t=%d (%d ms after the release); both beliefs overlap %d ms",
		at, victim, v.from, v.to, releaser, r.from, r.to, victim, refused, refused-at, overlap)
}
