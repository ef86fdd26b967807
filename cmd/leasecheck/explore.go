package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/leasecheck/leasecheck/campaign"
	"github.com/leasecheck/leasecheck/explore"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/mutants"
)

func init() {
	register("explore", command{
		summary: "explore every run of the machines within bounds (a model checker): BFS, DFS or PCT",
		run:     runExplore,
	})
}

// The default bounds: explored on the reference in well under a minute.
const (
	defaultExploreFaults = "all"
	defaultMaxFaults     = 1
	defaultDeviations    = 1
)

func runExplore(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	holders := fs.Int("holders", 2, "how many holders contend for the lease")
	depth := fs.Int("depth", 200, "the most moves on one path")
	faultList := fs.String("faults", defaultExploreFaults, "fault kinds that may strike at any step, \"all\" or \"none\" (with --mutant: its own kinds unless given)")
	maxFaults := fs.Int("max-faults", defaultMaxFaults, "at most this many faults on one path")
	adversary := fs.Int("adversary", -1, "at most this many adversarial requests on one path (default 0; 1 with a coordinator --mutant)")
	deviations := fs.Int("deviations", defaultDeviations, "at most this many messages on one path off the shortest delay")
	loss := fs.Bool("loss", false, "a deviation may also lose a message")
	semantics := fs.String("semantics", "", "seed or fenced-storage (default seed; a --mutant's own)")
	strategy := fs.String("strategy", "bfs", "bfs (minimal counterexamples), dfs, or pct (randomized, with its guarantee)")
	mutantName := fs.String("mutant", "", "explore planted-bug mutant `NAME` instead of the reference (see leasecheck mutants)")
	out := fs.String("out", "leasecheck-failures", "where a counterexample is saved as a scenario leasecheck repro replays")
	timeout := fs.Duration("timeout", 0, "wall-time budget (0: none); past it the result is incomplete (exit 3)")
	maxStates := fs.Int64("max-states", 1_000_000, "budget of distinct states")
	runs := fs.Int("runs", 1000, "pct: how many random runs")
	pctDepth := fs.Int("pct-depth", 3, "pct: the bug depth d (d-1 priority change points)")
	seed := fs.Uint64("seed", 1, "pct: the seed of the runs")
	noHash := fs.Bool("no-hash", false, "do not skip states seen before (for measurements)")
	noPOR := fs.Bool("no-por", false, "do not skip orders of commuting steps (for measurements)")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	noMin := fs.Bool("no-minimize", false, "keep the counterexample of the space as given (default: shorten it by exploring smaller worlds)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: leasecheck explore [--holders N] [--depth D] [--faults LIST] [--max-faults K] [--strategy bfs|dfs|pct] [--mutant NAME] [--out DIR] [--timeout D] [--json]")
		fmt.Fprintln(stderr, "\nExplores every run of the simulator's machines within the bounds: every order of\nthe events due at one instant, where each fault strikes, the adversarial client's\nrequests, the messages' delays. Exit status: 0 the bounded space holds no\nviolation (complete), 1 a violation (its shortest path saved under --out; replay\nit with leasecheck repro FILE), 2 bad usage or a bug in leasecheck (the explorer's\nmonitor and its full judges disagreed on a path), 3 a budget ran out first.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlagsOnly(fs, args, stderr); !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	kinds, err := faults.ParseKinds(*faultList)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
		return exitUsage
	}
	if *holders < 1 || *depth < 1 || *maxFaults < 0 || *deviations < 0 || *maxStates < 1 || *runs < 1 || *pctDepth < 1 {
		fmt.Fprintln(stderr, "leasecheck explore: --holders, --depth, --max-states, --runs and --pct-depth must be >= 1; --max-faults and --deviations >= 0")
		return exitUsage
	}
	st := explore.Strategy(*strategy)
	if !slices.Contains([]explore.Strategy{explore.BFS, explore.DFS, explore.PCT}, st) {
		fmt.Fprintf(stderr, "leasecheck explore: unknown strategy %q (bfs, dfs, pct)\n", *strategy)
		return exitUsage
	}
	b := explore.Bounds{Holders: *holders, Faults: kinds, MaxFaults: *maxFaults, Deviations: *deviations, Loss: *loss, Semantics: *semantics}
	o := explore.Options{Strategy: st, MaxDepth: *depth, MaxStates: *maxStates, Timeout: *timeout, NoHash: *noHash, NoPOR: *noPOR,
		Runs: *runs, Depth: *pctDepth, Seed: *seed}
	var mut *mutants.Mutant
	if *mutantName != "" {
		if mut = mutants.ByName(*mutantName); mut == nil {
			fmt.Fprintf(stderr, "leasecheck explore: unknown mutant %q (known: %s)\n", *mutantName, strings.Join(mutants.Names(), ", "))
			return exitUsage
		}
		// The mutant's own bounds, but for what the command line says.
		mb := explore.MutantBounds(mut)
		if set["holders"] || mb.Holders == 0 {
			mb.Holders = b.Holders
		}
		if set["faults"] {
			mb.Faults = b.Faults
		}
		if set["max-faults"] {
			mb.MaxFaults = b.MaxFaults
		}
		if set["deviations"] {
			mb.Deviations = b.Deviations
		}
		if set["loss"] {
			mb.Loss = b.Loss
		}
		if set["semantics"] {
			mb.Semantics = b.Semantics
		}
		if *adversary < 0 {
			*adversary = mb.Adversary
		}
		b = mb
		o.Sim = mut.Options()
		o.Implementation = mut.Implementation()
	}
	if *adversary < 0 {
		*adversary = 0
	}
	b.Adversary = *adversary
	if b.Semantics != "" && b.Semantics != "seed" && b.Semantics != "fenced-storage" {
		fmt.Fprintf(stderr, "leasecheck explore: unknown semantics %q (seed, fenced-storage)\n", b.Semantics)
		return exitUsage
	}
	sc := explore.Space(b)
	if mut != nil {
		mut.AdaptSpace(sc)
	}
	// The search keeps many states alive at once: collecting garbage less
	// often trades memory for speed.
	debug.SetGCPercent(400)
	rep, err := explore.Explore(sc, o)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
		return exitUsage
	}
	if rep.Counterexample != nil && !*noMin {
		rep = explore.Minimize(sc, o, rep)
	}
	if cx := rep.Counterexample; cx != nil {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
			return exitUsage
		}
		name := "explore-" + string(st)
		if mut != nil {
			name += "-" + mut.Name
		}
		// Saved as run saves a failure: the scenario repro replays, the
		// history with its fault records, the timeline, the story.
		o, err := campaign.Replay(context.Background(), cx.Scenario, campaign.JudgeOptions{})
		if err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: replaying the counterexample: %v\n", err)
			return exitUsage
		}
		if !o.Fails(cx.Property) {
			fmt.Fprintf(stderr, "leasecheck explore: the counterexample's scenario does not replay to %s (failed: %v); this is a bug in explore\n", cx.Property, o.Failed())
			return exitUsage
		}
		saved, err := campaign.WriteFailure(*out, name, o, nil, nil)
		if err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
			return exitUsage
		}
		cx.File = saved.Scenario
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
			return exitUsage
		}
	} else {
		printExplore(stdout, rep, mut)
	}
	switch {
	case rep.Disagreement != "":
		fmt.Fprintf(stderr, "leasecheck explore: %s\n", rep.Disagreement)
		return exitUsage
	case rep.Counterexample != nil:
		fmt.Fprintf(stderr, "FAIL %s in %d steps; replay: leasecheck repro %s\n", rep.Counterexample.Property, rep.Counterexample.Steps, rep.Counterexample.File)
		return exitViolation
	case !rep.Complete:
		return exitUnknown
	}
	return exitOK
}

