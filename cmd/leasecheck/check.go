package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

func init() {
	register("check", command{
		summary: "check a recorded history (JSONL, format v1) for the lease properties",
		run:     runCheck,
	})
}

// parseInterspersed parses flags that may come before or after the
// positional arguments, as users type them (`check h.jsonl --json`).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// parseFlagsOnly parses a command that takes flags and no arguments. When
// it returns false, the command should exit with code (help: 0, else 2).
func parseFlagsOnly(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	rest, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK, false
	case err != nil:
		return exitUsage, false
	case len(rest) > 0:
		fmt.Fprintf(stderr, "leasecheck %s: unexpected arguments %q\n", fs.Name(), rest)
		return exitUsage, false
	}
	return exitOK, true
}

// checkReport is the --json output: DESIGN.md §4's fields, plus per-property
// verdicts and the key of each violation.
type checkReport struct {
	OK         bool                `json:"ok"`
	Ops        int                 `json:"ops"`
	Keys       int                 `json:"keys"`
	Undecided  bool                `json:"undecided"`
	Properties map[string]string   `json:"properties"`
	Violations []checker.Violation `json:"violations"`
}

func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the verdict as one JSON object")
	htmlPath := fs.String("html", "", "write porcupine's visualization of the (partial) linearization to `FILE`")
	timeout := fs.Duration("timeout", checker.DefaultTimeout, "budget for the linearizability search; past it the verdict is unknown (exit 3)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: leasecheck check [--json] [--html FILE] [--timeout D] FILE|-")
		fmt.Fprintln(stderr, "\nExit status: 0 every property holds, 1 a property is violated,\n2 the input cannot be used, 3 undecided within the budget.")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(files) != 1 {
		fs.Usage()
		return exitUsage
	}
	h, err := readHistoryArg(files[0], stdin)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck: %v\n", err)
		return exitUsage
	}
	opts := checker.Options{Timeout: *timeout}
	if *timeout <= 0 {
		opts.Timeout = -1 // no limit
	}
	res, err := checker.Check(context.Background(), h, opts)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck: %v\n", err)
		return exitUsage
	}
	if *htmlPath != "" {
		if err := writeHTMLFile(*htmlPath, h, res); err != nil {
			fmt.Fprintf(stderr, "leasecheck: %v\n", err)
			return exitUsage
		}
	}
	if *asJSON {
		rep := checkReport{OK: res.OK(), Ops: res.Ops, Keys: res.Keys, Undecided: res.Undecided(),
			Properties: map[string]string{}, Violations: res.Violations}
		if rep.Violations == nil {
			rep.Violations = []checker.Violation{}
		}
		for _, p := range res.Properties {
			rep.Properties[p.Name] = p.Verdict.String()
		}
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "leasecheck: %v\n", err)
			return exitUsage
		}
	} else {
		printCheckText(stdout, h, res)
	}
	return exitStatus(res)
}

func exitStatus(res *checker.Result) int {
	switch {
	case res.Violated():
		return exitViolation
	case res.Undecided():
		return exitUnknown
	}
	return exitOK
}

func readHistoryArg(path string, stdin io.Reader) (*model.History, error) {
	if path == "-" {
		return model.ReadHistory(stdin, "-")
	}
	return model.ReadHistoryFile(path)
}

func writeHTMLFile(path string, h *model.History, res *checker.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := checker.WriteHTML(f, h, res); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

func printCheckText(w io.Writer, h *model.History, res *checker.Result) {
	keys := "keys"
	if res.Keys == 1 {
		keys = "key"
	}
	fmt.Fprintf(w, "%s: %d operations, %d %s, %s semantics, clock uncertainty %d %s\n",
		h.Name, res.Ops, res.Keys, keys, h.Header.Semantics, h.Header.ClockUncertainty, h.Header.TimeUnit)
	for _, p := range res.Properties {
		fmt.Fprintf(w, "  %-24s %s\n", p.Name, p.Verdict)
	}
	for _, v := range res.Violations {
		lines := make([]string, len(v.Lines))
		for i, l := range v.Lines {
			lines[i] = fmt.Sprint(l)
		}
		fmt.Fprintf(w, "\nVIOLATION %s (key %q, lines %s)\n  %s\n", v.Property, v.Key, strings.Join(lines, ", "), v.Explanation)
	}
	switch {
	case res.Violated():
		fmt.Fprintf(w, "\nFAIL: %d violation(s)\n", len(res.Violations))
	case res.Undecided():
		fmt.Fprintf(w, "\nUNDECIDED: the linearizability search ran out of its budget (raise --timeout)\n")
	default:
		fmt.Fprintf(w, "\nOK: every property holds\n")
	}
}
