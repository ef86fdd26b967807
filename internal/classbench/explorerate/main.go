// Command explorerate times `leasecheck explore` on one core — this tree's
// build beside each tagged release's (built here from its source) in the
// same run, alternating, best of -reps — and prints distinct states per
// second per core and the ratio to the baseline release. The floor set for
// the explorer is 4× the rate of v0.3.0, the release it was first measured
// on (docs/explore.md); the row says how far this tree is from it. It is `make bench-explore`; no
// pass/fail: these machines are too noisy for timings in tests.
//
//	go run ./internal/classbench/explorerate [-reps 3] [-baseline v0.3.0] [-releases v0.3.0,v0.4.0] [explore flags...]
//
// Flags after the program's own are passed to every explore run (default:
// none, the default plan).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/leasecheck/leasecheck/internal/classbench"
)

type program struct {
	name, path string
}

type row struct {
	distinct int64
	best     time.Duration
	peak     int64
}

func main() {
	reps := flag.Int("reps", 3, "runs of each program (alternating); the best is kept")
	baseline := flag.String("baseline", "v0.3.0", "the release the ratio is taken to")
	releases := flag.String("releases", "v0.3.0,v0.4.0", "tagged releases to time beside this tree (classbench.Releases)")
	flag.Parse()
	args := append([]string{"explore", "--workers", "1", "--json"}, flag.Args()...)
	if err := run(*reps, *baseline, strings.Split(*releases, ","), args); err != nil {
		fmt.Fprintln(os.Stderr, "explorerate:", err)
		os.Exit(2)
	}
}

func run(reps int, baseline string, releases, args []string) error {
	root, err := classbench.ModuleRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "explorerate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	progs := []program{}
	for _, tag := range releases {
		rel, ok := release(tag)
		if !ok {
			return fmt.Errorf("%s is not among classbench.Releases", tag)
		}
		src, err := rel.Tree(root, dir)
		if err != nil {
			return err
		}
		bin := filepath.Join(dir, "leasecheck-"+tag)
		if err := build(src, bin); err != nil {
			return fmt.Errorf("building %s: %v", tag, err)
		}
		progs = append(progs, program{tag, bin})
	}
	now := filepath.Join(dir, "leasecheck-now")
	if err := build(root, now); err != nil {
		return fmt.Errorf("building this tree: %v", err)
	}
	progs = append(progs, program{"now", now})

	rows := make([]row, len(progs))
	for r := 0; r < reps; r++ {
		for i, p := range progs {
			d, n, peak, err := once(p.path, args)
			if err != nil {
				return fmt.Errorf("%s: %v", p.name, err)
			}
			if rows[i].best == 0 || d < rows[i].best {
				rows[i].best = d
			}
			rows[i].distinct, rows[i].peak = n, max(rows[i].peak, peak)
		}
	}
	var base float64
	for i, p := range progs {
		if p.name == baseline {
			base = rate(rows[i])
		}
	}
	space := strings.Join(args[4:], " ")
	if space == "" {
		space = "(the default plan)"
	}
	fmt.Printf("explore %s on one core (GOMAXPROCS=1, --workers 1), best of %d\n", space, reps)
	ratioHead := "ratio to " + baseline
	if baseline == "v0.3.0" {
		ratioHead += " (floor: 4x)"
	}
	fmt.Printf("%-8s %12s %9s %14s %10s %s\n", "program", "distinct", "wall", "states/s/core", "peak RSS MiB", ratioHead)
	for i, p := range progs {
		ratio := "-"
		if base > 0 {
			ratio = fmt.Sprintf("%.2fx", rate(rows[i])/base)
		}
		fmt.Printf("%-8s %12d %9s %14.0f %10d %s\n", p.name, rows[i].distinct, rows[i].best.Round(10*time.Millisecond), rate(rows[i]), rows[i].peak>>20, ratio)
	}
	return nil
}

func rate(r row) float64 { return float64(r.distinct) / r.best.Seconds() }

func release(tag string) (classbench.Release, bool) {
	for _, r := range classbench.Releases {
		if r.Tag == tag {
			return r, true
		}
	}
	return classbench.Release{}, false
}

func build(src, bin string) error {
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/leasecheck")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// once runs one exploration on one core and returns its wall time, its
// distinct states (as its report gives them) and its peak resident memory.
func once(bin string, args []string) (time.Duration, int64, int64, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	start := time.Now()
	out, err := cmd.Output()
	d := time.Since(start)
	if err != nil { // exit 0 only: a violation (1) or a spent budget (3) is no rate
		return 0, 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	var r struct {
		Distinct int64 `json:"distinct_states"`
		Complete bool  `json:"complete"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, 0, 0, fmt.Errorf("reading its report: %v", err)
	}
	if !r.Complete {
		return 0, 0, 0, fmt.Errorf("the exploration did not complete")
	}
	var peak int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss << 10 // KiB on Linux
	}
	return d, r.Distinct, peak, nil
}