func printExplore(w io.Writer, r *explore.Report, mut *mutants.Mutant) {
	what := "the reference"
	if mut != nil {
		what = fmt.Sprintf("mutant %s (%s): %s", mut.Name, mut.Component, mut.Failure)
	}
	fmt.Fprintf(w, "explored %s, strategy %s\n", what, r.Strategy)
	fmt.Fprintf(w, "%-22s %s\n", "space", r.Bounds)
	red := []string{}
	if r.Hashing {
		red = append(red, "state hashing")
	}
	if r.POR {
		red = append(red, "sleep sets")
	}
	if !r.Cloning {
		red = append(red, "states re-run from the root (a machine cannot copy itself)")
	}
	if len(red) == 0 {
		red = append(red, "none")
	}
	fmt.Fprintf(w, "%-22s %s\n", "reductions", strings.Join(red, ", "))
	fmt.Fprintf(w, "%-22s %d reached, %d distinct, deepest path %d moves\n", "states", r.States, r.DistinctStates, r.MaxDepth)
	fmt.Fprintf(w, "%-22s %d (%d seen before, %d commuting orders)\n", "pruned", r.Pruned, r.PrunedSeen, r.PrunedSleep)
	fmt.Fprintf(w, "%-22s %d paths judged to their end, %d states judged in full, %d undecided\n", "judged", r.Paths, r.Judged, r.Undecided)
	fmt.Fprintf(w, "%-22s %.2fs (%.0f distinct states/s)\n", "wall time", r.Elapsed.Seconds(), float64(r.DistinctStates)/max(r.Elapsed.Seconds(), 1e-9))
	if r.Guarantee != "" {
		fmt.Fprintf(w, "%-22s %s\n", "guarantee", r.Guarantee)
	}
	fmt.Fprintln(w, "\nviolations")
	for _, p := range campaign.Properties() {
		fmt.Fprintf(w, "  %-24s %d\n", p, r.Violations[p])
	}
	if r.Disagreement != "" {
		fmt.Fprintf(w, "\nBUG IN LEASECHECK: %s\n", r.Disagreement)
	}
	switch {
	case r.Counterexample != nil:
		cx := r.Counterexample
		fmt.Fprintf(w, "\nFAIL: %s after %d moves (%d operations); the search stopped there\n  %s\n  saved: %s\n", cx.Property, cx.Steps, cx.Ops, cx.Explanation, cx.File)
		if m := r.Minimized; m != nil && m.ToOps < m.FromOps {
			fmt.Fprintf(w, "  (shortened from %d operations by exploring %d smaller worlds; this one has %d holders)\n", m.FromOps, m.Tried, m.Holders)
		}
	case r.Complete:
		fmt.Fprintf(w, "\nOK: the whole bounded space was explored; no violation in it\n")
	case r.Stopped == "runs":
		fmt.Fprintf(w, "\nNO VIOLATION in %d random runs; PCT claims no completeness (see the guarantee)\n", r.Paths)
	default:
		fmt.Fprintf(w, "\nINCOMPLETE: stopped by %s before the bounded space was exhausted; no violation in the part explored\n", r.Stopped)
	}
}
