package checker

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/model"
)

// Histories that once defeated the search. checker-hard-1 (197 ops, 170 of
// them unanswered but applied, carrying `at`) stayed undecided for over
// 100 s until applied-but-unanswered ops became ops to place with either
// outcome rather than optional effects. Each must be decided, correctly.
func TestRegressionHardHistories(t *testing.T) {
	files, err := filepath.Glob("../testdata/scenarios/checker-hard-*.history.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no checker-hard histories found (%v)", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h, err := model.ReadHistoryFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r := Check(context.Background(), h, Options{Timeout: time.Minute})
			if !r.OK() {
				t.Fatalf("a correct history from the reference implementation: verdicts %+v, violations %+v", r.Properties, r.Violations)
			}
		})
	}
}
