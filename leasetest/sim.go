package leasetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/explorejudge"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/machine"
)

// Machines are a third party's in-process lease machines (package machine):
// a coordinator (a machine.Coordinator, or any machine.Clocked through
// machine.ClockedCoordinator), a fenced resource, a holder. Each factory
// returns a fresh machine; a nil one means leasecheck's reference machine,
// so a coordinator can be checked with the reference holders and the other
// way round. Faults that act inside a holder need its optional interfaces
// (machine.RenewKiller, ...); one without them is reported, not counted.
type Machines struct {
	// Name is recorded in saved scenarios ("third-party:NAME").
	Name        string
	Coordinator func() machine.Coordinator
	Resource    func() machine.Resource
	Holder      func(HolderConfig) machine.Holder
}

func (m Machines) options() *sim.Options {
	return &sim.Options{NewCoordinator: m.Coordinator, NewResource: m.Resource, NewHolder: m.Holder}
}

// SimOptions configure RunMachines and CheckMachines. The zero value means
// the defaults.
type SimOptions struct {
	// Seeds is how many seeded scenarios the sweep runs (0: 1000), from
	// seed 1, with every fault kind unless Faults says which.
	Seeds  int
	Faults []faults.Kind
	// Explore are the bounded spaces the exploration searches, one after
	// the other (nil: every fault kind striking at most once with one
	// message off its shortest delay; then one adversarial request; 2
	// holders each). MaxStates bounds each (0: 300,000).
	Explore   []ExploreBounds
	MaxStates int64
	// Dir is where a failure is saved, shrunk, as a scenario and its story
	// ("": a directory under os.TempDir named after the test).
	Dir string
	// CheckBudget bounds each history's linearizability search (0: 10s).
	CheckBudget time.Duration
	// Skip lists parts not to run: "Sweep", "Explore".
	Skip []string
}

func (o *SimOptions) defaults() {
	if o.Seeds <= 0 {
		o.Seeds = 1000
	}
	if o.Faults == nil {
		o.Faults = faults.AllKinds
	}
	if o.Explore == nil {
		o.Explore = []ExploreBounds{{Faults: faults.AllKinds, MaxFaults: 1, Deviations: 1}, {Adversary: 1}}
	}
	if o.MaxStates <= 0 {
		o.MaxStates = 300_000
	}
	if o.CheckBudget <= 0 {
		o.CheckBudget = 10 * time.Second
	}
}

// replayEnv names the environment variable that makes RunMachines replay
// one saved scenario instead of searching: the replay command a failure
// prints sets it.
const replayEnv = "LEASETEST_REPLAY"

// MachinesResult is what CheckMachines found: per part ("Sweep",
// "Explore") the failures, each a story with its replay.
type MachinesResult struct {
	Failures map[string][]string
	// Seeds and States say what was covered: the seeds swept, the distinct
	// states explored and whether the bounded space was exhausted.
	Seeds    int
	States   int64
	Complete bool
}

// OK reports whether nothing failed.
func (r *MachinesResult) OK() bool {
	for _, fs := range r.Failures {
		if len(fs) > 0 {
			return false
		}
	}
	return true
}

