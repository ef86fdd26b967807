// Command classmatrix runs the benchmark matrix of the class (docs/benchmarks.md):
// per cell, the verdict, the time as a ratio to the replay floor measured
// in the same run, and the peak memory of this tree's checker, of each
// tagged release's (built from its source here), and of plain porcupine
// with the timed lease model. With -regress it applies the regression
// rules (classbench.Judge) and exits 1 when one is broken.
//
//	go run ./internal/classbench/classmatrix                 # the whole matrix (make bench-matrix)
//	go run ./internal/classbench/classmatrix -cells issue    # the rows the class was first measured by
//	go run ./internal/classbench/classmatrix -cells sample -regress -porcupine=false   # what CI runs
//	go run ./internal/classbench/classmatrix -cells issue -dump /tmp/cells   # the histories, to profile by hand
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/internal/classbench"
	"github.com/leasecheck/leasecheck/internal/classgen"
	"github.com/leasecheck/leasecheck/model"
)

func main() {
	cells := flag.String("cells", "matrix", "matrix, issue or sample")
	budget := flag.Duration("budget", 20*time.Second, "each checker's time budget on a cell")
	reps := flag.Int("reps", 1, "runs per program and cell; the fastest counts")
	porc := flag.Bool("porcupine", true, "time plain porcupine beside the checkers")
	releases := flag.Bool("releases", true, "time the tagged releases beside this tree")
	regress := flag.Bool("regress", false, "apply the regression rules; exit 1 when one is broken")
	match := flag.String("match", "", "only the cells whose name contains this")
	tags := flag.String("tags", "", "build this tree's checker with these build tags (leasecheck_slow: deliberately slowed)")
	dump := flag.String("dump", "", "write each selected cell's history to this directory (NAME.jsonl, / as _) and time nothing")
	flag.Parse()
	var list []classgen.Params
	switch *cells {
	case "matrix":
		list = classbench.Matrix()
	case "issue":
		list = classbench.IssueRows()
	case "sample":
		list = classbench.Sample()
	default:
		fmt.Fprintf(os.Stderr, "classmatrix: -cells %q: want matrix, issue or sample\n", *cells)
		os.Exit(2)
	}
	if *dump != "" {
		check(dumpCells(*dump, list, *match))
		return
	}
	root, err := classbench.ModuleRoot()
	check(err)
	dir, err := os.MkdirTemp("", "classmatrix-")
	check(err)
	defer os.RemoveAll(dir)
	var tagList []string
	if *tags != "" {
		tagList = strings.Split(*tags, ",")
	}
	now, err := classbench.BuildCurrent(root, dir, tagList...)
	check(err)
	cfg := classbench.Config{Now: now, Porcupine: *porc, Budget: *budget, Reps: *reps, Dir: dir}
	if *releases {
		for _, rel := range classbench.Releases {
			p, err := classbench.BuildRelease(root, dir, rel)
			check(err)
			cfg.Releases = append(cfg.Releases, p)
		}
	}
	var results []classbench.CellResult
	header := true
	for _, cell := range list {
		if *match != "" && !strings.Contains(cell.Name(), *match) {
			continue
		}
		r, err := classbench.RunCell(cfg, cell)
		check(err)
		if header {
			classbench.WriteTable(os.Stdout, []classbench.CellResult{r})
			header = false
		} else {
			classbench.WriteRow(os.Stdout, &r)
		}
		results = append(results, r)
	}
	fmt.Println()
	for _, line := range classbench.Worst(results) {
		fmt.Println("worst:", line)
	}
	if *regress {
		bad := classbench.Judge(results)
		for _, line := range bad {
			fmt.Println("REGRESSION:", line)
		}
		if len(bad) > 0 {
			os.Exit(1)
		}
		fmt.Printf("regression check: %d cells, each right, decided where a release decided, and within %gx (+%v) of the best release\n", len(results), classbench.Factor, classbench.Slack)
	}
}

// dumpCells writes the cells' histories, for profiling one by hand
// (classrun -cpuprofile) or for checking one with leasecheck check.
func dumpCells(dir string, list []classgen.Params, match string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, cell := range list {
		if match != "" && !strings.Contains(cell.Name(), match) {
			continue
		}
		h, _ := cell.History()
		path := filepath.Join(dir, strings.ReplaceAll(cell.Name(), "/", "_")+".jsonl")
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := model.WriteHistory(f, h); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Println(path)
	}
	return nil
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "classmatrix:", err)
		os.Exit(2)
	}
}
