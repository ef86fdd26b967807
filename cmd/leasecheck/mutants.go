package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/leasecheck/leasecheck/internal/impl/mutants"
)

func init() {
	register("mutants", command{
		summary: "list the planted-bug mutants: name, failure mode, the article's sentence each breaks",
		run:     runMutants,
	})
}

// mutantJSON is one line of `mutants --json`.
type mutantJSON struct {
	*mutants.Mutant
	Replay string `json:"replay"`
}

func runMutants(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print a JSON array")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: leasecheck mutants [--json]")
		fmt.Fprintln(stderr, "\nLists the planted-bug variants of the reference coordinator, resource and\nholder. Run one with: leasecheck run --mutant NAME")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	all := mutants.All()
	if *asJSON {
		out := make([]mutantJSON, len(all))
		for i, m := range all {
			out[i] = mutantJSON{m, "leasecheck run --mutant " + m.Name}
		}
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "leasecheck mutants: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCOMPONENT\tCAUGHT BY\tFAULTS\tFAILURE MODE")
	for _, m := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, m.Component, m.Property, kindList(m.Faults), m.Failure)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	for _, m := range all {
		fmt.Fprintf(stdout, "%s\n  breaks: %s\n          %s\n", m.Name, m.Article, m.English)
		if m.Environment != "" {
			fmt.Fprintf(stdout, "  environment: %s\n", m.Environment)
		}
	}
	fmt.Fprintf(stdout, "\n%d mutants; run one with: leasecheck run --mutant NAME\n", len(all))
	return exitOK
}
