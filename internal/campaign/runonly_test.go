package campaign

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// TestJudgeRunOnly: RunOnly judges a simulated run's run properties as the
// full judge does and leaves the history unchecked — a run property's
// violation is found, a history property's is not (the caller's monitor
// vouches for those) — and refuses an execution with no simulated run.
func TestJudgeRunOnly(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		mutant, property string
		runProperty      bool
	}{
		{"drift-ignored", "exclusive-belief", true},
		{"greedy-grant", checker.Linearizable, false},
	} {
		sc, err := scenario.Load(filepath.Join(counterexampleDir, c.mutant+".scenario.json"))
		if err != nil {
			t.Fatal(err)
		}
		full, err := Replay(ctx, sc, JudgeOptions{Budget: DetectCheckBudget})
		if err != nil {
			t.Fatal(err)
		}
		if !full.Fails(c.property) {
			t.Fatalf("%s: the full judge does not find %s (failed: %v)", c.mutant, c.property, full.Failed())
		}
		runOnly, err := JudgeExecution(ctx, full.Execution, JudgeOptions{RunOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := runOnly.Fails(c.property); got != c.runProperty {
			t.Errorf("%s: RunOnly fails %s = %v, want %v (failed: %v)", c.mutant, c.property, got, c.runProperty, runOnly.Failed())
		}
		var wantFailed []string
		for _, p := range full.Failed() {
			if IsRunProperty(p) {
				wantFailed = append(wantFailed, p)
			}
		}
		if !slices.Equal(runOnly.Failed(), wantFailed) {
			t.Errorf("%s: RunOnly failed %v, the full judge's run properties %v", c.mutant, runOnly.Failed(), wantFailed)
		}
		if runOnly.Undecided() {
			t.Errorf("%s: RunOnly is undecided with no history checked", c.mutant)
		}
		ex := *full.Execution
		ex.Sim = nil
		if _, err := JudgeExecution(ctx, &ex, JudgeOptions{RunOnly: true}); err == nil {
			t.Errorf("%s: RunOnly judged an execution with no simulated run", c.mutant)
		}
	}
}
