package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/pairs"
	"github.com/leasecheck/leasecheck/model"
)

func init() {
	register("run", command{
		summary: "run the reference lease implementation (or a planted bug) in the simulator over many seeds, with faults",
		run:     runRun,
	})
}

// defaultCheckBudget bounds the linearizability search of one simulated
// history; past it the seed counts as undecided (exit 3 when nothing failed).
const defaultCheckBudget = campaign.DefaultBudget

// failureLines caps the failing seeds `run` describes on standard error;
// the rest are counted (and listed in --json's failed_seeds).
const failureLines = 10

func runRun(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 1000, "how many seeds to run (first, first+1, ...)")
	first := fs.Uint64("first", 1, "the first seed")
	one := fs.String("seed", "", "run only this seed (overrides --seeds and --first)")
	shardFlag := fs.String("shard", "", "run only the `I/N`-th of N disjoint parts of the seeds (1 <= I <= N); merge the parts' --json with leasecheck merge")
	faultList := fs.String("faults", "all", "comma-separated fault kinds to inject, \"all\" or \"none\" (kinds: "+kindList(faults.AllKinds)+")")
	mutantName := fs.String("mutant", "", "run planted-bug mutant `NAME` instead of the reference (see leasecheck mutants); without --faults, its own fault kinds")
	out := fs.String("out", "leasecheck-failures", "where failing seeds are saved: scenario, history, HTML page, story, trace")
	maxSaved := fs.Int("save", campaign.DefaultMaxSaved, "save (and shrink) the first `N` failing seeds, in seed order (-1: all, 0: none)")
	noShrink := fs.Bool("no-shrink", false, "save failing seeds as generated, not shrunk")
	shrinkBudget := fs.Int("shrink-budget", campaign.DefaultShrinkBudget, "candidate scenarios one shrink may run")
	failFast := fs.Bool("fail-fast", false, "stop at the first failing seed (in seed order)")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object (the bytes leasecheck merge reproduces)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "seeds run at once (the summary does not depend on it)")
	budget := fs.Duration("timeout", defaultCheckBudget, "linearizability search budget per history (0: no limit, which makes the summary independent of machine speed)")
	progress := fs.Bool("progress", true, "show a progress bar when stderr is a terminal")
	histDir := fs.String("histories", "", "also save every seed's history as `DIR`/seed-N.history.jsonl")
	pairTable := fs.Bool("coverage", false, "also print the pair coverage table: which pairs of fault and step in flight, two faults, fault and workload dimension the seeds reached, the never reached first (on stderr with --json)")
	fs.BoolVar(pairTable, "pairs", false, "the same as --coverage")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: leasecheck run [--seeds N [--first S] [--shard I/N] | --seed S] [--faults LIST] [--mutant NAME] [--out DIR] [--fail-fast] [--json]")
		fmt.Fprintln(fs.Output(), "\nRuns the reference coordinator, resource and holder (or one planted bug) in\nthe deterministic simulator, one scenario per seed, and judges every property\nof every run: the six history properties and the run properties. Failing\nseeds are shrunk and saved so that 'leasecheck repro FILE' replays them.\nExit status: 0 all hold, 1 a violation, 2 bad usage, 3 a history undecided\nwithin the budget.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlagsOnly(fs, args, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "leasecheck run: "+format+"\n", a...)
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	kinds, err := faults.ParseKinds(*faultList)
	if err != nil {
		return fail("%v", err)
	}
	target := campaign.Reference()
	if *mutantName != "" {
		m := mutants.ByName(*mutantName)
		if m == nil {
			return fail("unknown mutant %q (known: %s)", *mutantName, strings.Join(mutants.Names(), ", "))
		}
		target = campaign.Mutant(m)
		if !set["faults"] {
			kinds = m.Faults
		}
	}
	start, n := *first, *seeds
	if *one != "" {
		s, err := strconv.ParseUint(*one, 10, 64)
		if err != nil {
			return fail("bad --seed %q: want a number", *one)
		}
		start, n = s, 1
	}
	if n < 1 || *workers < 1 {
		return fail("--seeds and --workers must be >= 1")
	}
	var shard campaign.Shard
	if *shardFlag != "" {
		if shard, err = campaign.ParseShard(*shardFlag); err != nil {
			return fail("%v", err)
		}
		if shard.N > n {
			return fail("--shard %s: more shards than the %d seeds", shard, n)
		}
	}
	if *maxSaved == 0 {
		*out = ""
	}
	if *budget <= 0 {
		*budget = -1 // the checker's "no limit"
	}
	partFirst, partN := shard.Of(start, n)
	desc := fmt.Sprintf("seeds %d..%d", start, start+uint64(n)-1)
	if shard.N > 1 {
		desc += fmt.Sprintf(", shard %s: %d..%d", shard, partFirst, partFirst+uint64(partN)-1)
	}
	shownKinds := *faultList
	if target.Mutant() != nil && !set["faults"] {
		shownKinds = kindList(kinds) + " (the mutant's)"
	}
	fmt.Fprintf(stderr, "leasecheck run: %s, faults %s, %s\n", desc, shownKinds, target.Implementation())
	if m := target.Mutant(); m != nil {
		fmt.Fprintf(stderr, "leasecheck run: mutant %s (%s): %s\n", m.Name, m.Component, m.Failure)
	}

	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && *progress && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(partN, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("seeds"),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("seeds"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	if *histDir != "" {
		if err := os.MkdirAll(*histDir, 0o755); err != nil {
			return fail("%v", err)
		}
	}
	// The replay of a seed that was not saved: the same generator, so the
	// same fault kinds and the same mutant.
	replay := func(seed string) string {
		s := fmt.Sprintf("leasecheck repro %s --faults %s", seed, kindList(kinds))
		if m := target.Mutant(); m != nil {
			s += " --mutant " + m.Name
		}
		return s
	}
	failures := 0
	var reached pairs.Set
	cfg := campaign.Config{
		Target:   target,
		Scenario: target.Generator(kinds),
		Kinds:    kinds,
		First:    start, Seeds: n, Shard: shard,
		Workers:  *workers,
		Judge:    campaign.JudgeOptions{Budget: *budget},
		FailFast: *failFast,
		Save: campaign.SaveOptions{Dir: *out, Max: *maxSaved, NoShrink: *noShrink,
			Shrink: campaign.ShrinkOptions{Budget: *shrinkBudget}},
		OnOutcome: func(seed uint64, o *campaign.Outcome) error {
			if bar != nil {
				bar.Add(1)
			}
			if o.Sim != nil {
				reached.Union(&o.Sim.Pairs)
			}
			if *histDir != "" {
				return writeHistoryFile(filepath.Join(*histDir, fmt.Sprintf("seed-%d.history.jsonl", seed)), o.History)
			}
			return nil
		},
		OnFailure: func(f *campaign.Failure) {
			failures++
			if failures > failureLines {
				return
			}
			if bar != nil {
				bar.Clear()
			}
			writeFailure(stderr, f, replay(strconv.FormatUint(f.Seed, 10)))
		},
	}
	wall := time.Now()
	sum, err := campaign.Run(context.Background(), cfg)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return fail("%v", err)
	}
	if failures > failureLines {
		more := failures - failureLines
		fmt.Fprintf(stderr, "\n... and %d more failing %s, not described (the first %d are in --json's failed_seeds; replay one with: %s)\n",
			more, plural(more, "seed", "seeds"), campaign.MaxFailedSeeds, replay("SEED"))
	}
	if *asJSON {
		if err := sum.WriteJSON(stdout); err != nil {
			return fail("%v", err)
		}
	} else {
		fmt.Fprintln(stdout)
		sum.WriteText(stdout, time.Since(wall))
	}
	if *pairTable {
		w := stdout
		if *asJSON {
			w = stderr
		}
		fmt.Fprintln(w)
		pairs.Judge(reached, desc).Print(w)
	}
	return sum.Status()
}

// writeFailure tells one failing seed: what it violated, the violations of
// what was saved (shrunk) with their stories and lines, the files, and the
// one command that replays it.
func writeFailure(w io.Writer, f *campaign.Failure, seedReplay string) {
	fmt.Fprintf(w, "\nFAIL seed %d: %s\n", f.Seed, strings.Join(f.Outcome.Failed(), ", "))
	shown := f.Outcome
	if s := f.Saved; s != nil {
		shown = s.Outcome
	}
	trace := shown.TraceLines()
	for _, v := range shown.ByCause() {
		campaign.WriteViolation(indent{w}, v, trace)
	}
	switch s := f.Saved; {
	case s != nil:
		how := "saved as generated"
		if s.From != nil {
			how = fmt.Sprintf("shrunk from %s to %s", s.From, campaign.SizeOf(s.Outcome))
		}
		fmt.Fprintf(w, "  %s: %s (.history.jsonl .html .md .trace.txt and more beside it)\n", how, s.Scenario)
		fmt.Fprintf(w, "  replay: leasecheck repro %s\n", s.Scenario)
	case f.SaveErr != nil:
		fmt.Fprintf(w, "  not saved: %v\n  replay: %s\n", f.SaveErr, seedReplay)
	default:
		fmt.Fprintf(w, "  replay: %s\n", seedReplay)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// indent prefixes every line written with two spaces.
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	s := strings.TrimSuffix(string(p), "\n")
	_, err := io.WriteString(i.w, "  "+strings.ReplaceAll(s, "\n", "\n  ")+"\n")
	return len(p), err
}

func kindList(ks []faults.Kind) string {
	if len(ks) == 0 {
		return "none"
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

func writeHistoryFile(path string, h *model.History) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := model.WriteHistory(f, h); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
