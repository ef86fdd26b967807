package k8slease

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// replayCommand is the command that replays a saved scenario file.
func replayCommand(file string) string {
	return "go test ./vclient/k8slease -run 'TestReplay$' -count=1 -scenario " + file
}

// seeds is the seed count of a sweep whose default is short (SeedCount).
func seeds(short int) int { return k8ssweep.SeedCount(short) }

type sweepResult struct {
	sum      *campaign.Summary
	failures []*campaign.Failure
}

// sweep runs a campaign of n seeds against impl under profile p: the
// exported entry (Sweep) over this package's own target, its story the
// elector's (electorNotes), failures saved only with -save.
func sweep(t *testing.T, impl string, p Profile, timings []Timing, n int, cfg func(*campaign.Config)) sweepResult {
	t.Helper()
	tg, err := target(t, impl)
	if err != nil {
		t.Fatal(err)
	}
	r := Sweep(t, ownConfig(tg, p, timings, n, cfg))
	return sweepResult{sum: r.sum, failures: r.failures}
}

// ownConfig is the sweep configuration of one of this package's targets.
func ownConfig(tg *vclient.Target, p Profile, timings []Timing, n int, cfg func(*campaign.Config)) SweepConfig {
	return SweepConfig{Name: tg.Name, Client: tg.Client, Options: &tg.Options, Profile: p, Timings: timings, Shutdowns: releases(tg.Name),
		Want: WantResult, notes: electorNotes, Replay: replayCommand,
		Configure: func(c *campaign.Config) {
			c.Seeds = n
			c.Save.Dir = *saveFlag
			if cfg != nil {
				cfg(c)
			}
		}}
}

// clean asserts that a sweep found nothing: no violation, nothing undecided.
func (r sweepResult) clean(t *testing.T, what string) {
	t.Helper()
	var b strings.Builder
	r.sum.WriteText(&b, 0)
	t.Logf("%s:\n%s", what, b.String())
	for i, f := range r.failures {
		if i == 3 {
			break
		}
		var w strings.Builder
		campaign.WriteOutcome(&w, f.Outcome)
		t.Errorf("%s: seed %d: %s\n%s", what, f.Seed, strings.Join(f.Outcome.Failed(), ", "), w.String())
	}
	if r.sum.Undecided > 0 {
		t.Errorf("%s: %d seeds undecided", what, r.sum.Undecided)
	}
}

func safeTimings() []Timing {
	var out []Timing
	for _, tm := range Timings {
		if tm.Safe() {
			out = append(out, tm)
		}
	}
	return out
}

// TestNoFaultsClean: client-go's elector with no fault keeps one leader
// at a time, on every timing (the issue: zero violations over 10^4 seeds,
// go test ./vclient/k8slease -run TestNoFaultsClean -seeds 10000).
func TestNoFaultsClean(t *testing.T) {
	sweep(t, k8ssweep.Unfenced, "none", nil, seeds(100), nil).clean(t, "no faults")
}

// TestLatencyClean: API latency within RenewDeadline, on every timing
// whose RetryPeriod + RenewDeadline fits in LeaseDuration, causes no
// violation (-seeds 10000 for the claim).
func TestLatencyClean(t *testing.T) {
	sweep(t, k8ssweep.Unfenced, "latency", safeTimings(), seeds(100), nil).clean(t, "latency within RenewDeadline")
}

// TestLatencyUnsafeTiming: the same latency on a timing client-go accepts
// but whose RetryPeriod + RenewDeadline exceeds LeaseDuration (2 s /
// 1.5 s / 1 s) lets the leader write after its lease ran out: the sweep
// that is clean on safe timings is not blind.
func TestLatencyUnsafeTiming(t *testing.T) {
	edge := []Timing{Timings[5]}
	if edge[0].Safe() {
		t.Fatalf("%+v is safe", edge[0])
	}
	r := sweep(t, k8ssweep.Unfenced, "latency", edge, seeds(200), func(c *campaign.Config) { c.FailFast = true })
	if len(r.failures) == 0 {
		t.Fatalf("no violation in %d seeds of latency within RenewDeadline at %+v", r.sum.Seeds, edge[0])
	}
	t.Logf("seed %d: %v", r.failures[0].Seed, r.failures[0].Outcome.Failed())
}

// TestFencedClean: the fenced variant under every fault — pauses, latency
// beyond RenewDeadline, partitions, the API server down, crashes and
// restarts — on the safe timings violates nothing (-seeds 10000 for the
// issue's claim): the store refuses every stale write. What fencing cannot
// change is client-go's own belief: OnStoppedLeading comes up to the last
// renewal's answer latency + RetryPeriod + RenewDeadline after the API
// server applied it, while another candidate may lead LeaseDuration after
// it; so where an answer took longer than LeaseDuration − RenewDeadline −
// RetryPeriod and the leader then lost the API, two electors believe at
// once. In fenced storage such an overlap, with no stale write accepted, is
// a warning (runprop): each one must be of that kind, and is counted.
func TestFencedClean(t *testing.T) {
	var warned []*campaign.Outcome
	r := sweep(t, k8ssweep.Fenced, "all", safeTimings(), seeds(100), func(c *campaign.Config) {
		c.OnOutcome = func(_ uint64, o *campaign.Outcome) error {
			if len(o.Warnings) > 0 {
				warned = append(warned, o)
			}
			return nil
		}
	})
	r.clean(t, "fenced, every fault")
	for _, o := range warned {
		if !slices.Equal(o.Warned(), []string{runprop.ExclusiveBelief}) {
			t.Errorf("seed %d: warnings on %v", o.Scenario.Seed, o.Warned())
			continue
		}
		why, ok := lateAnswer(o)
		if !ok {
			var w strings.Builder
			campaign.WriteOutcome(&w, o)
			t.Errorf("seed %d: two electors believed at once without a late renewal answer: %s\n%s", o.Scenario.Seed, why, w.String())
			continue
		}
		t.Logf("seed %d: %s", o.Scenario.Seed, why)
	}
	if got := r.sum.Warnings[runprop.ExclusiveBelief]; got != len(warned) {
		t.Errorf("the summary counts %d seeds warned, the outcomes %d", got, len(warned))
	}
	t.Logf("%d of %d seeds: two electors believed at once after a late renewal answer (client-go's belief; a warning: no stale write accepted)", len(warned), r.sum.Seeds)
}

