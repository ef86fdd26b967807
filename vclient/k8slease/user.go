package k8slease

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// The go test flags of every sweep (Sweep), registered by
// internal/k8ssweep when a test binary imports this package, under the
// prefix "k8slease." so that a test of the same binary may define -seeds,
// -profile, -save or -scenario of its own; a user's module runs
//
//	go test -run TestMyElection -k8slease.seeds 10000 -k8slease.profile pause -k8slease.save DIR
//	go test -run TestMyElection -k8slease.scenario DIR/seed-N.scenario.json
var (
	profileFlag  = k8ssweep.ProfileFlag
	saveFlag     = k8ssweep.SaveFlag
	scenarioFlag = k8ssweep.ScenarioFlag
)

// Want is what a sweep must show for its test to pass.
type Want int

const (
	// WantClean: no seed violates a property, none is undecided, and the
	// sweep exercised the client (operations recorded, grants made).
	WantClean Want = iota
	// WantViolation: some seed violates a property — a planted bug the
	// sweep must find.
	WantViolation
	// WantResult: no verdict; the caller judges the SweepResult.
	WantResult
)

// SweepConfig is a sweep of seeds over a client of your own (Sweep).
type SweepConfig struct {
	// Name is the implementation a scenario records (default "vclient:"
	// and the test's name). A replayed scenario must name it.
	Name string
	// Client is your candidate program: the harness calls its Start once
	// per incarnation of each candidate. Point your clientset's transport
	// at Candidate.Transport(), write through Candidate.Write, tell
	// leadership with Candidate.Leading and Stopped, and make it a
	// vclient.RandUser whose Use returns UseJitter(r) so that client-go's
	// jitter draws from the run's seed.
	Client vclient.Client
	// Fenced: your writes present a token (Candidate.Write's fence) the
	// resource checks, keeping the highest it accepted. Tokens says what
	// the token is: model.GrantTokens for the resourceVersion of the
	// update that made the writer holder (TokenAcquired), model.OrderedTokens
	// for one of the holder's own that only grows across holders
	// (TokenHeld, TokenTransitions).
	Fenced bool
	Tokens model.WriteTokens
	// Server returns the API server of one run (nil: leasecheck's
	// in-process API server, fenced as above, which takes the holder
	// string a candidate writes into a Lease — controller-runtime's
	// hostname_uuid, a pod name — for that candidate, and shows it back in
	// every Lease answered: the history speaks of candidates, "h1", never
	// of a host) — or the lease server of a
	// client that is not Kubernetes's: a sweep whose server is your own
	// (Server, or Options.Server) tells its failures' stories in lease
	// terms (TTL, renewal, takeover), not in Kubernetes's.
	Server func() vclient.Server
	// Options, when set, are the run options verbatim (Fenced, Tokens,
	// Leases and Server are then ignored).
	Options *vclient.Options
	// Leases names every Lease your controller holds when it holds
	// several at once (shards, one per controller), each
	// "namespace/name": each is judged apart, on its own key, with the
	// writes and beliefs your candidate makes under it
	// (Candidate.Lease(name).Write, Leading and Stopped), as a process of
	// its own ("h1@default/shard-a"). Nil: one Lease, the first created,
	// and Candidate.Write. With a Server of your own it is ignored.
	Leases []string

	// Timing is the three parameters your client runs with when it reads
	// none of the scenario's (its own LeaseDuration, RenewDeadline and
	// RetryPeriod): every seed then has them, the story tells them, and a
	// scenario with others — a shrinker's edit, a file of another client —
	// is refused rather than run with parameters your client ignores. Nil:
	// your client reads them from its Candidate (Parameters) and each seed
	// draws one of Timings.
	Timing *Timing
	// Timings are what a seed draws from when Timing is nil (nil: all of
	// the package's Timings).
	Timings []Timing
	// Profile is the fault profile (empty: the -profile flag's, by default
	// "pause"). A sweep that names one ignores -profile.
	Profile Profile
	// Kinds, when set, are the fault kinds every seed draws from instead
	// of a profile's: one to four faults a seed, each of a kind drawn from
	// Kinds, as profile "all" draws its own — any of faults.Pause, Delay,
	// Partition, CoordinatorCrash, Crash and OwnerReuse (another is
	// refused). Profile and -profile are then ignored.
	Kinds []faults.Kind
	// Seeds is the sweep's default seed count (0: 100); -seeds overrides
	// it, -short takes a fifth.
	Seeds int
	// MinReplicas and MaxReplicas bound the candidates a seed draws
	// (default 2 and 4; at most 7).
	MinReplicas, MaxReplicas int
	// Shutdowns adds a graceful step-down (faults.Shutdown) to every seed,
	// for a client with ReleaseOnCancel (StepDowns).
	Shutdowns bool
	// Want is what the sweep must show (default WantClean).
	Want Want
	// Replay is the command that replays a saved file (nil: go test -run
	// '^TestName$' -count=1 -k8slease.scenario FILE, in your package's
	// directory, carrying the other flags the sweep's command line set —
	// an -impl of your own that picks the configuration — but go test's
	// and the sweeps' own).
	Replay func(file string) string
	// Regressions is the directory Regressions replays (default
	// testdata/regressions, in your package's directory).
	Regressions string
	// FirstSeed is the sweep's first seed (0: 1): a sweep of one seed from
	// a later one runs that seed alone, its trace on demand (OnSeed).
	FirstSeed uint64
	// OnSeed, when set, sees every seed's judged run in seed order, before
	// it is counted: a per-seed audit, or one seed's trace printed. An
	// error stops the sweep and fails the test.
	OnSeed func(*Outcome) error
	// FailFast stops the sweep at its first failing seed, which is still
	// shrunk and saved.
	FailFast bool
	// MaxSaved is how many failing seeds are shrunk and saved, the first
	// in seed order (0: ten; negative: all).
	MaxSaved int
	// Configure, when set, tunes the campaign before it runs, after
	// FailFast and MaxSaved: leasecheck's own sweeps set its seeds and save
	// directory with it. Its type is leasecheck's own campaign's, which a
	// module outside leasecheck cannot name: yours sets the fields above
	// (Seeds, FirstSeed, OnSeed, FailFast, MaxSaved).
	Configure func(*campaign.Config)

	// notes is the Kubernetes account of a run the story tells (nil: one
	// told from what ran, userNotes); leasecheck's own sweeps tell of
	// their elector (electorNotes).
	notes func(*campaign.Outcome) *campaign.DomainNotes
}