// RunMachines is the in-process conformance suite: it runs m in the
// deterministic simulator, as leasecheck's own machines are, and judges
// every property (the checker's on each history, the run properties on each
// run; package campaign). Two named subtests:
//
//   - Sweep runs Seeds seeded scenarios — holders with drawn protocol
//     parameters, adversarial clients, every fault kind — like leasecheck
//     run, and stops at the first failure, which it saves shrunk;
//   - Explore searches Explore's bounded spaces breadth-first (package
//     explore) and saves the shortest violating path.
//
// Both are deterministic: the same machines give the same verdict on any
// machine, any GOMAXPROCS. A failure names the property, tells the story
// with the history and trace lines, and prints the command that replays it
// (replayEnv=FILE go test -run ...). The suite raises no false alarm on
// machines that keep the lease protocol (the reference passes it, under the
// same bounds), and may miss bugs outside what it searched, which it says.
func RunMachines(t *testing.T, m Machines, opts SimOptions) {
	t.Helper()
	opts.defaults()
	if opts.Dir == "" {
		opts.Dir = filepath.Join(os.TempDir(), "leasetest-"+strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	}
	replayCmd := func(file, part string) string {
		return fmt.Sprintf("replay: %s=%s go test -run '^%s$/%s'", replayEnv, file, strings.Split(t.Name(), "/")[0], part)
	}
	if file := os.Getenv(replayEnv); file != "" {
		t.Run("Replay", func(t *testing.T) {
			msgs, err := replayMachines(context.Background(), m, opts, file)
			if err != nil {
				t.Fatal(err)
			}
			for _, msg := range msgs {
				t.Error(msg)
			}
		})
		return
	}
	for _, part := range []string{"Sweep", "Explore"} {
		t.Run(part, func(t *testing.T) {
			if slices.Contains(opts.Skip, part) {
				t.Skip("skipped by SimOptions.Skip")
			}
			var r MachinesResult
			var err error
			if part == "Sweep" {
				err = sweep(context.Background(), m, opts, &r)
			} else {
				err = exploreMachines(m, opts, &r)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range r.Failures[part] {
				file, story, _ := strings.Cut(f, "\n")
				t.Errorf("%s\n%s", story, replayCmd(file, part))
			}
			if part == "Sweep" {
				t.Logf("%d seeds swept", r.Seeds)
			} else {
				t.Logf("%d distinct states explored, complete: %v", r.States, r.Complete)
			}
		})
	}
}

// CheckMachines runs RunMachines' parts outside a test and returns what
// they found.
func CheckMachines(ctx context.Context, m Machines, opts SimOptions) (*MachinesResult, error) {
	opts.defaults()
	if opts.Dir == "" {
		d, err := os.MkdirTemp("", "leasetest-machines-")
		if err != nil {
			return nil, err
		}
		opts.Dir = d
	}
	r := &MachinesResult{}
	if !slices.Contains(opts.Skip, "Sweep") {
		if err := sweep(ctx, m, opts, r); err != nil {
			return nil, err
		}
	}
	if !slices.Contains(opts.Skip, "Explore") {
		if err := exploreMachines(m, opts, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// machinesTarget runs scenarios against m: a campaign.Target, so the sweep
// is leasecheck run's own loop, judge and shrinker.
type machinesTarget struct{ m Machines }

func (t machinesTarget) Implementation() string { return "third-party:" + t.m.Name }

func (t machinesTarget) Run(_ context.Context, sc *scenario.Scenario) (*campaign.Execution, error) {
	r, err := sim.Run(sc, t.m.options())
	if err != nil {
		return nil, err
	}
	return &campaign.Execution{Scenario: sc, History: r.History, Sim: r, Faults: r.Stats.Faults}, nil
}

func (r *MachinesResult) fail(part, file, story string) {
	if r.Failures == nil {
		r.Failures = map[string][]string{}
	}
	r.Failures[part] = append(r.Failures[part], file+"\n"+story)
}

func sweep(ctx context.Context, m Machines, opts SimOptions, r *MachinesResult) error {
	t := machinesTarget{m}
	kinds := opts.Faults
	gen := func(seed uint64) *scenario.Scenario {
		sc := scenario.FromSeed(seed, scenario.Options{Kinds: kinds})
		sc.Implementation, sc.FaultKinds = t.Implementation(), kinds
		return sc
	}
	var first *campaign.Failure
	sum, err := campaign.Run(ctx, campaign.Config{
		Target: t, Scenario: gen, Kinds: kinds, First: 1, Seeds: opts.Seeds, Workers: 1,
		Judge:    campaign.JudgeOptions{Budget: opts.CheckBudget},
		FailFast: true,
		Save:     campaign.SaveOptions{Dir: filepath.Join(opts.Dir, "sweep"), Max: 1},
		OnFailure: func(f *campaign.Failure) {
			if first == nil {
				first = f
			}
		},
	})
	if err != nil {
		return err
	}
	r.Seeds = sum.Seeds
	if first == nil {
		return nil
	}
	o, file := first.Outcome, ""
	if first.Saved != nil {
		o, file = first.Saved.Outcome, first.Saved.Scenario
	}
	r.fail("Sweep", file, story(fmt.Sprintf("seed %d", first.Seed), o))
	return nil
}

func exploreMachines(m Machines, opts SimOptions, r *MachinesResult) error {
	r.Complete = true
	for i, b := range opts.Explore {
		sc := explore.Space(b)
		o := explore.Options{Judges: explorejudge.Judges{}, Sim: m.options(), MaxStates: opts.MaxStates, CheckBudget: opts.CheckBudget,
			Implementation: machinesTarget{m}.Implementation()}
		rep, err := explore.Explore(sc, o)
		if err != nil {
			return err
		}
		r.States += rep.DistinctStates
		r.Complete = r.Complete && rep.Complete
		if rep.Counterexample == nil {
			continue
		}
		rep = explore.Minimize(sc, o, rep)
		cx := rep.Counterexample
		dir := filepath.Join(opts.Dir, "explore")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		file := filepath.Join(dir, fmt.Sprintf("counterexample-%d.scenario.json", i+1))
		if err := cx.Scenario.Save(file); err != nil {
			return err
		}
		out, err := campaign.JudgeExecution(context.Background(),
			&campaign.Execution{Scenario: cx.Scenario, History: cx.Run.History, Sim: cx.Run, Faults: cx.Run.Stats.Faults},
			campaign.JudgeOptions{Budget: opts.CheckBudget})
		if err != nil {
			return err
		}
		r.fail("Explore", file, story(fmt.Sprintf("an explored path of %d moves (space: %s)", cx.Steps, rep.Bounds), out))
		return nil // the first space that fails tells the story
	}
	return nil
}

// story renders a failing outcome the way leasecheck prints one.
func story(what string, o *campaign.Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s violated (%d operations)\n", what, strings.Join(o.Failed(), ", "), o.Ops())
	campaign.WriteOutcome(&b, o)
	return strings.TrimRight(b.String(), "\n")
}

// replayMachines replays a saved scenario against m and returns its
// failures.
func replayMachines(ctx context.Context, m Machines, opts SimOptions, file string) ([]string, error) {
	sc, err := scenario.Load(file)
	if err != nil {
		return nil, err
	}
	o, err := campaign.Judge(ctx, machinesTarget{m}, sc, campaign.JudgeOptions{Budget: opts.CheckBudget})
	if err != nil {
		return nil, err
	}
	if !o.Violated() {
		return nil, nil
	}
	return []string{story(file, o)}, nil
}
