package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/scenario"
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
	adversary := fs.Int("adversary", 0, "at most this many adversarial requests on one path (with --mutant: the mutant's own unless given)")
	deviations := fs.Int("deviations", defaultDeviations, "at most this many messages on one path off the shortest delay")
	loss := fs.Bool("loss", false, "a deviation may also lose a message")
	semantics := fs.String("semantics", "", "seed or fenced-storage (default seed; a --mutant's own)")
	strategy := fs.String("strategy", "auto", "auto (depth-first to decide; a violation found is searched again breadth-first for the shortest), bfs (minimal counterexamples; parallel on --workers), dfs, or pct (randomized, with its guarantee)")
	mutantName := fs.String("mutant", "", "explore planted-bug mutant `NAME` instead of the reference (see leasecheck mutants)")
	out := fs.String("out", "leasecheck-failures", "where a counterexample is saved as a scenario leasecheck repro replays")
	timeout := fs.Duration("timeout", 0, "wall-time budget (0: none); past it the result is incomplete (exit 3)")
	maxMem := &sizeFlag{n: defaultExploreMemory}
	fs.Var(maxMem, "max-memory", "memory budget of the search's states (`SIZE`: 512MiB, 2GiB, none); past it the result is incomplete (exit 3)")
	maxStates := fs.Int64("max-states", 0, "budget of distinct states (0: none; the memory budget bounds them)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "breadth-first search (bfs, and auto's search for the shortest violation): expand states on this many goroutines (the counts and the counterexample are the same for any number)")
	progress := fs.Bool("progress", true, "show a progress line (states, distinct, depth, rate, memory) when stderr is a terminal")
	runs := fs.Int("runs", 1000, "pct: how many random runs")
	pctDepth := fs.Int("pct-depth", 3, "pct: the bug depth d (d-1 priority change points)")
	seed := fs.Uint64("seed", 1, "pct: the seed of the runs")
	noHash := fs.Bool("no-hash", false, "do not skip states seen before (for measurements)")
	noPOR := fs.Bool("no-por", false, "do not skip orders of commuting steps (for measurements)")
	symmetry := fs.Bool("symmetry", false, "digest states up to permutations of holders with identical programs and start times, where the space is symmetric in them (sleep sets go off with it; the report says whether it applied)")
	stagger := fs.Int64("stagger", 2, "ms between the holders' start times (0: they start together, so holders with one program are interchangeable)")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	noMin := fs.Bool("no-minimize", false, "keep the counterexample of the space as given (default: shorten it by exploring smaller worlds)")
	shardFlag := fs.String("shard", "", "explore only the `I/N`-th of N disjoint parts of the space (bfs; 1 <= I <= N), write it to --part, and combine the N parts with leasecheck merge")
	partFile := fs.String("part", "", "with --shard: the part file to write (`FILE`; default explore-part-I-of-N.json)")
	coverDir := fs.String("coverage", "", "also measure which lines of internal/impl/holder and internal/impl/memstore the exploration ran: re-run it in a build of leasecheck with Go's coverage under `DIR` (needs the go command and the module's source) and report per-package percentages and the code never run")
	planFlag := fs.String("plan", "default", "the spaces searched one after another when no flag shapes one space: \"default\" (explore.DefaultPlan) or a plan `FILE` (a JSON array of spaces; --print-plan writes the default one to start from)")
	printPlan := fs.Bool("print-plan", false, "print the plan --plan names, as a plan file, and exit")
	shardWidth := fs.Int("shard-width", explore.DefaultShardWidth, "with --shard: split the space at the first depth after a level of at least this many states per part (every part must use the same)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: leasecheck explore [--holders N] [--faults LIST] [--max-faults K] [--adversary A] [--semantics S] [--depth D] [--strategy auto|bfs|dfs|pct] [--mutant NAME] [--out DIR] [--timeout D] [--max-memory SIZE] [--coverage DIR] [--shard I/N --part FILE] [--json]")
		fmt.Fprintln(stderr, "\nExplores every run of the simulator's machines within the bounds: every order of\nthe events due at one instant, where each fault strikes, the adversarial client's\nrequests, the messages' delays. With no flag that shapes the space (--holders,\n--faults, --max-faults, --adversary, --deviations, --loss, --semantics, --mutant)\nit explores the default plan, seven spaces one after another: every fault once\n(seed semantics); the adversarial client (seed); the adversary under fenced\nstorage; the adversary after an owner reuse under fenced storage; several\nwrites per grant with a reader and one fault; late answers (a delay past the\nrequest timeout); a handoff on the exact tick (no delay, no margin, clocks at\nopposite drift bounds).\n\nExit status: 0 no violation found (the report's \"complete\" says whether that is\na proof of the bounded space; PCT never is), 1 a violation (its shortest path\nsaved under --out; replay it with leasecheck repro FILE), 2 bad usage or a bug in\nleasecheck (the explorer's monitor and its full judges disagreed on a path), 3 a\nbudget (--timeout, --max-memory, --max-states) ran out first.")
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
	if *stagger < 0 {
		fmt.Fprintln(stderr, "leasecheck explore: --stagger must be >= 0")
		return exitUsage
	}
	if *holders < 1 || *depth < 1 || *maxFaults < 0 || *deviations < 0 || *maxStates < 0 || *runs < 1 || *pctDepth < 1 {
		fmt.Fprintln(stderr, "leasecheck explore: --holders, --depth, --runs and --pct-depth must be >= 1; --max-faults, --deviations and --max-states >= 0")
		return exitUsage
	}
	st := explore.Strategy(*strategy)
	if !slices.Contains([]explore.Strategy{explore.Auto, explore.BFS, explore.DFS, explore.PCT}, st) {
		fmt.Fprintf(stderr, "leasecheck explore: unknown strategy %q (auto, bfs, dfs, pct)\n", *strategy)
		return exitUsage
	}
	b := explore.Bounds{Holders: *holders, Faults: kinds, MaxFaults: *maxFaults, Deviations: *deviations, Loss: *loss, Semantics: *semantics, Stagger: *stagger}
	if *stagger == 0 {
		b.Stagger = -1 // Bounds' "together"; its 0 is the default
	}
	o := explore.Options{Strategy: st, MaxDepth: *depth, MaxStates: *maxStates, Timeout: *timeout, NoHash: *noHash, NoPOR: *noPOR,
		Runs: *runs, Depth: *pctDepth, Seed: *seed, Workers: *workers, Symmetry: *symmetry}
	if *workers < 1 {
		fmt.Fprintln(stderr, "leasecheck explore: --workers must be >= 1")
		return exitUsage
	}
	if maxMem.n > 0 {
		o.MaxMemory = maxMem.n
	}
	// The plan (--plan: explore.DefaultPlan unless it names a file) unless
	// a flag shapes one space.
	plan := *mutantName == "" && !set["holders"] && !set["faults"] && !set["max-faults"] && !set["adversary"] &&
		!set["deviations"] && !set["loss"] && !set["semantics"] && !set["stagger"]
	if set["plan"] && !plan {
		fmt.Fprintln(stderr, "leasecheck explore: --plan searches its own spaces: drop --mutant, --holders, --faults, --max-faults, --adversary, --deviations, --loss, --semantics and --stagger, or --plan")
		return exitUsage
	}
	spacesOfPlan := explore.DefaultPlan()
	if *planFlag != "default" {
		if spacesOfPlan, err = explore.LoadPlan(*planFlag); err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: --plan %v\n", err)
			return exitUsage
		}
	}
	if *printPlan {
		if err := explore.WritePlan(stdout, spacesOfPlan); err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
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
		if set["stagger"] {
			mb.Stagger = b.Stagger
		}
		if !set["adversary"] {
			*adversary = mb.Adversary
		}
		b = mb
		o.Sim = mut.Options()
		o.Implementation = mut.Implementation()
	}
	if *adversary < 0 {
		fmt.Fprintln(stderr, "leasecheck explore: --adversary must be >= 0")
		return exitUsage
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
	// often trades memory for speed, up to the memory budget (the limit set
	// below; the search's own budget reads the live heap, which garbage
	// does not swell). 800 is faster than 400 on the default plan at a
	// little more memory (docs/exploration.md, "Measured choices in the
	// code").
	debug.SetGCPercent(800)
	if o.MaxMemory > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(o.MaxMemory))
	}
	if f, ok := stderr.(*os.File); ok && *progress && term.IsTerminal(int(f.Fd())) {
		o.Progress = func(p explore.Progress) {
			fmt.Fprintf(stderr, "\r\033[K%s states, %s distinct, depth %d, %.0f distinct/s, heap %dMiB, %.0fs",
				thousands(p.States), thousands(p.Distinct), p.Depth, float64(p.Distinct)/max(p.Elapsed.Seconds(), 1e-9), p.HeapBytes>>20, p.Elapsed.Seconds())
		}
	}
	if *shardFlag != "" {
		if !set["strategy"] {
			o.Strategy = explore.BFS // a part is breadth-first (explore.ExploreShard)
		}
		if *coverDir != "" {
			fmt.Fprintln(stderr, "leasecheck explore: --coverage measures a whole exploration, not a part (--shard): run it unsharded")
			return exitUsage
		}
		sh, err := campaign.ParseShard(*shardFlag)
		if err != nil || sh.N < 1 {
			fmt.Fprintf(stderr, "leasecheck explore: --shard %q: want I/N with 1 <= I <= N\n", *shardFlag)
			return exitUsage
		}
		spaces := []*scenario.Scenario{sc}
		if plan {
			spaces = spaces[:0]
			for _, b := range spacesOfPlan {
				spaces = append(spaces, explore.Space(b))
			}
		}
		file := *partFile
		if file == "" {
			file = fmt.Sprintf("explore-part-%d-of-%d.json", sh.I, sh.N)
		}
		return runExploreShard(spaces, o, sh, *shardWidth, file, stdout, stderr)
	}
	var rep *explore.Report
	if plan {
		rep, sc, err = explore.ExplorePlan(spacesOfPlan, o)
	} else {
		rep, err = explore.Explore(sc, o)
	}
	if o.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
		return exitUsage
	}
	// The verdict is the search's, before Minimize replaces the
	// counterexample by one of a smaller world: what a sharded
	// exploration's merge reproduces.
	rep.Verdict = explore.VerdictOf(rep)
	if rep.Counterexample != nil && !*noMin {
		rep = explore.Minimize(sc, o, rep)
	}
	if cx := rep.Counterexample; cx != nil {
		mname := ""
		if mut != nil {
			mname = mut.Name
		}
		file, err := saveCounterexample(*out, counterexampleName(foundBy(rep), mname, cx.Property), cx.Scenario, cx.Property)
		if err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
			return exitUsage
		}
		cx.File = file
	}
	rep.Reductions = rep.ReductionsOn()
	if *coverDir != "" {
		want := rep.Verdict
		if rep.Counterexample == nil && !rep.Complete {
			want = nil // a budget ended this run: the re-run may end elsewhere
		}
		if rep.Coverage, err = measureCoverage(*coverDir, withoutFlag(args, "coverage"), want); err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: --coverage: %v\n", err)
			return exitUsage
		}
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
	case rep.Stopped == "runs" || rep.Complete:
		// Nothing found: a proof of the bounded space when complete; PCT's
		// runs all made claim only their guarantee, and are no failure.
		return exitOK
	}
	fmt.Fprintf(stderr, "leasecheck explore: %s\n", stoppedBy(rep, o))
	return exitUnknown
}

