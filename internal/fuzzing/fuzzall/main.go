// Command fuzzall is `make fuzz`: it runs every fuzz target of the module
// (or those -run selects) in turn for -fuzztime each, with the fuzzer's
// minimization of a new input bounded to -minimize (go test's default is
// 60 s per input, during which a target executes nothing new: a target
// whose inputs are whole simulated runs spent most of its minute there),
// prints go test's output as it comes, and at the end a table of each
// target's executions, executions per second and the share of its time in
// which it executed anything. It exits 1 when a target failed or never
// executed, 2 on bad usage. Run it from the module root.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"text/tabwriter"

	"github.com/leasecheck/leasecheck/internal/fuzzing"
)

func main() {
	fuzztime := flag.String("fuzztime", "60s", "fuzz each target for `T` (a duration, or Nx executions)")
	minimize := flag.String("minimize", "10x", "minimize each new input for at most `T` (a duration, or Nx executions)")
	run := flag.String("run", "", "fuzz only the targets whose name matches `REGEXP`")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "fuzzall: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	sel, err := regexp.Compile(*run)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fuzzall: -run: %v\n", err)
		os.Exit(2)
	}
	all, err := fuzzing.Targets(".")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fuzzall: %v\n", err)
		os.Exit(2)
	}
	var targets []fuzzing.Target
	for _, t := range all {
		if sel.MatchString(t.Name) {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		fmt.Fprintf(os.Stderr, "fuzzall: no fuzz target matches %q (found %d)\n", *run, len(all))
		os.Exit(2)
	}
	type result struct {
		t     fuzzing.Target
		stats fuzzing.Stats
		err   error
	}
	var results []result
	for _, t := range targets {
		fmt.Printf("fuzzall: %s in %s for %s\n", t.Name, t.Package(), *fuzztime)
		cmd := exec.Command("go", "test", t.Package(), "-run", "^$", "-fuzz", "^"+t.Name+"$",
			"-fuzztime", *fuzztime, "-fuzzminimizetime", *minimize)
		out, err := cmd.StdoutPipe()
		if err != nil {
			fmt.Fprintf(os.Stderr, "fuzzall: %v\n", err)
			os.Exit(2)
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "fuzzall: %v\n", err)
			os.Exit(2)
		}
		var s fuzzing.Stats
		sc := bufio.NewScanner(io.TeeReader(out, os.Stdout))
		for sc.Scan() {
			s.Add(sc.Text())
		}
		err = cmd.Wait()
		if err == nil && s.Execs == 0 {
			err = fmt.Errorf("executed nothing")
		}
		results = append(results, result{t, s, err})
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\ttime\texecs\texecs/s\tmoving\tresult\t")
	failed := 0
	for _, r := range results {
		res := "ok"
		if r.err != nil {
			res = "FAIL: " + r.err.Error()
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.0f%%\t%s\t\n", r.t.Name, r.stats.Elapsed, r.stats.Execs, r.stats.Rate(), 100*r.stats.MovingShare(), res)
	}
	tw.Flush()
	fmt.Println("(moving: the share of the time in which the target executed new inputs; the rest went on its seed corpus's baseline, minimizing, or a stuck execution)")
	if failed > 0 {
		os.Exit(1)
	}
}
