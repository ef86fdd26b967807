package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/mutants"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

func init() {
	register("run", command{
		summary: "run the reference lease implementation in the simulator over many seeds, with faults",
		run:     runRun,
	})
}

// defaultCheckBudget bounds the linearizability search of one simulated
// history; past it the seed counts as undecided (exit 3 when nothing failed).
const defaultCheckBudget = 20 * time.Second

// seedOutcome is what one seed produced: the run and the checker's verdict.
type seedOutcome struct {
	seed   uint64
	sim    *sim.Result
	check  *checker.Result
	unlive []string // liveness failures (clean scenarios only)
	// runFailed lists the run properties (mutants.RunProperties) that
	// failed; judged with --mutant only.
	runFailed []string
}

func (o *seedOutcome) failed() bool { return !o.check.OK() || len(o.runFailed) > 0 }

// runMutant runs sc against planted-bug mutant m and judges the checker's
// properties and the run properties (mutants.Judge).
func runMutant(sc *scenario.Scenario, m *mutants.Mutant, budget time.Duration) (*seedOutcome, error) {
	if budget <= 0 {
		budget = -1 // the checker's "no limit"
	}
	j, err := mutants.JudgeWithin(sc, m.Options(), budget)
	if err != nil {
		return nil, err
	}
	o := &seedOutcome{seed: sc.Seed, sim: j.Run, check: j.Check, unlive: j.Details}
	for _, p := range j.Failed {
		if slices.Contains(mutants.RunProperties, p) {
			o.runFailed = append(o.runFailed, p)
		}
	}
	return o, nil
}

// runOne generates, runs and checks one seed.
func runOne(sc *scenario.Scenario, budget time.Duration) (*seedOutcome, error) {
	r, err := sim.Run(sc, nil)
	if err != nil {
		return nil, err
	}
	if budget <= 0 {
		budget = -1 // the checker's "no limit"
	}
	res, err := checker.Check(context.Background(), r.History, checker.Options{Timeout: budget, Workers: 1})
	if err != nil {
		return nil, fmt.Errorf("seed %d: the simulator recorded a history the checker refuses: %w", sc.Seed, err)
	}
	return &seedOutcome{seed: sc.Seed, sim: r, check: res}, nil
}