// defaultExploreMemory is --max-memory's default: the states of the
// default plan's largest space fit in a quarter of it.
const defaultExploreMemory = 8 << 30

// stoppedBy names the limit that ended an incomplete search and the flag
// that lifts it.
func stoppedBy(r *explore.Report, o explore.Options) string {
	switch r.Stopped {
	case "timeout":
		return fmt.Sprintf("stopped by the wall-time budget --timeout %s before the space was exhausted; raise --timeout", o.Timeout)
	case "max-memory":
		return fmt.Sprintf("stopped by the memory budget --max-memory %dMiB before the space was exhausted; raise --max-memory (or none)", o.MaxMemory>>20)
	case "max-states":
		return fmt.Sprintf("stopped by the state budget --max-states %d before the space was exhausted; raise it (0: none)", o.MaxStates)
	}
	if r.Undecided > 0 {
		return fmt.Sprintf("%d histories were left undecided by the checker's budget; the space is explored but not proved", r.Undecided)
	}
	return "stopped: " + r.Stopped
}

// thousands renders n with thin separators: 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func printExplore(w io.Writer, r *explore.Report, mut *mutants.Mutant) {
	what := "the reference"
	if mut != nil {
		what = fmt.Sprintf("mutant %s (%s): %s", mut.Name, mut.Component, mut.Failure)
	}
	fmt.Fprintf(w, "explored %s, strategy %s\n", what, r.Strategy)
	fmt.Fprintf(w, "%-22s %s\n", "space", r.Bounds)
	red := r.ReductionsOn()
	if len(red) == 0 {
		red = append(red, "none")
	}
	fmt.Fprintf(w, "%-22s %s\n", "reductions", strings.Join(red, ", "))
	if r.SymmetryOff != "" {
		fmt.Fprintf(w, "%-22s off: %s\n", "holder symmetry", r.SymmetryOff)
	}
	fmt.Fprintf(w, "%-22s %d reached, %d distinct, deepest path %d moves\n", "states", r.States, r.DistinctStates, r.MaxDepth)
	if r.Hashing && r.Strategy != explore.PCT {
		fmt.Fprintf(w, "%-22s 64-bit; the odds that two distinct states shared one (one skipped as seen) are below %.1g\n", "state digests", max(r.CollisionOdds, 1e-18))
	}
	fmt.Fprintf(w, "%-22s %d (%d seen before, %d commuting orders)\n", "pruned", r.Pruned, r.PrunedSeen, r.PrunedSleep)
	if r.Shallower > 0 {
		fmt.Fprintf(w, "%-22s %d states explored again, reached in fewer moves than before (depth-first under the depth bound)\n", "re-explored", r.Shallower)
	}
	fmt.Fprintf(w, "%-22s %d paths judged to their end, %d states judged in full, %d undecided\n", "judged", r.Paths, r.Judged, r.Undecided)
	fmt.Fprintf(w, "%-22s %.2fs (%.0f distinct states/s)\n", "wall time", r.Elapsed.Seconds(), float64(r.DistinctStates)/max(r.Elapsed.Seconds(), 1e-9))
	if r.PeakHeap > 0 {
		fmt.Fprintf(w, "%-22s peak live heap %dMiB (%d bytes per distinct state)\n", "memory", r.PeakHeap>>20, r.PeakHeap/uint64(max(r.DistinctStates, 1)))
	}
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
		if d := r.DepthFirst; d != nil && d.Shortened {
			fmt.Fprintf(w, "  (depth-first search found %s after %d moves in %d distinct states, %.2fs; breadth-first search found the shortest)\n", d.Property, d.Steps, d.DistinctStates, d.Elapsed.Seconds())
		} else if d != nil {
			fmt.Fprintf(w, "  (found depth-first; breadth-first search for a shorter one stopped by %s: this path is not shown to be the shortest)\n", d.Stopped)
		}
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
	if r.DepthCut > 0 {
		fmt.Fprintf(w, "  (%d paths were cut at the depth bound, --depth %d moves: the claim covers paths up to that length)\n", r.DepthCut, r.DepthBound)
	}
	if r.Coverage != nil {
		printCoverage(w, r.Coverage)
	}
}

