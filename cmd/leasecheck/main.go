// Command leasecheck checks lease histories and runs lease protocols in a
// deterministic simulator. See doc.go for the subcommands.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/etcdmember"
)

// Exit statuses shared by every subcommand (docs/specification.md §4), computed one
// way by package campaign.
const (
	exitOK        = campaign.ExitOK        // every property holds
	exitViolation = campaign.ExitViolation // a property is violated
	exitUsage     = campaign.ExitUsage     // the input or the command line cannot be used
	exitUnknown   = campaign.ExitUnknown   // a search budget ran out before a verdict
)

// command is one subcommand. Each lives in its own file and registers itself
// in an init function, so subcommands can be added without touching this one.
type command struct {
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(name string, c command) { commands[name] = c }

// examples are the example lines `leasecheck help` and `COMMAND --help`
// print, one or more per command.
var examples = map[string][]string{
	"check":   {"leasecheck check history.jsonl", "leasecheck check --json --html out.html history.jsonl"},
	"run":     {"leasecheck run --seeds 20000 --json", "leasecheck run --mutant no-expiry --fail-fast --out failures/", "leasecheck run --seeds 100000000 --shard 3/1000 --json > part-3.json"},
	"repro":   {"leasecheck repro failures/reference-seed-22.scenario.json", "leasecheck repro 4612 --faults pause,crash --history h.jsonl --trace"},
	"merge":   {"leasecheck merge --out merged/ results/*/summary.json"},
	"mutants": {"leasecheck mutants", "leasecheck mutants --json"},
	"verify":  {"leasecheck verify --backend etcd", "leasecheck verify --backend redis://127.0.0.1:6379 --duration 20s --json"},
	"explore": {"leasecheck explore"},
	"version": {"leasecheck version"},
	"help":    {"leasecheck help run"},
}

func main() {
	// `leasecheck etcd-server ETCD-FLAGS` is the embedded etcd server's own
	// command line, hidden: the program of each member of an etcd37-cluster.
	etcdmember.Dispatch()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "leasecheck: missing command")
		fmt.Fprintln(stderr)
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) == 1 {
			usage(stdout)
			return exitOK
		}
		if len(args) > 2 {
			fmt.Fprintf(stderr, "leasecheck help: one command at a time, got %q\n", args[1:])
			return exitUsage
		}
		if _, ok := commands[args[1]]; !ok {
			fmt.Fprintf(stderr, "leasecheck help: unknown command %q\n\n", args[1])
			usage(stderr)
			return exitUsage
		}
		return help(args[1], stdin, stdout)
	case "-version", "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "leasecheck: unknown command %q\n\n", name)
		usage(stderr)
		return exitUsage
	}
	if wantsHelp(args[1:]) {
		return help(name, stdin, stdout)
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

// wantsHelp reports whether a command line asks for help (-h, -help,
// --help before any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// help prints a command's usage and flags, then its examples, on stdout:
// the command's own -h output (its flag set writes usage to the writer it
// is given for errors, here stdout).
func help(name string, stdin io.Reader, stdout io.Writer) int {
	commands[name].run([]string{"-h"}, stdin, stdout, stdout)
	if ex := examples[name]; len(ex) > 0 {
		fmt.Fprintln(stdout, "\nexamples:")
		for _, e := range ex {
			fmt.Fprintf(stdout, "  %s\n", e)
		}
	}
	return exitOK
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: leasecheck COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, commands[name].summary)
		if ex := examples[name]; len(ex) > 0 {
			fmt.Fprintf(w, "  %-8s   e.g. %s\n", "", ex[0])
		}
	}
	fmt.Fprintln(w, "\nRun 'leasecheck help COMMAND' (or 'leasecheck COMMAND --help') for a command's flags and examples.")
}

// argError reports a wrong number of positional arguments, saying what was
// wrong before the usage.
func argError(stderr io.Writer, name string, got []string, want string, usage func()) int {
	switch {
	case len(got) == 0:
		fmt.Fprintf(stderr, "leasecheck %s: missing %s\n", name, want)
	default:
		fmt.Fprintf(stderr, "leasecheck %s: want %s, got %d arguments: %s\n", name, want, len(got), strings.Join(quoteAll(got), " "))
	}
	if usage != nil {
		fmt.Fprintln(stderr)
		usage()
	}
	return exitUsage
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}
