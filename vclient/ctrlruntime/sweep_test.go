package ctrlruntime

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/campaign"
	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/runprop"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

var (
	seedsFlag    = flag.Int("seeds", 0, "seeds per sweep (0: each test's short default)")
	scenarioFlag = flag.String("scenario", "", "TestReplay: the saved scenario file to replay")
	saveFlag     = flag.String("save", "", "where sweeps save their failures (default: the test's temporary directory)")
)

func replayCommand(file string) string {
	return "go test ./vclient/ctrlruntime -run 'TestReplay$' -count=1 -scenario " + file
}

func seeds(short int) int {
	if *seedsFlag > 0 {
		return *seedsFlag
	}
	if testing.Short() {
		return max(short/5, 1)
	}
	return short
}

type sweepResult struct {
	sum      *campaign.Summary
	failures []*campaign.Failure
	warned   []*campaign.Outcome
	grants   int // acquires the API server granted, over every seed
}

func sweep(t *testing.T, impl string, p k8slease.Profile, timings []k8slease.Timing, n int, cfg func(*campaign.Config)) *sweepResult {
	t.Helper()
	tg, err := Target(t, impl)
	if err != nil {
		t.Fatal(err)
	}
	out := &sweepResult{}
	c := campaign.Config{Target: tg, Scenario: Generator(impl, p, timings), Kinds: p.Kinds(), Seeds: n, First: 1, Workers: 2,
		Save:      campaign.SaveOptions{Replay: replayCommand, Shrink: campaign.ShrinkOptions{Budget: 300}},
		OnFailure: func(f *campaign.Failure) { out.failures = append(out.failures, f) },
		OnOutcome: func(_ uint64, o *campaign.Outcome) error {
			if len(o.Warnings) > 0 {
				out.warned = append(out.warned, o)
			}
			for _, op := range o.History.Ops {
				if op.Kind == model.Acquire && op.OK {
					out.grants++
				}
			}
			return nil
		}}
	if cfg != nil {
		cfg(&c)
	}
	out.sum, err = campaign.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	out.sum.WriteText(&b, 0)
	t.Logf("%s, %s, %d seeds:\n%s", impl, p, n, b.String())
	return out
}

// clean asserts that a sweep found nothing — no violation, nothing
// undecided — and that it exercised the manager: grants were made.
func (r *sweepResult) clean(t *testing.T) {
	t.Helper()
	for i, f := range r.failures {
		if i == 3 {
			break
		}
		var w strings.Builder
		campaign.WriteOutcome(&w, f.Outcome)
		t.Errorf("seed %d: %s\n%s", f.Seed, strings.Join(f.Outcome.Failed(), ", "), w.String())
	}
	if r.sum.Undecided > 0 {
		t.Errorf("%d seeds undecided", r.sum.Undecided)
	}
	if r.sum.Ops == 0 || r.grants < r.sum.Seeds {
		t.Errorf("the sweep exercised too little: %d operations, %d grants in %d seeds", r.sum.Ops, r.grants, r.sum.Seeds)
	}
}

func safeTimings() []k8slease.Timing {
	var out []k8slease.Timing
	for _, tm := range k8slease.Timings {
		if tm.Safe() {
			out = append(out, tm)
		}
	}
	return out
}

// TestNoFaultsClean: the manager with no fault keeps one leader at a
// time, on every timing.
func TestNoFaultsClean(t *testing.T) {
	sweep(t, Unfenced, k8slease.NoFaults, nil, seeds(20), nil).clean(t)
}