// foundBy is the search that found rep's counterexample: auto's is
// breadth-first search's when it shortened it (the file bfs saves, the
// same), else depth-first search's.
func foundBy(rep *explore.Report) explore.Strategy {
	if rep.Strategy != explore.Auto {
		return rep.Strategy
	}
	if rep.DepthFirst != nil && !rep.DepthFirst.Shortened {
		return explore.DFS
	}
	return explore.BFS
}

// counterexampleName is a saved counterexample's file name: unique per
// implementation, strategy and property (an existing file with other
// contents is never overwritten: WriteFailure).
func counterexampleName(st explore.Strategy, mutant, property string) string {
	name := "explore-" + string(st)
	if mutant != "" {
		name += "-" + mutant
	}
	return name + "-" + campaign.FileName(property)
}

// saveCounterexample saves sc, a counterexample of property, under dir as
// run saves a failure (the scenario repro replays, the history with its
// fault records, the timeline, the story) and returns the scenario's file.
func saveCounterexample(dir, name string, sc *scenario.Scenario, property string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	o, err := campaign.Replay(context.Background(), sc, campaign.JudgeOptions{})
	if err != nil {
		return "", fmt.Errorf("replaying the counterexample: %v", err)
	}
	// The saved files must tell the report's violation: the replay fails
	// exactly the properties the search recorded (sc.Expect), the first of
	// them the one the report and the file's name give.
	if failed := o.Failed(); len(failed) == 0 || failed[0] != property || len(sc.Expect) > 0 && !slices.Equal(failed, sc.Expect) {
		return "", fmt.Errorf("the counterexample's scenario does not replay to %s (failed: %v, recorded: %v); this is a bug in explore", property, failed, sc.Expect)
	}
	saved, err := campaign.WriteFailure(dir, name, o, nil, nil)
	if err != nil {
		return "", err
	}
	return saved.Scenario, nil
}
