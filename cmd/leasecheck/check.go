package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/report"
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

// checkReport is the --json output: docs/specification.md §4's fields, plus per-property
// verdicts, the key of each violation, and why a verdict is unknown.
type checkReport struct {
	OK         bool                `json:"ok"`
	Ops        int                 `json:"ops"`
	Keys       int                 `json:"keys"`
	Undecided  bool                `json:"undecided"`
	Properties map[string]string   `json:"properties"`
	Violations []checker.Violation `json:"violations"`
	Reason     string              `json:"reason,omitempty"`
	// Warnings are lines a person should look at: unknown fields, refusals
	// that read like timeouts (check_warn.go). Always present.
	Warnings []checkWarning `json:"warnings"`
}

// checkInputError is --json's output for input that cannot be used (exit
// 2): the same file, line and reason as the message on standard error, so
// a script that parses the JSON learns why.
type checkInputError struct {
	OK       bool           `json:"ok"`
	Error    inputError     `json:"error"`
	Warnings []checkWarning `json:"warnings"`
}

type inputError struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

// parseSize reads a byte count: an integer with an optional unit (B, KiB,
// MiB, GiB, or K, M, G for the same), or "none" for no limit.
func parseSize(s string) (int64, error) {
	if s == "none" {
		return -1, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = rest, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("want a size such as 512MiB, 2GiB or none")
	}
	return n * mult, nil
}

// sizeFlag is --max-memory.
type sizeFlag struct{ n int64 }

func (f *sizeFlag) String() string {
	if f.n < 0 {
		return "none"
	}
	return strconv.FormatInt(f.n>>20, 10) + "MiB"
}

func (f *sizeFlag) Set(s string) (err error) {
	f.n, err = parseSize(s)
	return err
}

