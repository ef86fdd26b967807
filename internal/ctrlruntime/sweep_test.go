package ctrlruntime

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/raceflag"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

var fencedFlag = flag.Bool("fenced", false, "TestPauseSweep: sweep the fenced manager")

func replayCommand(file string) string {
	return "go test ./internal/ctrlruntime -run 'TestReplay$' -count=1 -scenario " + file
}

func seeds(short int) int { return k8ssweep.SeedCount(short) }

type sweepResult struct {
	res      *k8slease.SweepResult
	sum      *k8slease.Summary
	failures []*campaign.Failure
	warned   []*campaign.Outcome
	grants   int // acquires the API server granted, over every seed
}

// config is the sweep configuration of impl: the exported entry
// (k8slease.Sweep) over the manager, as a user's module runs it — the
// default API server, which takes the holder a manager writes
// (hostname_uuid) for its candidate.
func config(t *testing.T, impl string, p k8slease.Profile, timings []k8slease.Timing, n int, cfg func(*campaign.Config)) k8slease.SweepConfig {
	tg, err := Target(t, impl)
	if err != nil {
		t.Fatal(err)
	}
	return k8slease.SweepConfig{Name: impl, Client: tg.Client, Fenced: tg.Options.Fenced, Tokens: model.GrantTokens,
		Profile: p, Timings: timings, Want: k8slease.WantResult,
		Replay: replayCommand,
		Configure: func(c *campaign.Config) {
			c.Seeds = n
			c.Save.Dir = flag.Lookup("save").Value.String() // failures saved only with -save
			if cfg != nil {
				cfg(c)
			}
		}}
}

func sweep(t *testing.T, impl string, p k8slease.Profile, timings []k8slease.Timing, n int, cfg func(*campaign.Config)) *sweepResult {
	t.Helper()
	out := &sweepResult{}
	c := config(t, impl, p, timings, n, cfg)
	configure := c.Configure
	c.Configure = func(c *campaign.Config) {
		configure(c)
		onOutcome, onFailure := c.OnOutcome, c.OnFailure
		c.OnOutcome = func(seed uint64, o *campaign.Outcome) error {
			if len(o.Warnings) > 0 && !o.Violated() {
				out.warned = append(out.warned, o)
			}
			if onOutcome != nil {
				return onOutcome(seed, o)
			}
			return nil
		}
		c.OnFailure = func(f *campaign.Failure) {
			out.failures = append(out.failures, f)
			if onFailure != nil {
				onFailure(f)
			}
		}
	}
	r := k8slease.Sweep(t, c)
	out.res, out.sum, out.grants = r, r.Summary, r.Grants
	return out
}

