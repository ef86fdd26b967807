package campaign

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/leasecheck/leasecheck/internal/scenario"
)

// regressionDir is the documented folder where a saved scenario becomes a
// regression test (testdata/regressions/README.md).
const regressionDir = "../../testdata/regressions"

// TestRegressions replays every scenario in testdata/regressions/ against
// the implementation it records and asserts that exactly the properties of
// its expect are violated (none, when it expects none).
func TestRegressions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(regressionDir, "*.scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scenarios in %s: the folder's promise is untested", regressionDir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			o, err := Replay(context.Background(), sc, JudgeOptions{Budget: DetectCheckBudget})
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckExpect(o); err != nil {
				t.Errorf("%s (against %s): %v\nreplay: leasecheck repro %s", f, o.Scenario.Implementation, err, f)
			}
		})
	}
}
