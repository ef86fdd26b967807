package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
)

func init() {
	register("repro", command{
		summary: "replay one simulated run exactly (a seed or a saved scenario file) and judge it; --history writes its history",
		run:     runRepro,
	})
}

func runRepro(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("repro", flag.ContinueOnError)
	fs.SetOutput(stderr)
	histPath := fs.String("history", "", "write the history to `FILE` (-: standard output, ahead of --json's report)")
	faultList := fs.String("faults", "all", "fault kinds, as given to run, when replaying a seed")
	mutantName := fs.String("mutant", "", "replay against planted-bug mutant `NAME` (a seed: as run --mutant generates it; a file: instead of the implementation it records)")
	scOut := fs.String("scenario", "", "also write the scenario as JSON to `FILE`")
	traceOut := fs.Bool("trace", false, "print the trace (faults, grants, beliefs) on standard error")
	asJSON := fs.Bool("json", false, "print the verdict as one JSON object on standard output")
	budget := fs.Duration("timeout", defaultCheckBudget, "linearizability search budget (0: no limit)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: leasecheck repro SEED|SCENARIO.json [--mutant NAME] [--faults LIST] [--history FILE] [--scenario FILE] [--trace] [--json]")
		fmt.Fprintln(fs.Output(), "\nReplays one run exactly and judges every property; --history writes its\nhistory (format v1). A saved scenario replays against the implementation it\nrecords (reference or mutant:NAME) with no other flag, and is compared with\nthe properties it expects to violate. Exit status: 0 holds, 1 violated, 2 bad\ninput, 3 undecided.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(pos) != 1 {
		return argError(stderr, "repro", pos, "one SEED or SCENARIO file", fs.Usage)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "leasecheck repro: %v\n", err)
		return exitUsage
	}
	if *histPath == "-" && *asJSON {
		return fail(errors.New("--history - and --json would both write standard output: write the history to a file"))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var m *mutants.Mutant
	if *mutantName != "" {
		if m = mutants.ByName(*mutantName); m == nil {
			return fail(fmt.Errorf("unknown mutant %q (known: %s)", *mutantName, strings.Join(mutants.Names(), ", ")))
		}
	}
	sc, fromFile, err := loadScenarioArg(pos[0], *faultList, set["faults"], m)
	if err != nil {
		return fail(err)
	}
	if fromFile && m != nil {
		if sc.Implementation != "mutant:"+m.Name {
			fmt.Fprintf(stderr, "leasecheck repro: replaying against mutant:%s instead of the file's %s\n", m.Name, orReference(sc.Implementation))
		}
		sc.Implementation = "mutant:" + m.Name
	}
	if fromFile && set["faults"] {
		fmt.Fprintln(stderr, "leasecheck repro: --faults applies to a seed; the file holds its own fault plan")
	}
	target, err := campaign.ParseTarget(sc.Implementation)
	if err != nil { // a real backend's scenario included: verify replays those
		return fail(fmt.Errorf("%s: %w", pos[0], err))
	}
	if *budget <= 0 {
		*budget = -1
	}
	o, err := campaign.Judge(context.Background(), target, sc, campaign.JudgeOptions{Budget: *budget})
	if err != nil {
		return fail(err)
	}
	if *scOut != "" {
		if err := sc.Save(*scOut); err != nil {
			return fail(err)
		}
	}
	// The history is written only where --history asks: ahead of the
	// report on standard output it buried the report.
	switch *histPath {
	case "":
	case "-":
		err = model.WriteHistory(stdout, o.History)
	default:
		err = writeHistoryFile(*histPath, o.History)
	}
	if err != nil {
		return fail(err)
	}
	if *traceOut {
		for _, l := range o.TraceLines() {
			fmt.Fprintln(stderr, l)
		}
	}
	st := o.Sim.Stats
	fmt.Fprintf(stderr, "seed %d against %s: %d operations, %d events, %dms simulated, trace hash %016x\n",
		sc.Seed, target.Implementation(), st.Ops, st.Events, st.End, o.Sim.Hash)
	campaign.WriteVerdicts(stderr, o)
	campaign.WriteOutcome(stderr, o)
	if fromFile {
		if err := campaign.CheckExpect(o); err != nil {
			fmt.Fprintf(stderr, "NOT AS SAVED: %v\n", err)
		} else if len(sc.Expect) > 0 {
			fmt.Fprintf(stderr, "as saved: the scenario expects exactly %s violated\n", strings.Join(sc.Expect, ", "))
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(campaign.ReportOf(o)); err != nil {
			return fail(err)
		}
	}
	return o.Status()
}

func orReference(impl string) string {
	if impl == "" {
		return campaign.ImplReference
	}
	return impl
}

// loadScenarioArg reads a scenario file, or generates the scenario of a seed
// (a decimal number) as run does: the same fault kinds (for a mutant
// without --faults, its own) and the same mutant.
func loadScenarioArg(arg, kindList string, kindsSet bool, m *mutants.Mutant) (sc *scenario.Scenario, fromFile bool, err error) {
	if seed, err := strconv.ParseUint(arg, 10, 64); err == nil {
		if _, statErr := os.Stat(arg); statErr != nil {
			kinds, err := faults.ParseKinds(kindList)
			if err != nil {
				return nil, false, err
			}
			t := campaign.Reference()
			if m != nil {
				t = campaign.Mutant(m)
				if !kindsSet {
					kinds = nil // the mutant's own
				}
			}
			return t.Generator(kinds)(seed), false, nil
		}
	}
	if !strings.HasSuffix(arg, ".json") {
		if _, err := os.Stat(arg); err != nil {
			return nil, false, fmt.Errorf("%q is neither a seed nor a scenario file", arg)
		}
	}
	sc, err = scenario.Load(arg)
	return sc, true, err
}
