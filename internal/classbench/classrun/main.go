// Command classrun times one way of deciding one history file, for the
// benchmark matrix (internal/classbench): this tree's checker (-mode
// check), plain porcupine with the timed lease model (-mode porcupine), or
// the linear replay floor (-mode floor). It prints one JSON object: the
// verdict per property and the time spent reading and deciding, measured
// inside the process so that starting it costs nothing. A tagged release
// is timed by the same program written into its source tree
// (classbench.ReleaseMain), which reads and checks the same way.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/classbench"
	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

func main() {
	mode := flag.String("mode", "check", "check, porcupine or floor")
	timeout := flag.Duration("timeout", 10*time.Second, "the budget")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	repeat := flag.Int("repeat", 1, "decide the file this many times (a profile of a fast cell needs several); the time printed is the last run's")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: classrun [-mode check|porcupine|floor] [-timeout D] FILE")
		os.Exit(2)
	}
	path := flag.Arg(0)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	var out classbench.RunOutput
	for range max(*repeat, 1) {
		out = run(*mode, path, *timeout)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

// run decides the file once, the way mode says, and times it.
func run(mode, path string, timeout time.Duration) classbench.RunOutput {
	out := classbench.RunOutput{Verdicts: map[string]string{}}
	start := time.Now()
	switch mode {
	case "check":
		h, err := model.ReadHistoryFile(path)
		if err != nil {
			fail(err)
		}
		r, err := checker.Check(context.Background(), h, checker.Options{Timeout: timeout})
		if err != nil {
			fail(err)
		}
		for _, p := range r.Properties {
			out.Verdicts[p.Name] = p.Verdict.String()
		}
	case "porcupine":
		h, err := model.ReadHistoryFile(path)
		if err != nil {
			fail(err)
		}
		c := timed.Compile(h)
		pm := timed.PorcupineModel(c)
		res := porcupine.CheckOperationsTimeout(pm.ToModel(), timed.PorcupineOperations(c, nil), timeout)
		out.Verdicts[checker.Linearizable] = map[porcupine.CheckResult]string{porcupine.Ok: "holds", porcupine.Illegal: "violated", porcupine.Unknown: "unknown"}[res]
	case "floor":
		data, err := os.ReadFile(path)
		if err != nil {
			fail(err)
		}
		if _, err := classbench.ReplayFloor(data); err != nil {
			fail(err)
		}
	default:
		fail(fmt.Errorf("unknown mode %q", mode))
	}
	out.NS = time.Since(start).Nanoseconds()
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "classrun:", err)
	os.Exit(2)
}