func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the verdict as one JSON object")
	htmlPath := fs.String("html", "", "write the lease timeline (one self-contained page: processes, terms, faults, every violation with its story) to `FILE`")
	porcPath := fs.String("porcupine", "", "also write porcupine's view of the (partial) linearization to `FILE` (secondary; small histories: its layout search is budgeted)")
	timeout := fs.Duration("timeout", checker.DefaultTimeout, "time budget for the whole check (reading, invariants, search); past it the verdict is unknown (exit 3)")
	maxMem := &sizeFlag{n: checker.DefaultMaxMemory}
	fs.Var(maxMem, "max-memory", "memory budget (`SIZE`: 512MiB, 2GiB, none); past it the verdict is unknown (exit 3), never an out-of-memory kill")
	strict := fs.Bool("strict", false, "refuse fields the format does not know (exit 2) instead of warning about each once")
	stream := fs.Bool("stream", false, fmt.Sprintf("check the file without holding it, whatever its size (files over %d MiB always are)", checker.DefaultStreamAbove>>20))
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: leasecheck check [--json] [--html FILE] [--porcupine FILE] [--timeout D] [--max-memory SIZE] [--strict] [--stream] FILE|-")
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
		return argError(stderr, "check", files, "one history (a file, or - for standard input)", fs.Usage)
	}
	start := time.Now()
	opts := checker.Options{Timeout: *timeout, MaxMemory: maxMem.n}
	if *timeout <= 0 {
		opts.Timeout = -1 // no limit
	}
	var warnMu sync.Mutex
	warnings := []checkWarning{}
	opts.Read = model.ReadOptions{Strict: *strict, Warn: func(w model.Warning) {
		fmt.Fprintf(stderr, "leasecheck: warning: %s (--strict refuses it)\n", w)
		warnMu.Lock()
		warnings = append(warnings, checkWarning{File: w.Name, Lines: []int{w.Line}, Count: 1, Message: w.Message + " (--strict refuses it)"})
		warnMu.Unlock()
	}}
	encodeJSON := func(v any) int {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(stderr, "leasecheck: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	// inputFail reports input that cannot be used: exit 2, and with --json
	// the reason as JSON on standard output too.
	inputFail := func(err error) int {
		fmt.Fprintf(stderr, "leasecheck: %v\n", err)
		if *asJSON {
			ie := inputError{File: files[0], Reason: err.Error()}
			var pe *model.ParseError
			if errors.As(err, &pe) {
				ie = inputError{File: pe.Name, Line: pe.Line, Reason: pe.Reason}
			}
			encodeJSON(checkInputError{Error: ie, Warnings: warnings})
		}
		return exitUsage
	}
	switch {
	case *htmlPath != "" || *porcPath != "":
		opts.StreamAbove = math.MaxInt64 // the pages need every op
	case *stream:
		opts.StreamAbove = -1
	}
	if maxMem.n > 0 {
		// Let the collector work harder as the heap nears the budget; the
		// checker's own watchdog ends the check past it.
		debug.SetMemoryLimit(maxMem.n + 64<<20)
	}
	var res *checker.Result
	var h *model.History
	scan := &refusalScan{}
	if files[0] == "-" {
		res, h, err = checker.CheckReader(context.Background(), io.TeeReader(stdin, scan), "-", opts)
	} else {
		if f, err := os.Open(files[0]); err == nil { // else CheckFile says why
			io.Copy(scan, f)
			f.Close()
		}
		res, h, err = checker.CheckFile(context.Background(), files[0], opts)
	}
	if err != nil {
		return inputFail(err)
	}
	if w := scan.warning(files[0]); w != nil {
		fmt.Fprintf(stderr, "leasecheck: warning: %s\n", w)
		warnings = append(warnings, *w)
	}
	if *porcPath != "" {
		budget := 10 * time.Second
		if *timeout > 0 {
			budget = min(budget, *timeout-time.Since(start))
		}
		if err := writePorcupineFile(*porcPath, h, res, budget); err != nil {
			fmt.Fprintf(stderr, "leasecheck: %v\n", err)
			return exitUsage
		}
	}
	if *htmlPath != "" {
		in := report.Input{History: h, Check: res, Replay: "leasecheck check " + files[0], Secondary: relativeTo(*htmlPath, *porcPath)}
		if err := campaign.WriteFile(*htmlPath, func(w io.Writer) error { return report.WriteTimeline(w, in, report.Options{}) }); err != nil {
			fmt.Fprintf(stderr, "leasecheck: %v\n", err)
			return exitUsage
		}
	}
	if *asJSON {
		rep := checkReport{OK: res.OK(), Ops: res.Ops, Keys: res.Keys, Undecided: res.Undecided(),
			Properties: map[string]string{}, Violations: res.Violations, Reason: res.Reason, Warnings: warnings}
		if rep.Violations == nil {
			rep.Violations = []checker.Violation{}
		}
		for _, p := range res.Properties {
			rep.Properties[p.Name] = p.Verdict.String()
		}
		if code := encodeJSON(rep); code != exitOK {
			return code
		}
	} else {
		printCheckText(stdout, h, res)
	}
	return exitStatus(res)
}

func exitStatus(res *checker.Result) int { return campaign.Status(res.Violated(), res.Undecided()) }

// writePorcupineFile writes porcupine's view of a check, its layout search
// within budget.
func writePorcupineFile(path string, h *model.History, res *checker.Result, budget time.Duration) error {
	return campaign.WriteFile(path, func(w io.Writer) error { return checker.WriteHTMLWithin(w, h, res, budget) })
}

// relativeTo is target as a link from a page at page ("" when no target).
func relativeTo(page, target string) string {
	if target == "" {
		return ""
	}
	if rel, err := filepath.Rel(filepath.Dir(page), target); err == nil {
		return filepath.ToSlash(rel)
	}
	return target
}

func printCheckText(w io.Writer, h *model.History, res *checker.Result) {
	keys := "keys"
	if res.Keys == 1 {
		keys = "key"
	}
	late := ""
	if h.Header.ExpiryLateness > 0 {
		late = fmt.Sprintf(", expiry lateness %d %s", h.Header.ExpiryLateness, h.Header.TimeUnit)
	}
	fmt.Fprintf(w, "%s: %s, %d %s, %s semantics, clock uncertainty %d %s%s\n",
		h.Name, campaign.Count(int64(res.Ops), "operation", "operations"), res.Keys, keys, h.Header.Semantics, h.Header.ClockUncertainty, h.Header.TimeUnit, late)
	for _, p := range res.Properties {
		fmt.Fprintf(w, "  %-24s %s\n", p.Name, p.Verdict)
	}
	for _, v := range res.Violations {
		fmt.Fprintln(w)
		campaign.WriteViolation(w, campaign.FromChecker(v), nil)
	}
	switch {
	case res.Violated():
		fmt.Fprintf(w, "\nFAIL: %s\n", campaign.Count(int64(len(res.Violations)), "violation", "violations"))
	case res.Undecided():
		fmt.Fprintf(w, "\nUNDECIDED: %s (raise --timeout or --max-memory)\n", res.Reason)
	default:
		fmt.Fprintf(w, "\nOK: every property holds\n")
	}
}