// clean asserts that a sweep found nothing — no violation, nothing
// undecided — and that it exercised the manager: grants were made, at
// least one a seed.
func (r *sweepResult) clean(t *testing.T) {
	t.Helper()
	r.res.Clean(t)
	if r.grants < r.sum.Seeds {
		t.Errorf("the sweep exercised too little: %d grants in %d seeds", r.grants, r.sum.Seeds)
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
	sweep(t, Unfenced, "none", nil, seeds(20), nil).clean(t)
}

// TestZombieWrite: the manager, with its default lock and identity, under
// pauses: the sweep finds a leader's write the store accepted after the
// Lease went to another manager, shrinks it and saves it, and the saved
// file replays to the same violations and the same history.
func TestZombieWrite(t *testing.T) {
	if raceflag.Enabled {
		// controller-runtime v0.25.3's manager writes
		// gracefulShutdownTimeout in OnStoppedLeading (internal.go:637)
		// while engageStopProcedure reads it (internal.go:513), unlocked:
		// a data race of the library's own, which a leader that loses its
		// Lease while its manager stops — what this test makes — reaches.
		// The race detector stops the test there; make test and make test-all run it.
		t.Skip("controller-runtime's own data race on gracefulShutdownTimeout when a leader is lost while stopping")
	}
	dir := k8ssweep.SaveDir(t)
	r := sweep(t, Unfenced, "pause", k8slease.Timings[:1], seeds(200), func(c *campaign.Config) {
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
	z := k8ssweep.FindZombieWrite(o)
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
	for _, p := range []k8slease.Profile{"pause", "all"} {
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
	file := flag.Lookup("scenario").Value.String()
	if file == "" {
		t.Skip("no -scenario FILE to replay")
	}
	sc, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	k8slease.Sweep(t, config(t, sc.Implementation, "", nil, 0, nil)) // with -scenario, Sweep replays the file
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
	return k8ssweep.ReplayFile(tg, file)
}

// TestFenceUnchecked: the fenced manager against a resource that compares
// no fences (vclient.Options.FenceUnchecked, a planted bug) is caught
// under pauses: the fenced sweep that is clean is not blind, and the
// writes it judges carry tokens.
func TestFenceUnchecked(t *testing.T) {
	cfg := config(t, Fenced, "pause", k8slease.Timings[:1], seeds(200), func(c *campaign.Config) { c.FailFast = true })
	tg, err := Target(t, Fenced)
	if err != nil {
		t.Fatal(err)
	}
	o := tg.Options
	o.FenceUnchecked = true
	cfg.Options, cfg.Want = &o, k8slease.WantViolation
	k8slease.Sweep(t, cfg)
}

// TestPauseSweep counts, over a sweep of the manager under pauses at
// client-go's default timing (-seeds N; skipped without it: 10^4 seeds
// take minutes), the seeds whose stores' log shows a write accepted after
// the Lease went to another manager, and the seeds that fail. Unfenced,
// every such seed must fail (the zombie write found). Fenced (-fenced),
// every seed must pass: there the old holder's write the store accepts
// before the new holder's first one is legal (its token is still the
// highest the store has seen), and the fence refuses it after.
func TestPauseSweep(t *testing.T) {
	if flag.Lookup("seeds").Value.String() == "0" {
		t.Skip("a long sweep: give -seeds N (and -fenced for the fenced manager)")
	}
	impl := Unfenced
	if *fencedFlag {
		impl = Fenced
	}
	var zombies, missed int
	cfg := config(t, impl, "pause", k8slease.Timings[:1], seeds(0), func(c *campaign.Config) {
		c.Save.Max = 1
		c.OnOutcome = func(seed uint64, o *campaign.Outcome) error {
			if w := k8ssweep.StoreZombieWrite(o.Store); w != nil {
				zombies++
				if impl == Unfenced && !o.Violated() {
					missed++
					t.Errorf("seed %d: the store accepted %s's write %q at t=%d after the Lease moved on, and the seed passed", seed, w.Owner, w.Value, w.At)
				}
			}
			return nil
		}
	})
	r := k8slease.Sweep(t, cfg)
	t.Logf("%s, pause, %d seeds: %d with a write the stores' log accepted after the Lease moved on (%d of them passed), %d failing, %d warned, %d grants",
		impl, r.Summary.Seeds, zombies, missed, len(r.Failures), len(r.Warned), r.Grants)
	if impl == Fenced {
		r.Clean(t)
	} else if zombies == 0 || len(r.Failures) < zombies {
		t.Errorf("unfenced: %d zombie seeds, %d failing", zombies, len(r.Failures))
	}
}

var matrixFlag = flag.Bool("matrix", false, "TestProfileMatrix: sweep every fault profile, unfenced and fenced")

// TestProfileMatrix sweeps the manager at controller-runtime's defaults
// (client-go's 15 s / 10 s / 2 s) under every fault profile k8slease has,
// unfenced and fenced (-matrix; -seeds N a cell), and logs a row a cell:
// the seeds failing, the properties violated and warned on, what ran. Its
// judgement is the one every sweep makes; what it asserts is the analysis'
// claim: fenced, every profile is clean.
func TestProfileMatrix(t *testing.T) {
	if !*matrixFlag {
		t.Skip("a long sweep: give -matrix (and -seeds N a cell)")
	}
	var rows []string
	for _, impl := range []string{Unfenced, Fenced} {
		for _, p := range k8slease.Profiles {
			t.Run(impl+"/"+string(p), func(t *testing.T) {
				r := sweep(t, impl, p, k8slease.Timings[:1], seeds(20), nil)
				s := r.sum
				faults := []string{}
				for _, k := range slices.Sorted(maps.Keys(s.Faults)) {
					faults = append(faults, fmt.Sprintf("%s %d", k, s.Faults[k]))
				}
				rows = append(rows, fmt.Sprintf("| %s | %s | %d | %d | %s | %s | %d | %d | %d | %s |", impl, p, s.Seeds, s.Failed,
					counts(s.Violations), counts(s.Warnings), s.Ops, s.Writes, s.Grants, strings.Join(faults, ", ")))
				if impl == Fenced && s.Failed > 0 {
					t.Errorf("fenced, %s: %d seeds failed", p, s.Failed)
				}
			})
		}
	}
	t.Logf("\n| manager | profile | seeds | failing | violated (seeds) | warned (seeds) | ops | writes | grants | faults injected |\n|---|---|---:|---:|---|---|---:|---:|---:|---|\n%s",
		strings.Join(rows, "\n"))
}

func counts(m map[string]int) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] > 0 {
			out = append(out, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(out) == 0 {
		return "—"
	}
	return strings.Join(out, ", ")
}
