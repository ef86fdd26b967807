package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/mutants"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/runprop"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

func init() {
	register("repro", command{
		summary: "replay one simulated run exactly (a seed or a scenario file) and write its history",
		run:     runRepro,
	})
}

func runRepro(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("repro", flag.ContinueOnError)
	fs.SetOutput(stderr)
	histPath := fs.String("history", "", "write the history to `FILE` (default: standard output)")
	faultList := fs.String("faults", "all", "fault kinds, as given to run, when replaying a seed")
	scOut := fs.String("scenario", "", "also write the scenario as JSON to `FILE`")
	traceOut := fs.Bool("trace", false, "print the trace (faults, grants, beliefs) on standard error")
	budget := fs.Duration("timeout", defaultCheckBudget, "linearizability search budget")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: leasecheck repro SEED|SCENARIO.json [--history FILE] [--faults LIST] [--scenario FILE] [--trace]")
		fmt.Fprintln(stderr, "\nReplays one run exactly, writes its history (format v1) and checks it.\nExit status as for check: 0 holds, 1 violated, 2 bad input, 3 undecided.")
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
		fs.Usage()
		return exitUsage
	}
	sc, err := loadScenarioArg(pos[0], *faultList)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck repro: %v\n", err)
		return exitUsage
	}
	o, findings, err := reproRun(sc, *budget)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck repro: %v\n", err)
		return exitUsage
	}
	if *scOut != "" {
		if err := sc.Save(*scOut); err != nil {
			fmt.Fprintf(stderr, "leasecheck repro: %v\n", err)
			return exitUsage
		}
	}
	if *histPath != "" {
		err = writeHistoryFile(*histPath, o.sim.History)
	} else {
		err = model.WriteHistory(stdout, o.sim.History)
	}
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck repro: %v\n", err)
		return exitUsage
	}
	if *traceOut {
		for _, e := range o.sim.Trace {
			fmt.Fprintln(stderr, e)
		}
	}
	st := o.sim.Stats
	fmt.Fprintf(stderr, "seed %d: %d ops, %d events, %dms simulated, trace hash %016x\n", sc.Seed, st.Ops, st.Events, st.End, o.sim.Hash)
	printCheckText(stderr, o.sim.History, o.check)
	for _, f := range findings {
		fmt.Fprintf(stderr, "\nVIOLATION %s (lines %v, trace lines %v)\n  %s\n", f.Property, f.Lines, f.TraceLines, f.Explanation)
	}
	if len(findings) > 0 {
		return exitViolation
	}
	return exitStatus(o.check)
}

// reproRun replays sc against the implementation its file names
// (scenario.Implementation: the reference or a planted-bug mutant) and
// judges the run properties too, so an explored counterexample replays to
// the same violation with no other flag.
func reproRun(sc *scenario.Scenario, budget time.Duration) (*seedOutcome, []runprop.Finding, error) {
	opts, err := mutants.OptionsFor(sc.Implementation)
	if err != nil {
		return nil, nil, err
	}
	r, err := sim.Run(sc, opts)
	if err != nil {
		return nil, nil, err
	}
	if budget <= 0 {
		budget = -1 // the checker's "no limit"
	}
	res := checker.Check(context.Background(), r.History, checker.Options{Timeout: budget, Workers: 1})
	return &seedOutcome{seed: sc.Seed, sim: r, check: res}, runprop.Judge(r), nil
}

// loadScenarioArg reads a scenario file, or generates the scenario of a seed
// (a decimal number) with the given fault kinds.
func loadScenarioArg(arg, kindList string) (*scenario.Scenario, error) {
	if seed, err := strconv.ParseUint(arg, 10, 64); err == nil {
		if _, statErr := os.Stat(arg); statErr != nil {
			kinds, err := faults.ParseKinds(kindList)
			if err != nil {
				return nil, err
			}
			return scenario.FromSeed(seed, scenario.Options{Kinds: kinds}), nil
		}
	}
	if !strings.HasSuffix(arg, ".json") {
		if _, err := os.Stat(arg); err != nil {
			return nil, fmt.Errorf("%q is neither a seed nor a scenario file", arg)
		}
	}
	return scenario.Load(arg)
}