// latency is a p50 / p99 over a sample, in simulated ms.
type latency struct {
	N   int   `json:"n"`
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

func percentiles(xs []int64) latency {
	if len(xs) == 0 {
		return latency{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p int) int64 { return s[min(len(s)-1, (len(s)*p+99)/100-1)] }
	return latency{N: len(s), P50: at(50), P99: at(99), Max: s[len(s)-1]}
}

// runSummary is `run --json`. Everything in it is a function of the seeds
// and fault kinds: two runs print the same bytes (wall time is only in the
// text table).
type runSummary struct {
	seedSummary
	Events         int64   `json:"events"`
	SimulatedMs    int64   `json:"simulated_ms"`
	Dropped        int64   `json:"messages_dropped"`
	Duplicated     int64   `json:"messages_duplicated"`
	Recovery       latency `json:"recovery_ms"`
	Unrecovered    int     `json:"unrecovered"`
	Handoff        latency `json:"handoff_ms"`
	DoubleBeliefMs int64   `json:"double_belief_ms"`
	DoubleBeliefN  int     `json:"double_belief_seeds"`
	Truncated      int     `json:"truncated"`
}

// seedSummary is what run and verify both report, in the same JSON fields
// (issue 5: verify "reports like run"): per-seed counts, every fault kind
// and every property listed even at zero.
type seedSummary struct {
	Seeds       int            `json:"seeds"`
	FirstSeed   uint64         `json:"first_seed"`
	Ops         int64          `json:"ops"`
	Faults      map[string]int `json:"faults"`
	Violations  map[string]int `json:"violations"`
	Undecided   int            `json:"undecided"`
	FailedSeeds []uint64       `json:"failed_seeds"`
}

func newSeedSummary(first uint64, kinds []faults.Kind) seedSummary {
	s := seedSummary{FirstSeed: first, Faults: map[string]int{}, Violations: map[string]int{}, FailedSeeds: []uint64{}}
	for _, k := range kinds {
		s.Faults[string(k)] = 0
	}
	for _, p := range checker.Properties() {
		s.Violations[p] = 0
	}
	return s
}

func newSummary(kinds []faults.Kind) *runSummary {
	return &runSummary{seedSummary: newSeedSummary(0, kinds)}
}

type sampleSet struct{ rec, hand []int64 }

func (s *runSummary) add(o *seedOutcome, ss *sampleSet) {
	st := &o.sim.Stats
	s.Seeds++
	s.Ops += int64(st.Ops)
	s.Events += st.Events
	s.SimulatedMs += st.End
	for k, n := range st.Faults {
		s.Faults[string(k)] += n
	}
	seen := map[string]bool{}
	for _, v := range o.check.Violations {
		if !seen[v.Property] { // count seeds, not counterexamples
			seen[v.Property] = true
			s.Violations[v.Property]++
		}
	}
	for _, p := range o.runFailed {
		s.Violations[p]++
	}
	if o.check.Undecided() {
		s.Undecided++
	}
	if o.failed() {
		s.FailedSeeds = append(s.FailedSeeds, o.seed)
	}
	s.Dropped += int64(st.Dropped)
	s.Duplicated += int64(st.Duplicated)
	ss.rec = append(ss.rec, st.Recoveries...)
	ss.hand = append(ss.hand, st.Handoffs...)
	s.Unrecovered += st.Unrecovered
	s.DoubleBeliefMs += st.DoubleBelief
	if st.DoubleBelief > 0 {
		s.DoubleBeliefN++
	}
	if st.Truncated {
		s.Truncated++
	}
}

func (s *seedSummary) violations() int {
	n := 0
	for _, v := range s.Violations {
		n += v
	}
	return n
}

func runRun(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 1000, "how many seeds to run (first, first+1, ...)")
	first := fs.Uint64("first", 1, "the first seed")
	one := fs.String("seed", "", "run only this seed (overrides --seeds)")
	faultList := fs.String("faults", "all", "comma-separated fault kinds to inject, \"all\" or \"none\" (kinds: "+kindList(faults.AllKinds)+")")
	out := fs.String("out", "leasecheck-failures", "where failing seeds are saved (scenario, history, HTML, trace)")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "seeds run at once")
	budget := fs.Duration("timeout", defaultCheckBudget, "linearizability search budget per history (0: no limit, which makes the summary independent of machine speed)")
	progress := fs.Bool("progress", true, "show a progress bar when stderr is a terminal")
	histDir := fs.String("histories", "", "also save every seed's history as `DIR`/seed-N.history.jsonl")
	mutantName := fs.String("mutant", "", "run planted-bug mutant `NAME` instead of the reference (see leasecheck mutants); without --faults, its own fault kinds")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: leasecheck run [--seeds N | --seed S] [--faults LIST] [--out DIR] [--json]")
		fmt.Fprintln(stderr, "\nRuns the reference coordinator and holder in the deterministic simulator, one\nscenario per seed, and checks every history. Exit status: 0 all hold, 1 a\nviolation, 2 bad usage, 3 a history undecided within the budget.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlagsOnly(fs, args, stderr); !ok {
		return code
	}
	kinds, err := faults.ParseKinds(*faultList)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck run: %v\n", err)
		return exitUsage
	}
	var mut *mutants.Mutant
	if *mutantName != "" {
		if mut = mutants.ByName(*mutantName); mut == nil {
			fmt.Fprintf(stderr, "leasecheck run: unknown mutant %q (known: %s)\n", *mutantName, strings.Join(mutants.Names(), ", "))
			return exitUsage
		}
		faultsSet := false
		fs.Visit(func(f *flag.Flag) { faultsSet = faultsSet || f.Name == "faults" })
		if !faultsSet {
			kinds = mut.Faults
			*faultList = kindList(kinds)
		}
	}
	start, n := *first, *seeds
	if *one != "" {
		s, err := strconv.ParseUint(*one, 10, 64)
		if err != nil {
			fmt.Fprintf(stderr, "leasecheck run: bad --seed %q\n", *one)
			return exitUsage
		}
		start, n = s, 1
	}
	if n < 1 || *workers < 1 {
		fmt.Fprintln(stderr, "leasecheck run: --seeds and --workers must be >= 1")
		return exitUsage
	}
	fmt.Fprintf(stderr, "leasecheck run: seeds %d..%d, faults %s\n", start, start+uint64(n)-1, *faultList)
	if mut != nil {
		fmt.Fprintf(stderr, "leasecheck run: mutant %s (%s): %s\n", mut.Name, mut.Component, mut.Failure)
	}

	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && *progress && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(n, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("seeds"),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("seeds"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}

	if *histDir != "" {
		if err := os.MkdirAll(*histDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "leasecheck run: %v\n", err)
			return exitUsage
		}
	}
	wall := time.Now()
	outcomes := make([]*seedOutcome, n)
	errs := make([]error, n)
	var next, mu = 0, sync.Mutex{}
	var wg sync.WaitGroup
	opts := scenario.Options{Kinds: kinds}
	if mut != nil {
		opts.MaxPerKind, opts.Clean = mut.PerKind, mut.Clean
	}
	for range min(*workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				sc := scenario.FromSeed(start+uint64(i), opts)
				var o *seedOutcome
				var err error
				if mut != nil {
					mut.Adapt(sc)
					o, err = runMutant(sc, mut, *budget)
				} else {
					o, err = runOne(sc, *budget)
				}
				if err == nil && *histDir != "" {
					err = writeHistoryFile(filepath.Join(*histDir, fmt.Sprintf("seed-%d.history.jsonl", o.seed)), o.sim.History)
				}
				if o != nil && !o.failed() {
					o.sim.History = nil // keep memory flat over many seeds
					o.sim.Trace = nil
				}
				outcomes[i], errs[i] = o, err
				if bar != nil {
					bar.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if bar != nil {
		bar.Finish()
	}
	elapsed := time.Since(wall)

	sum := newSummary(kinds)
	sum.FirstSeed = start
	if mut != nil {
		for _, p := range mutants.RunProperties {
			sum.Violations[p] = 0
		}
	}
	var ss sampleSet
	for i, o := range outcomes {
		if errs[i] != nil {
			fmt.Fprintf(stderr, "leasecheck run: seed %d: %v\n", start+uint64(i), errs[i])
			return exitUsage
		}
		sum.add(o, &ss)
		if o.failed() {
			if err := saveFailure(*out, o); err != nil {
				fmt.Fprintf(stderr, "leasecheck run: %v\n", err)
			}
		}
	}
	sum.Recovery, sum.Handoff = percentiles(ss.rec), percentiles(ss.hand)

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(sum); err != nil {
			fmt.Fprintf(stderr, "leasecheck run: %v\n", err)
			return exitUsage
		}
	} else {
		printSummary(stdout, sum, kinds, elapsed)
	}
	for _, s := range sum.FailedSeeds {
		if mut != nil {
			fmt.Fprintf(stderr, "FAIL seed %d; replay: leasecheck run --mutant %s --seed %d\n", s, mut.Name, s)
			continue
		}
		fmt.Fprintf(stderr, "FAIL seed %d; replay: leasecheck repro %s\n", s, filepath.Join(*out, fmt.Sprintf("seed-%d.scenario.json", s)))
	}
	switch {
	case sum.violations() > 0:
		return exitViolation
	case sum.Undecided > 0:
		return exitUnknown
	}
	return exitOK
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

func printSummary(w io.Writer, s *runSummary, kinds []faults.Kind, wall time.Duration) {
	simSec := float64(s.SimulatedMs) / 1000
	fmt.Fprintf(w, "%-26s %d (first %d)\n", "seeds", s.Seeds, s.FirstSeed)
	fmt.Fprintf(w, "%-26s %d\n", "operations", s.Ops)
	fmt.Fprintf(w, "%-26s %d\n", "simulated events", s.Events)
	fmt.Fprintf(w, "%-26s %.1fs\n", "simulated time", simSec)
	fmt.Fprintf(w, "%-26s %.2fs (%.0f simulated s per wall s)\n", "wall time", wall.Seconds(), simSec/max(wall.Seconds(), 1e-9))
	fmt.Fprintf(w, "%-26s %d dropped, %d duplicated\n", "messages", s.Dropped, s.Duplicated)
	fmt.Fprintln(w, "\nfaults injected")
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-24s %d\n", k, s.Faults[string(k)])
	}
	fmt.Fprintln(w, "\nseeds violating")
	for _, p := range checker.Properties() {
		fmt.Fprintf(w, "  %-24s %d\n", p, s.Violations[p])
	}
	for _, p := range mutants.RunProperties {
		if n, ok := s.Violations[p]; ok { // judged with --mutant only
			fmt.Fprintf(w, "  %-24s %d\n", p, n)
		}
	}
	fmt.Fprintf(w, "  %-24s %d\n", "(undecided)", s.Undecided)
	fmt.Fprintln(w, "\nliveness (simulated ms)")
	fmt.Fprintf(w, "  %-24s p50 %d  p99 %d  max %d  (n=%d, %d never recovered)\n", "recovery after a crash", s.Recovery.P50, s.Recovery.P99, s.Recovery.Max, s.Recovery.N, s.Unrecovered)
	fmt.Fprintf(w, "  %-24s p50 %d  p99 %d  max %d  (n=%d)\n", "handoff after a release", s.Handoff.P50, s.Handoff.P99, s.Handoff.Max, s.Handoff.N)
	fmt.Fprintf(w, "  %-24s %dms total, in %d seeds\n", "double-belief windows", s.DoubleBeliefMs, s.DoubleBeliefN)
	if s.Truncated > 0 {
		fmt.Fprintf(w, "  %-24s %d seeds hit the event bound\n", "truncated", s.Truncated)
	}
	if len(s.FailedSeeds) == 0 {
		fmt.Fprintf(w, "\nOK: every property held on every seed\n")
	} else {
		fmt.Fprintf(w, "\nFAIL: %d seed(s): %v\n", len(s.FailedSeeds), s.FailedSeeds)
	}
}

// saveFailure writes a failing seed's scenario, history, trace and HTML
// report under dir.
func saveFailure(dir string, o *seedOutcome) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, fmt.Sprintf("seed-%d", o.seed))
	if err := o.sim.Scenario.Save(base + ".scenario.json"); err != nil {
		return err
	}
	if err := writeHistoryFile(base+".history.jsonl", o.sim.History); err != nil {
		return err
	}
	if err := writeTrace(base+".trace.txt", o.sim); err != nil {
		return err
	}
	return writeHTMLFile(base+".html", o.sim.History, o.check)
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

func writeTrace(path string, r *sim.Result) error {
	var b strings.Builder
	for _, e := range r.Trace {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