// SweepResult is what a sweep ran and found.
type SweepResult struct {
	Summary *Summary
	// Failures are the seeds that violated a property (shrunk and saved,
	// up to MaxSaved).
	Failures []*Failure
	// Warned are the outcomes with warnings only.
	Warned []*Outcome
	// Grants counts the acquires the API server granted over every seed.
	Grants int
	// Profile is the profile the sweep ran ("all" for a sweep of
	// SweepConfig.Kinds, which draws as "all" does).
	Profile Profile
	// Replayed is the outcome of the one file -scenario named (the sweep
	// then ran no seed).
	Replayed *Outcome

	class string // the faults drawn, as the log says them
	// The campaign's own values, for leasecheck's own sweeps' tests.
	sum      *campaign.Summary
	failures []*campaign.Failure
	warned   []*campaign.Outcome
}

func (c *SweepConfig) name(t *testing.T) string {
	if c.Name != "" {
		return c.Name
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	return "vclient:" + top
}

// target returns the campaign target the configuration stands for, its runs
// bubbles of t.
func (c *SweepConfig) target(t *testing.T) (campaign.Target, error) {
	if c.Client == nil {
		return nil, fmt.Errorf("SweepConfig.Client is nil: the sweep needs your candidate program")
	}
	for i, l := range c.Leases {
		ns, name, ok := strings.Cut(l, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") || slices.Contains(c.Leases[:i], l) {
			return nil, fmt.Errorf("SweepConfig.Leases[%d] %q: want a \"namespace/name\" named once", i, l)
		}
	}
	tg := &vclient.Target{T: t, Name: c.name(t), Client: c.Client}
	if c.Options != nil {
		tg.Options = *c.Options
	} else {
		srv, fenced, leases := c.Server, c.Fenced, slices.Clone(c.Leases)
		if srv == nil {
			srv = func() vclient.Server {
				s := k8ssweep.NewServer()
				s.Fenced, s.Leases = fenced, leases
				return k8ssweep.Holders(s)
			}
		}
		tg.Options = vclient.Options{Server: srv, Fences: model.NoFences, AdvisoryBelief: true}
		if fenced {
			tg.Options.Fenced, tg.Options.Fences, tg.Options.Tokens = true, model.Increasing, c.Tokens
		}
	}
	if c.Timing == nil {
		return tg, nil
	}
	return &fixedTiming{tg, *c.Timing}, nil
}

// tellingNotes is the account a sweep's saved stories tell: the
// configuration's own, or one told from what ran.
func (c *SweepConfig) tellingNotes(t *testing.T) func(*campaign.Outcome) *campaign.DomainNotes {
	if c.notes != nil {
		return c.notes
	}
	cfg := *c
	if cfg.ownServer() {
		return func(o *campaign.Outcome) *campaign.DomainNotes { return leaseNotes(o, &cfg, t) }
	}
	return func(o *campaign.Outcome) *campaign.DomainNotes { return userNotes(o, &cfg, t) }
}

// told is a target whose executions carry the Kubernetes account of the
// run (campaign.Execution.Notes), which the saved story tells in its own
// sections.
type told struct {
	campaign.Target
	notes func(*campaign.Outcome) *campaign.DomainNotes
}

// telling returns tg with its runs told by notes (nil: tg as it is).
func telling(tg campaign.Target, notes func(*campaign.Outcome) *campaign.DomainNotes) campaign.Target {
	if notes == nil {
		return tg
	}
	return &told{tg, notes}
}

func (t *told) Run(ctx context.Context, sc *scenario.Scenario) (*campaign.Execution, error) {
	e, err := t.Target.Run(ctx, sc)
	if e != nil {
		e.Notes = t.notes
	}
	return e, err
}

// fixedTiming is a target whose client reads none of the scenario's timing
// parameters: a scenario with others is refused, so that neither a
// shrinker's edit nor a file of another client is judged as if the client
// had run with them.
type fixedTiming struct {
	*vclient.Target
	tm Timing
}

func (f *fixedTiming) Run(ctx context.Context, sc *scenario.Scenario) (*campaign.Execution, error) {
	if err := f.tm.check(sc); err != nil {
		return nil, err
	}
	return f.Target.Run(ctx, sc)
}

// check refuses a scenario whose parameters are not tm's.
func (tm Timing) check(sc *scenario.Scenario) error {
	if sc.TTL != tm.LeaseDuration {
		return fmt.Errorf("the scenario's LeaseDuration (TTL) is %dms; the client runs with its own, %dms, and reads no other", sc.TTL, tm.LeaseDuration)
	}
	for _, p := range sc.Holders {
		if p.Timeout != tm.RenewDeadline || p.RenewEvery != tm.RetryPeriod {
			return fmt.Errorf("holder %s: RenewDeadline %dms, RetryPeriod %dms; the client runs with its own, %dms and %dms, and reads no other",
				p.Name, p.Timeout, p.RenewEvery, tm.RenewDeadline, tm.RetryPeriod)
		}
	}
	return nil
}

func (c *SweepConfig) generator(t *testing.T, p Profile) func(seed uint64) *scenario.Scenario {
	timings := c.Timings
	if c.Timing != nil {
		timings = []Timing{*c.Timing}
	}
	g := k8ssweep.NewGenerator(k8ssweep.GenOptions{Impl: c.name(t), Fenced: c.fencedStore(), Profile: k8ssweep.Profile(p), Timings: houseTimings(timings),
		Min: c.MinReplicas, Max: c.MaxReplicas, Kinds: c.Kinds})
	if c.Shutdowns {
		return k8ssweep.StepDowns(g)
	}
	return g
}

func (c *SweepConfig) fencedStore() bool {
	if c.Options != nil {
		return c.Options.Fenced
	}
	return c.Fenced
}

func (c *SweepConfig) kinds(p Profile) []faults.Kind {
	kinds := k8ssweep.Profile(p).Kinds()
	if len(c.Kinds) > 0 {
		kinds = slices.Clone(c.Kinds)
	}
	if c.Shutdowns {
		return append(kinds, faults.Shutdown)
	}
	return kinds
}

// ownServer reports whether the run's server is the user's own, not
// leasecheck's Kubernetes API server.
func (c *SweepConfig) ownServer() bool {
	if c.Options != nil {
		return c.Options.Server != nil
	}
	return c.Server != nil
}

// faultClass says what faults a sweep drew: its profile, or its kinds.
func (c *SweepConfig) faultClass(p Profile) string {
	if len(c.Kinds) == 0 {
		return "profile " + string(p)
	}
	names := make([]string, len(c.Kinds))
	for i, k := range c.Kinds {
		names[i] = string(k)
	}
	return "faults " + strings.Join(names, ", ")
}

func (c *SweepConfig) replay(t *testing.T) func(string) string {
	if c.Replay != nil {
		return c.Replay
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	carried := carriedFlags()
	return func(file string) string {
		return fmt.Sprintf("go test -run '^%s$' -count=1%s -%sscenario %s", top, carried, k8ssweep.FlagPrefix, file)
	}
}

// carriedFlags are the flags of this test binary's command line that a
// replay carries: those set other than go test's own (test.*) and the
// sweeps' (-k8slease.seeds ...), which the configuration under test may
// read (an -impl of the user's), each " -name=value".
func carriedFlags() string {
	var b strings.Builder
	flag.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "test.") || k8ssweep.IsSweepFlag(f.Name) {
			return
		}
		fmt.Fprintf(&b, " -%s=%s", f.Name, shellQuote(f.Value.String()))
	})
	return b.String()
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (c *SweepConfig) regressions() string {
	if c.Regressions != "" {
		return c.Regressions
	}
	return filepath.Join("testdata", "regressions")
}

