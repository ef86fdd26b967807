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
	"time"

	"golang.org/x/term"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/explorejudge"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/pairs"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
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
	args = coverageArgs(args)
	fs, f := exploreFlagSet(stderr)
	if code, ok := parseFlagsOnly(fs, args, stderr); !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	j, code, ok := f.job(set, stdout, stderr)
	if !ok {
		return code
	}
	// The search keeps many states alive at once: collecting garbage less
	// often trades memory for speed, up to the memory budget (the limit set
	// below; the search's own budget reads the live heap, which garbage
	// does not swell). 800 is faster than 400 on the default plan at a
	// little more memory (docs/exploration.md, "Measured choices in the
	// code").
	debug.SetGCPercent(800)
	if j.o.MaxMemory > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(j.o.MaxMemory))
	}
	if fd, ok := stderr.(*os.File); ok && f.progress && term.IsTerminal(int(fd.Fd())) {
		j.o.Progress = func(p explore.Progress) {
			fmt.Fprintf(stderr, "\r\033[K%s states, %s distinct, depth %d, %.0f distinct/s, heap %dMiB, %.0fs",
				thousands(p.States), thousands(p.Distinct), p.Depth, float64(p.Distinct)/max(p.Elapsed.Seconds(), 1e-9), p.HeapBytes>>20, p.Elapsed.Seconds())
		}
	}
	if f.shard != "" {
		return f.runShard(j, set, stdout, stderr)
	}
	rep, err := j.search(f.noMin, f.out)
	if j.o.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
		return exitUsage
	}
	if f.coverDir != "" {
		want := rep.Verdict
		if rep.Counterexample == nil && !rep.Complete {
			want = nil // a budget ended this run: the re-run may end elsewhere
		}
		if rep.Coverage, err = measureCoverage(f.coverDir, withoutFlag(args, "coverage"), want); err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: --coverage: %v\n", err)
			return exitUsage
		}
	}
	if j.plan || f.pairs {
		over := "this space"
		if j.plan {
			over = fmt.Sprintf("the plan's %d spaces", len(j.spaces))
		}
		rep.PairCoverage = pairs.Judge(rep.Pairs, over)
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
			return exitUsage
		}
	} else {
		printExplore(stdout, rep, j.mut)
		if f.pairs {
			fmt.Fprintln(stdout)
			rep.PairCoverage.Print(stdout)
		}
	}
	return exploreExit(rep, j.o, stderr)
}

// exploreFlags are explore's command line.
type exploreFlags struct {
	holders, depth, maxFaults, adversary, deviations, workers, runs, pctDepth, shardWidth int
	faultList, semantics, strategy, mutantName, out, shard, partFile, coverDir, plan      string
	loss, progress, noHash, noPOR, symmetry, asJSON, noMin, printPlan, pairs              bool
	timeout                                                                               time.Duration
	maxMem                                                                                sizeFlag
	maxStates, stagger                                                                    int64
	seed                                                                                  uint64
}