// TestZombieWrite: the manager, with its default lock and identity, under
// pauses: the sweep finds a leader's write the store accepted after the
// Lease went to another manager, shrinks it and saves it, and the saved
// file replays to the same violations and the same history.
func TestZombieWrite(t *testing.T) {
	dir := *saveFlag
	if dir == "" {
		dir = t.TempDir()
	}
	r := sweep(t, Unfenced, k8slease.Pauses, k8slease.Timings[:1], seeds(200), func(c *campaign.Config) {
		c.FailFast = true
		c.Save.Dir = dir
		c.Save.Max = 1
	})
	if len(r.failures) == 0 {
		t.Fatalf("no zombie write in %d seeds of pauses at the default timing", r.sum.Seeds)
	}
	f := r.failures[0]
	s := f.Saved
	if s == nil {
		t.Fatalf("seed %d not saved: %v", f.Seed, f.SaveErr)
	}
	o := s.Outcome
	t.Logf("seed %d: %s; shrunk from %s to %s (%s)", f.Seed, strings.Join(o.Failed(), ", "), s.From, campaign.SizeOf(o), s.Shrink)
	if !o.Fails(checker.SingleWriterPerFence) {
		t.Errorf("the saved failure violates %v, not %s", o.Failed(), checker.SingleWriterPerFence)
	}
	z := k8slease.FindZombieWrite(o)
	if z == nil || z.Paused == nil {
		t.Fatalf("the shrunk failure has no paused zombie write: %+v", z)
	}
	if z.Write.At <= z.Grant.At {
		t.Errorf("zombie write at t=%d not after the grant at t=%d", z.Write.At, z.Grant.At)
	}
	re, err := Replay(t, s.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := campaign.CheckExpect(re); err != nil {
		t.Fatalf("replay of %s: %v", s.Scenario, err)
	}
	if !slices.Equal(re.History.Ops, o.History.Ops) {
		t.Errorf("replay of %s recorded a different history", s.Scenario)
	}
}

// TestFencedClean: fenced by the Lease's resourceVersion, the manager
// violates nothing under pauses, nor under every fault on the safe
// timings; the only warnings are two beliefs at once (client-go's belief,
// which the manager's Runnable inherits; no stale write accepted).
func TestFencedClean(t *testing.T) {
	for _, p := range []k8slease.Profile{k8slease.Pauses, k8slease.All} {
		t.Run(string(p), func(t *testing.T) {
			r := sweep(t, Fenced, p, safeTimings(), seeds(100), nil)
			r.clean(t)
			for _, o := range r.warned {
				if !slices.Equal(o.Warned(), []string{runprop.ExclusiveBelief}) {
					t.Errorf("seed %d: warnings on %v", o.Scenario.Seed, o.Warned())
				}
			}
			t.Logf("%d of %d seeds warned (exclusive-belief)", len(r.warned), r.sum.Seeds)
		})
	}
}

// TestReplay replays a saved scenario file (-scenario FILE).
func TestReplay(t *testing.T) {
	if *scenarioFlag == "" {
		t.Skip("no -scenario FILE to replay")
	}
	o, err := Replay(t, *scenarioFlag)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	campaign.WriteOutcome(&b, o)
	t.Log(b.String())
	if err := campaign.CheckExpect(o); err != nil {
		t.Fatalf("%s: %v", *scenarioFlag, err)
	}
}

// Replay runs a saved scenario against the implementation it records and
// judges it.
func Replay(t *testing.T, file string) (*campaign.Outcome, error) {
	sc, err := scenario.Load(file)
	if err != nil {
		return nil, err
	}
	tg, err := Target(t, sc.Implementation)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return campaign.Judge(context.Background(), tg, sc, campaign.JudgeOptions{Budget: -1})
}

// TestFenceUnchecked: the fenced manager against a resource that compares
// no fences (vclient.Options.FenceUnchecked, a planted bug) is caught
// under pauses: the fenced sweep that is clean is not blind, and the
// writes it judges carry tokens.
func TestFenceUnchecked(t *testing.T) {
	tg, err := Target(t, Fenced)
	if err != nil {
		t.Fatal(err)
	}
	tg.Options.FenceUnchecked = true
	c := campaign.Config{Target: tg, Scenario: Generator(Fenced, k8slease.Pauses, k8slease.Timings[:1]), Kinds: k8slease.Pauses.Kinds(),
		Seeds: seeds(200), First: 1, Workers: 2, FailFast: true}
	var failed *campaign.Failure
	c.OnFailure = func(f *campaign.Failure) { failed = f }
	sum, err := campaign.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if failed == nil {
		t.Fatalf("no violation in %d seeds of pauses against a resource that checks no fence", sum.Seeds)
	}
	t.Logf("seed %d: %v", failed.Seed, failed.Outcome.Failed())
}