// Sweep runs a sweep of seeds over your client (cfg) under a fault profile,
// judges every seed on both records (the clients' view and the stores'
// log) and the run properties, shrinks and saves the failures with their
// stories, and fails t unless the sweep shows cfg.Want. With -scenario FILE
// it replays that one saved file instead and fails t unless it violates
// exactly the properties the file expects: the command each saved story
// prints.
//
//	func TestMyElection(t *testing.T) {
//		k8slease.Sweep(t, k8slease.SweepConfig{Client: &myController{}, Timing: &k8slease.Timing{Name: "mine", LeaseDuration: 15000, RenewDeadline: 10000, RetryPeriod: 2000}})
//	}
func Sweep(t *testing.T, cfg SweepConfig) *SweepResult {
	t.Helper()
	tg, err := cfg.target(t)
	if err != nil {
		t.Fatal(err)
	}
	if *scenarioFlag != "" {
		o, err := k8ssweep.ReplayFile(tg, *scenarioFlag)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		campaign.WriteOutcome(&b, o)
		t.Log(b.String())
		if err := campaign.CheckExpect(o); err != nil {
			t.Errorf("%s: %v", *scenarioFlag, err)
		}
		return &SweepResult{Replayed: newOutcome(o.Scenario.Seed, o)}
	}
	if err := k8ssweep.CheckKinds(cfg.Kinds); err != nil {
		t.Fatalf("SweepConfig.Kinds: %v", err)
	}
	p := cfg.Profile
	if len(cfg.Kinds) > 0 {
		p = "all" // the mix Kinds draws; -profile is ignored
	} else if p == "" {
		p = "pause"
		if *profileFlag != "" {
			if p, err = ParseProfile(*profileFlag); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := &SweepResult{Profile: p, class: cfg.faultClass(p)}
	first := cfg.FirstSeed
	if first == 0 {
		first = 1
	}
	c := campaign.Config{Target: tg, Scenario: cfg.generator(t, p), Kinds: cfg.kinds(p), Seeds: k8ssweep.SeedCount(cfg.Seeds), First: first, Workers: 2,
		Save: campaign.SaveOptions{Dir: k8ssweep.SaveDir(t), Replay: cfg.replay(t), Shrink: campaign.ShrinkOptions{Budget: 300}, Max: cfg.MaxSaved}, FailFast: cfg.FailFast}
	if cfg.Configure != nil {
		cfg.Configure(&c)
	}
	// Wrapped after Configure, which may tune the target it was given.
	c.Target = telling(c.Target, cfg.tellingNotes(t))
	onOutcome, onFailure := c.OnOutcome, c.OnFailure
	c.OnOutcome = func(seed uint64, o *campaign.Outcome) error {
		var pub *Outcome
		if len(o.Warnings) > 0 && !o.Violated() {
			pub = newOutcome(seed, o)
			out.Warned, out.warned = append(out.Warned, pub), append(out.warned, o)
		}
		for _, op := range o.History.Ops {
			if op.Kind == model.Acquire && op.OK {
				out.Grants++
			}
		}
		if cfg.OnSeed != nil {
			if pub == nil {
				pub = newOutcome(seed, o)
			}
			if err := cfg.OnSeed(pub); err != nil {
				return fmt.Errorf("seed %d: OnSeed: %w", seed, err)
			}
		}
		if onOutcome != nil {
			return onOutcome(seed, o)
		}
		return nil
	}
	c.OnFailure = func(f *campaign.Failure) {
		pub := &Failure{Seed: f.Seed, Outcome: newOutcome(f.Seed, f.Outcome), SaveErr: f.SaveErr}
		if s := f.Saved; s != nil {
			pub.Saved = &Saved{Scenario: s.Scenario, History: s.History, Story: s.Story, Page: s.Page}
		}
		out.Failures, out.failures = append(out.Failures, pub), append(out.failures, f)
		if onFailure != nil {
			onFailure(f)
		}
	}
	sum, err := campaign.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	out.sum, out.Summary = sum, newSummary(sum)
	t.Logf("%s, %s, %d seeds:\n%s", tg.Implementation(), out.class, sum.Seeds, out.Summary)
	switch cfg.Want {
	case WantClean:
		out.Clean(t)
	case WantViolation:
		out.found(t)
	}
	return out
}

// Clean fails t unless the sweep found nothing — no violation, nothing
// undecided — and exercised the client: operations recorded, grants made.
func (r *SweepResult) Clean(t *testing.T) {
	t.Helper()
	for i, f := range r.Failures {
		if i == 3 {
			t.Errorf("... and %d more failing seeds", len(r.Failures)-3)
			break
		}
		saved := ""
		if f.Saved != nil {
			saved = "\nsaved: " + f.Saved.Scenario + " (story " + f.Saved.Story + ")"
		}
		t.Errorf("seed %d: %s%s\n%s", f.Seed, strings.Join(f.Outcome.Violated, ", "), saved, f.Outcome.Report())
	}
	if r.Summary.Undecided > 0 {
		t.Errorf("%d seeds undecided", r.Summary.Undecided)
	}
	if err := r.Summary.Unexercised(); err != nil {
		t.Error(err)
	} else if r.Grants == 0 {
		t.Errorf("the sweep exercised nothing: no grant in %d seeds", r.Summary.Seeds)
	}
}

// found fails t unless some seed violated a property (WantViolation).
func (r *SweepResult) found(t *testing.T) {
	t.Helper()
	if len(r.Failures) == 0 {
		t.Errorf("no violation in %d seeds of %s", r.Summary.Seeds, r.class)
		return
	}
	f := r.Failures[0]
	where := ""
	if f.Saved != nil {
		where = ", saved as " + f.Saved.Scenario
	}
	t.Logf("found: seed %d violates %s%s", f.Seed, strings.Join(f.Outcome.Failed(), ", "), where)
}

// Replay is a saved scenario run again and judged (ReplayScenario): what
// it showed.
type Replay struct {
	// Scenario is the file's scenario.
	Scenario *scenario.Scenario
	// Violated names the properties the run violated, Warned those it
	// only warned on (empty: none).
	Violated, Warned []string
	// Undecided: the history checker could not decide every property
	// within its budget.
	Undecided bool
	// Unexpected says how the violations differ from those the file
	// expects (nil: exactly those), as -scenario judges a replay.
	Unexpected error
	// Report is the run told as -scenario logs it: each property's
	// verdict, the violations, the trace.
	Report string
}

// ReplayScenario runs a saved scenario file against your client (cfg) and
// judges it, as -scenario does without failing t; a file recording
// another implementation, or one whose timing is not cfg.Timing, is an
// error.
func ReplayScenario(t *testing.T, cfg SweepConfig, file string) (*Replay, error) {
	tg, err := cfg.target(t)
	if err != nil {
		return nil, err
	}
	o, err := k8ssweep.ReplayFile(tg, file)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	campaign.WriteOutcome(&b, o)
	return &Replay{Scenario: o.Scenario, Violated: o.Failed(), Warned: o.Warned(), Undecided: o.Undecided(),
		Unexpected: campaign.CheckExpect(o), Report: b.String()}, nil
}

// Regressions replays every saved scenario in cfg.Regressions (default
// testdata/regressions in your package): each must violate exactly the
// properties its expect names and, where its history (.history.jsonl) is
// beside it, record that history again byte for byte. Keep a failure a
// sweep saved by copying its .scenario.json and .history.jsonl there;
//
//	go test -run TestMyRegressions
//
// replays them all. A directory with no scenario fails t: a regression test
// that replays nothing is not a pass.
func Regressions(t *testing.T, cfg SweepConfig) {
	t.Helper()
	replayDir(t, cfg.regressions(), func(t *testing.T, _ *scenario.Scenario) (campaign.Target, error) { return cfg.target(t) }, nil)
}

// replayDir replays every scenario file of dir against the target its
// scenario names (target, its runs bubbles of the file's subtest), checking expect and the saved history; after,
// when set, is called with each replay's outcome.
func replayDir(t *testing.T, dir string, target func(*testing.T, *scenario.Scenario) (campaign.Target, error), after func(t *testing.T, file string, o *campaign.Outcome)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.scenario.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no regression scenarios in %s: %v", dir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := target(t, sc)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			o, err := k8ssweep.ReplayFile(tg, f)
			if err != nil {
				t.Fatal(err)
			}
			if err := campaign.CheckExpect(o); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			hf := strings.TrimSuffix(f, ".scenario.json") + ".history.jsonl"
			want, err := os.ReadFile(hf)
			switch {
			case os.IsNotExist(err):
				t.Logf("%s: no saved history beside it; expect checked only", f)
			case err != nil:
				t.Fatal(err)
			default:
				var got bytes.Buffer
				if err := model.WriteHistory(&got, o.History); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Errorf("%s: the replay recorded a different history:\n%s", f, firstDiff(want, got.Bytes()))
				}
			}
			if after != nil {
				after(t, f, o)
			}
		})
	}
}

// firstDiff shows the first line where two histories differ.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\nsaved:    %s\nreplayed: %s", i+1, a, b)
		}
	}
	return "(same lines)"
}