// exploreFlagSet declares explore's flags and its usage.
func exploreFlagSet(stderr io.Writer) (*flag.FlagSet, *exploreFlags) {
	f := &exploreFlags{maxMem: sizeFlag{n: defaultExploreMemory}}
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&f.holders, "holders", 2, "how many holders contend for the lease")
	fs.IntVar(&f.depth, "depth", 200, "the most moves on one path")
	fs.StringVar(&f.faultList, "faults", defaultExploreFaults, "fault kinds that may strike at any step, \"all\" or \"none\" (with --mutant: its own kinds unless given)")
	fs.IntVar(&f.maxFaults, "max-faults", defaultMaxFaults, "at most this many faults on one path")
	fs.IntVar(&f.adversary, "adversary", 0, "at most this many adversarial requests on one path (with --mutant: the mutant's own unless given)")
	fs.IntVar(&f.deviations, "deviations", defaultDeviations, "at most this many messages on one path off the shortest delay")
	fs.BoolVar(&f.loss, "loss", false, "a deviation may also lose a message")
	fs.StringVar(&f.semantics, "semantics", "", "seed or fenced-storage (default seed; a --mutant's own)")
	fs.StringVar(&f.strategy, "strategy", "auto", "auto (depth-first to decide; a violation found is searched again breadth-first for the shortest), bfs (minimal counterexamples; parallel on --workers), dfs, or pct (randomized, with its guarantee)")
	fs.StringVar(&f.mutantName, "mutant", "", "explore planted-bug mutant `NAME` instead of the reference (see leasecheck mutants)")
	fs.StringVar(&f.out, "out", "leasecheck-failures", "where a counterexample is saved as a scenario leasecheck repro replays")
	fs.DurationVar(&f.timeout, "timeout", 0, "wall-time budget (0: none); past it the result is incomplete (exit 3)")
	fs.Var(&f.maxMem, "max-memory", "memory budget of the search's states (`SIZE`: 512MiB, 2GiB, none); past it the result is incomplete (exit 3)")
	fs.Int64Var(&f.maxStates, "max-states", 0, "budget of distinct states (0: none; the memory budget bounds them)")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "breadth-first search (bfs, and auto's search for the shortest violation): expand states on this many goroutines (the counts and the counterexample are the same for any number)")
	fs.BoolVar(&f.progress, "progress", true, "show a progress line (states, distinct, depth, rate, memory) when stderr is a terminal")
	fs.IntVar(&f.runs, "runs", 1000, "pct: how many random runs")
	fs.IntVar(&f.pctDepth, "pct-depth", 3, "pct: the bug depth d (d-1 priority change points)")
	fs.Uint64Var(&f.seed, "seed", 1, "pct: the seed of the runs")
	fs.BoolVar(&f.noHash, "no-hash", false, "do not skip states seen before (for measurements)")
	fs.BoolVar(&f.noPOR, "no-por", false, "do not skip orders of commuting steps (for measurements)")
	fs.BoolVar(&f.symmetry, "symmetry", false, "digest states up to permutations of holders with identical programs and start times, where the space is symmetric in them (sleep sets go off with it; the report says whether it applied)")
	fs.Int64Var(&f.stagger, "stagger", 2, "ms between the holders' start times (0: they start together, so holders with one program are interchangeable)")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as one JSON object")
	fs.BoolVar(&f.noMin, "no-minimize", false, "keep the counterexample of the space as given (default: shorten it by exploring smaller worlds)")
	fs.StringVar(&f.shard, "shard", "", "explore only the `I/N`-th of N disjoint parts of the space (bfs; 1 <= I <= N), write it to --part, and combine the N parts with leasecheck merge")
	fs.StringVar(&f.partFile, "part", "", "with --shard: the part file to write (`FILE`; default explore-part-I-of-N.json)")
	fs.Var(coverageFlag{f}, "coverage", "also print the pair coverage table (as --pairs); --coverage DIR instead measures which lines of internal/impl/holder and internal/impl/memstore the exploration ran: it re-runs it in a build of leasecheck with Go's coverage under DIR (needs the go command and the module's source) and reports per-package percentages and the code never run")
	fs.StringVar(&f.plan, "plan", "default", "the spaces searched one after another when no flag shapes one space: \"default\" (explore.DefaultPlan) or a plan `FILE` (a JSON array of spaces; --print-plan writes the default one to start from)")
	fs.BoolVar(&f.pairs, "pairs", false, "also print the pair coverage table: which pairs of fault and step in flight, two faults, fault and workload dimension the search reached, the never reached first (the same as --coverage alone)")
	fs.BoolVar(&f.printPlan, "print-plan", false, "print the plan --plan names, as a plan file, and exit")
	fs.IntVar(&f.shardWidth, "shard-width", explore.DefaultShardWidth, "with --shard: split the space at the first depth after a level of at least this many states per part (every part must use the same)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: leasecheck explore [--holders N] [--faults LIST] [--max-faults K] [--adversary A] [--semantics S] [--depth D] [--strategy auto|bfs|dfs|pct] [--mutant NAME] [--out DIR] [--timeout D] [--max-memory SIZE] [--coverage [DIR]] [--shard I/N --part FILE] [--json]")
		fmt.Fprintln(stderr, "\nExplores every run of the simulator's machines within the bounds: every order of\nthe events due at one instant, where each fault strikes, the adversarial client's\nrequests, the messages' delays. With no flag that shapes the space (--holders,\n--faults, --max-faults, --adversary, --deviations, --loss, --semantics, --mutant)\nit explores the default plan, seven spaces one after another: every fault once\n(seed semantics); the adversarial client (seed); the adversary under fenced\nstorage; the adversary after an owner reuse under fenced storage; several\nwrites per grant with a reader and one fault; late answers (a delay past the\nrequest timeout); a handoff on the exact tick (no delay, no margin, clocks at\nopposite drift bounds).\n\nExit status: 0 no violation found (the report's \"complete\" says whether that is\na proof of the bounded space; PCT never is), 1 a violation (its shortest path\nsaved under --out; replay it with leasecheck repro FILE), 2 bad usage or a bug in\nleasecheck (the explorer's monitor and its full judges disagreed on a path), 3 a\nbudget (--timeout, --max-memory, --max-states) ran out first.")
		fs.PrintDefaults()
	}
	return fs, f
}

