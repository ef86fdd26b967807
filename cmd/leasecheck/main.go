// Command leasecheck checks lease histories and runs lease protocols in a
// deterministic simulator. See doc.go for the subcommands.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// Exit statuses shared by every subcommand (DESIGN.md §4).
const (
	exitOK        = 0 // every property holds
	exitViolation = 1 // a property is violated
	exitUsage     = 2 // the input or the command line cannot be used
	exitUnknown   = 3 // the search budget ran out before a verdict
)

// command is one subcommand. Each lives in its own file and registers itself
// in an init function, so subcommands can be added without touching this one.
type command struct {
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(name string, c command) { commands[name] = c }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "leasecheck: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return c.run(args[1:], stdin, stdout, stderr)
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
	}
	fmt.Fprintln(w, "\nRun 'leasecheck COMMAND -h' for a command's flags.")
}
