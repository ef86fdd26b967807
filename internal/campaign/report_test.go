package campaign

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

var mutationReport = flag.Bool("report", false, "print the mutation report (make bench)")

// ReportBases is how many base seeds the report searches from.
const ReportBases = 20

// naiveDetect is the naive tester: the scenario generator with no faults
// and none of the mutant's tuning (random holders, work, timings and an
// ordinary lossy network), no shrinking, the same seed budget and the same
// judge. It reports the seeds to the first failure of m's property, or
// budget+1 when there was none.
func naiveDetect(m *mutants.Mutant, base uint64, budget int) (int, time.Duration) {
	start := time.Now()
	t := Mutant(m)
	for i := 0; i < budget; i++ {
		sc := scenario.FromSeed(base+uint64(i), scenario.Options{})
		o, err := Judge(context.Background(), t, sc, JudgeOptions{Budget: DetectCheckBudget})
		if err == nil && o.Fails(m.Property) {
			return i + 1, time.Since(start)
		}
	}
	return budget + 1, time.Since(start)
}

func median[T int | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestMutantReport prints, per mutant, the seeds and wall time to the first
// detection (median and max over ReportBases base seeds), the size of the
// shrunk counterexample in testdata, and the naive tester's seeds to
// detection with the ratio naive/ours. Run with -report (make bench).
func TestMutantReport(t *testing.T) {
	if !*mutationReport {
		t.Skip("run with -report (make bench)")
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mutant\tproperty\tcaught\tseeds med\tmax\ttime med\tmax\tshrunk proc/ops/faults\tref false alarms\tnaive caught\tnaive seeds med\tratio\t\n")
	for _, m := range mutants.All() {
		var seeds, naive []int
		var times []time.Duration
		caught, naiveCaught, falseAlarms := 0, 0, 0
		for i := range ReportBases {
			base := 1 + uint64(i)*mutants.DefaultBudget
			d, err := Detect(context.Background(), m, base, mutants.DefaultBudget, true)
			if err != nil {
				t.Fatal(err)
			}
			falseAlarms += len(d.RefFailed)
			if d.Caught() {
				caught++
				seeds = append(seeds, d.Seeds)
			} else {
				seeds = append(seeds, mutants.DefaultBudget+1)
			}
			times = append(times, d.Elapsed)
			n, _ := naiveDetect(m, base, mutants.DefaultBudget)
			if n <= mutants.DefaultBudget {
				naiveCaught++
			}
			naive = append(naive, n)
		}
		size := "-"
		if sc, err := scenario.Load(filepath.Join(counterexampleDir, m.Name+".scenario.json")); err == nil {
			if o, err := Replay(context.Background(), sc, JudgeOptions{Budget: DetectCheckBudget}); err == nil {
				sz := SizeOf(o)
				size = fmt.Sprintf("%d/%d/%d", sz.Processes, sz.Ops, sz.Faults)
			}
		}
		ours, theirs := median(seeds), median(naive)
		ratio := fmt.Sprintf("%.1fx", float64(theirs)/float64(ours))
		naiveMed := fmt.Sprint(theirs)
		if theirs > mutants.DefaultBudget {
			ratio, naiveMed = fmt.Sprintf(">%.0fx", float64(mutants.DefaultBudget)/float64(ours)), fmt.Sprintf(">%d", mutants.DefaultBudget)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%v\t%v\t%s\t%d\t%d/%d\t%s\t%s\t\n", m.Name, m.Property, caught, ReportBases,
			ours, slices.Max(seeds), median(times).Round(time.Microsecond), slices.Max(times).Round(time.Microsecond),
			size, falseAlarms, naiveCaught, ReportBases, naiveMed, ratio)
		if falseAlarms > 0 {
			t.Errorf("%s: the reference failed %d of the seeds searched", m.Name, falseAlarms)
		}
		if caught < ReportBases {
			t.Errorf("%s: caught from %d of %d base seeds", m.Name, caught, ReportBases)
		}
		if median(times) >= time.Second {
			t.Errorf("%s: median time to detection %v >= 1s", m.Name, median(times))
		}
	}
	tw.Flush()
	fmt.Printf("\nbudget %d seeds per search; base seeds 1, %d, ... (%d of them). Times are wall time to the first\n"+
		"detection (generate + simulate + check), excluding the reference, which is run and judged on every seed\n"+
		"searched (its failures are the false alarms). Naive: no faults, no tuning, same budget and judge; ratio =\n"+
		"naive median seeds / ours (\">\" when the naive tester found nothing within the budget).\n",
		mutants.DefaultBudget, 1+mutants.DefaultBudget, ReportBases)
}