// exploreJob is what the command line asks to search: one space (sc, for a
// mutant adapted to it) or a plan of spaces, with the search's options.
type exploreJob struct {
	sc     *scenario.Scenario
	o      explore.Options
	mut    *mutants.Mutant
	plan   bool // search planSpaces, not sc
	spaces []explore.Bounds
}

// job checks the flags and builds the search they ask for; ok is false
// when it printed why not (or printed the plan) and the command exits
// with code.
func (f *exploreFlags) job(set map[string]bool, stdout, stderr io.Writer) (j *exploreJob, code int, ok bool) {
	usage := func(format string, a ...any) (*exploreJob, int, bool) {
		fmt.Fprintf(stderr, "leasecheck explore: "+format+"\n", a...)
		return nil, exitUsage, false
	}
	kinds, err := faults.ParseKinds(f.faultList)
	if err != nil {
		return usage("%v", err)
	}
	if f.stagger < 0 {
		return usage("--stagger must be >= 0")
	}
	if f.holders < 1 || f.depth < 1 || f.maxFaults < 0 || f.deviations < 0 || f.maxStates < 0 || f.runs < 1 || f.pctDepth < 1 {
		return usage("--holders, --depth, --runs and --pct-depth must be >= 1; --max-faults, --deviations and --max-states >= 0")
	}
	st := explore.Strategy(f.strategy)
	if !slices.Contains([]explore.Strategy{explore.Auto, explore.BFS, explore.DFS, explore.PCT}, st) {
		return usage("unknown strategy %q (auto, bfs, dfs, pct)", f.strategy)
	}
	b := explore.Bounds{Holders: f.holders, Faults: kinds, MaxFaults: f.maxFaults, Deviations: f.deviations, Loss: f.loss, Semantics: f.semantics, Stagger: f.stagger}
	if f.stagger == 0 {
		b.Stagger = -1 // Bounds' "together"; its 0 is the default
	}
	j = &exploreJob{o: explore.Options{Judges: explorejudge.Judges{}, Strategy: st, MaxDepth: f.depth, MaxStates: f.maxStates, Timeout: f.timeout, NoHash: f.noHash, NoPOR: f.noPOR,
		Runs: f.runs, Depth: f.pctDepth, Seed: f.seed, Workers: f.workers, Symmetry: f.symmetry}}
	if f.workers < 1 {
		return usage("--workers must be >= 1")
	}
	if f.maxMem.n > 0 {
		j.o.MaxMemory = f.maxMem.n
	}
	// The plan (--plan: explore.DefaultPlan unless it names a file) unless
	// a flag shapes one space.
	j.plan = f.mutantName == "" && !set["holders"] && !set["faults"] && !set["max-faults"] && !set["adversary"] &&
		!set["deviations"] && !set["loss"] && !set["semantics"] && !set["stagger"]
	if set["plan"] && !j.plan {
		return usage("--plan searches its own spaces: drop --mutant, --holders, --faults, --max-faults, --adversary, --deviations, --loss, --semantics and --stagger, or --plan")
	}
	j.spaces = explore.DefaultPlan()
	if f.plan != "default" {
		if j.spaces, err = explore.LoadPlan(f.plan); err != nil {
			return usage("--plan %v", err)
		}
	}
	if f.printPlan {
		if err := explore.WritePlan(stdout, j.spaces); err != nil {
			return usage("%v", err)
		}
		return nil, exitOK, false
	}
	adversary := f.adversary
	if f.mutantName != "" {
		if j.mut = mutants.ByName(f.mutantName); j.mut == nil {
			return usage("unknown mutant %q (known: %s)", f.mutantName, strings.Join(mutants.Names(), ", "))
		}
		b, adversary = mutantBounds(j.mut, b, adversary, set)
		j.o.Sim = sim.Planted(j.mut)
		j.o.Implementation = j.mut.Implementation()
	}
	if adversary < 0 {
		return usage("--adversary must be >= 0")
	}
	b.Adversary = adversary
	if b.Semantics != "" && b.Semantics != "seed" && b.Semantics != "fenced-storage" {
		return usage("unknown semantics %q (seed, fenced-storage)", b.Semantics)
	}
	j.sc = explore.Space(b)
	if j.mut != nil {
		j.mut.AdaptSpace(j.sc)
	}
	return j, 0, true
}