// lateAnswer explains an overlap of two beliefs by the older believer's
// last renewal before the other's belief began: its answer's latency
// (return − at) + RetryPeriod + RenewDeadline reaching past LeaseDuration.
func lateAnswer(o *campaign.Outcome) (string, bool) {
	sc := o.Scenario
	ld, rd, rp := sc.TTL, sc.Holders[0].Timeout, sc.Holders[0].RenewEvery
	bs := o.Sim.Beliefs
	for i := range bs {
		for j := range bs {
			a, b := &bs[i], &bs[j]
			if a.Process == b.Process || !(a.From <= b.From && b.From < a.To) {
				continue
			}
			var last *model.Op
			for k := range o.History.Ops {
				op := &o.History.Ops[k]
				if op.Process == a.Process && op.OK && op.HasAt && op.At < b.From && (op.Kind == model.Renew || op.Kind == model.Acquire) &&
					(last == nil || op.At > last.At) {
					last = op
				}
			}
			if last == nil {
				return fmt.Sprintf("%s believed with no renewal", a.Process), false
			}
			if !last.Returned {
				return fmt.Sprintf("%s's last renewal (line %d, applied t=%d) was never answered", a.Process, last.Line, last.At), true
			}
			d := last.Return - last.At
			why := fmt.Sprintf("%s's last renewal (line %d) was applied at t=%d and answered %dms later; %dms + RetryPeriod %dms + RenewDeadline %dms vs LeaseDuration %dms",
				a.Process, last.Line, last.At, d, d, rp, rd, ld)
			return why, d+rp+rd+2 >= ld // 2 ms: the harness serves and answers at whole milliseconds
		}
	}
	return "no two beliefs overlap", false
}

// TestReplay replays a saved scenario file (-scenario FILE): the command
// every saved failure's story and page print.
func TestReplay(t *testing.T) {
	if *scenarioFlag == "" {
		t.Skip("no -scenario FILE to replay")
	}
	sc, err := scenario.Load(*scenarioFlag)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target(t, sc.Implementation)
	if err != nil {
		t.Fatal(err)
	}
	Sweep(t, ownConfig(tg, "", nil, 0, nil)) // with -scenario, Sweep replays the file
}

// replayOwn runs a saved scenario against the implementation it records and
// judges it.
func replayOwn(t *testing.T, file string) (*campaign.Outcome, error) {
	sc, err := scenario.Load(file)
	if err != nil {
		return nil, err
	}
	tg, err := target(t, sc.Implementation)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return k8ssweep.ReplayFile(telling(tg, electorNotes), file)
}

// testGenerator is the scenario of each seed of leasecheck's own sweep of
// impl under p (nil timings: all of Timings).
func testGenerator(impl string, p Profile, timings []Timing) func(seed uint64) *scenario.Scenario {
	return k8ssweep.Generator(impl, k8ssweep.Profile(p), houseTimings(timings))
}

// Every profile the door names is one internal/k8ssweep's generator knows
// (the two name them apart): each but "none" draws faults, none twice.
func TestProfilesKnownToTheGenerator(t *testing.T) {
	seen := map[Profile]bool{}
	for _, p := range Profiles {
		if seen[p] {
			t.Errorf("profile %q listed twice", p)
		}
		seen[p] = true
		if got := len(k8ssweep.Profile(p).Kinds()); (got == 0) != (p == "none") {
			t.Errorf("profile %q: the generator draws %d fault kinds", p, got)
		}
		if q, err := ParseProfile(string(p)); err != nil || q != p {
			t.Errorf("ParseProfile(%q) = %q, %v", p, q, err)
		}
	}
}

// TestKindsMix: SweepConfig.Kinds draws as profile "all" does — all of its
// kinds give the very scenarios of "all", seed for seed (the saved files
// of v0.15.0 replay) — a subset draws only its kinds, and a kind the mix
// cannot draw is refused.
func TestKindsMix(t *testing.T) {
	all := (&SweepConfig{Name: "x", Profile: "all"}).generator(t, "all")
	same := (&SweepConfig{Name: "x", Kinds: k8ssweep.Profile("all").Kinds()}).generator(t, "all")
	sub := (&SweepConfig{Name: "x", Kinds: []faults.Kind{faults.Pause, faults.Crash}}).generator(t, "all")
	drawn := map[faults.Kind]int{}
	for seed := uint64(1); seed <= 200; seed++ {
		a, b := all(seed), same(seed)
		ab := a.Marshal()
		bb := b.Marshal()
		if string(ab) != string(bb) {
			t.Fatalf("seed %d: Kinds = all's kinds draws another scenario:\n%s\n%s", seed, ab, bb)
		}
		for _, f := range sub(seed).Faults {
			drawn[f.Kind]++
		}
	}
	if len(drawn) != 2 || drawn[faults.Pause] == 0 || drawn[faults.Crash] == 0 {
		t.Errorf("Kinds pause, crash drew %v", drawn)
	}
	if err := k8ssweep.CheckKinds([]faults.Kind{faults.Pause, faults.Conflict}); err == nil {
		t.Error("a mix with conflict accepted")
	}
}