// mutantBounds are the mutant's own bounds, but for what the command line
// set (b, adversary).
func mutantBounds(mut *mutants.Mutant, b explore.Bounds, adversary int, set map[string]bool) (explore.Bounds, int) {
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
		adversary = mb.Adversary
	}
	return mb, adversary
}

// runShard explores one part (--shard) of the job's space or plan.
func (f *exploreFlags) runShard(j *exploreJob, set map[string]bool, stdout, stderr io.Writer) int {
	if !set["strategy"] {
		j.o.Strategy = explore.BFS // a part is breadth-first (explore.ExploreShard)
	}
	if f.coverDir != "" {
		fmt.Fprintln(stderr, "leasecheck explore: --coverage measures a whole exploration, not a part (--shard): run it unsharded")
		return exitUsage
	}
	if f.pairs {
		fmt.Fprintln(stderr, "leasecheck explore: --pairs counts a whole exploration's pairs, not a part's (--shard): run it unsharded")
		return exitUsage
	}
	sh, err := campaign.ParseShard(f.shard)
	if err != nil || sh.N < 1 {
		fmt.Fprintf(stderr, "leasecheck explore: --shard %q: want I/N with 1 <= I <= N\n", f.shard)
		return exitUsage
	}
	spaces := []*scenario.Scenario{j.sc}
	if j.plan {
		spaces = spaces[:0]
		for _, b := range j.spaces {
			spaces = append(spaces, explore.Space(b))
		}
	}
	file := f.partFile
	if file == "" {
		file = fmt.Sprintf("explore-part-%d-of-%d.json", sh.I, sh.N)
	}
	return runExploreShard(spaces, j.o, sh, f.shardWidth, file, stdout, stderr)
}

// search runs the job, minimizes a counterexample (unless noMin) and saves
// it under dir.
func (j *exploreJob) search(noMin bool, dir string) (*explore.Report, error) {
	var rep *explore.Report
	var err error
	sc := j.sc
	if j.plan {
		rep, sc, err = explore.ExplorePlan(j.spaces, j.o)
	} else {
		rep, err = explore.Explore(sc, j.o)
	}
	if err != nil {
		return nil, err
	}
	// The verdict is the search's, before Minimize replaces the
	// counterexample by one of a smaller world: what a sharded
	// exploration's merge reproduces.
	rep.Verdict = explore.VerdictOf(rep)
	if rep.Counterexample != nil && !noMin {
		reached := rep.Pairs
		rep = explore.Minimize(sc, j.o, rep)
		rep.Pairs = reached
	}
	if cx := rep.Counterexample; cx != nil {
		mname := ""
		if j.mut != nil {
			mname = j.mut.Name
		}
		file, err := saveCounterexample(dir, counterexampleName(foundBy(rep), mname, cx.Property), cx.Scenario, cx.Property)
		if err != nil {
			return nil, err
		}
		cx.File = file
	}
	rep.Reductions = rep.ReductionsOn()
	return rep, nil
}

// exploreExit says how the search ended and returns its exit status.
func exploreExit(rep *explore.Report, o explore.Options, stderr io.Writer) int {
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
	if pc := r.PairCoverage; pc != nil {
		fmt.Fprintf(w, "%-22s %s\n", "pairs", pc.Summary())
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
		if pc := r.PairCoverage; pc != nil {
			fmt.Fprintf(w, "  (complete over %d of the %d pairs of the model", pc.Reached, pc.Required)
			if n := len(pc.Unreached); n > 0 {
				fmt.Fprintf(w, "; %d never reached, --pairs lists them", n)
			}
			fmt.Fprintln(w, ")")
		}
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

// coverageFlag is explore's --coverage. Alone it asks for the pair
// coverage table, as --pairs and as run's --coverage do; given a directory
// (--coverage DIR, --coverage=DIR: its meaning before the pair table
// existed, kept) it asks for Go's statement coverage of the explored
// machines, measured there. It is a boolean flag so that it may stand
// alone; coverageArgs joins a directory given as the next argument.
type coverageFlag struct{ f *exploreFlags }

func (c coverageFlag) IsBoolFlag() bool { return true }

func (c coverageFlag) String() string {
	if c.f == nil {
		return ""
	}
	return c.f.coverDir
}

func (c coverageFlag) Set(v string) error {
	switch v {
	case "true":
		c.f.pairs = true
	case "false":
	default:
		c.f.coverDir = v
	}
	return nil
}

// coverageArgs rewrites "--coverage DIR" as "--coverage=DIR": a boolean
// flag takes no separate value, and explore takes no argument but flags,
// so a word that follows --coverage and is no flag can only be its
// directory.
func coverageArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "-coverage" || a == "--coverage") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}
