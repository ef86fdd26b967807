package campaign

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// TestRegressions replays testdata/regressions/ through this package's
// deprecated names, as internal/campaign's TestRegressions does through
// its own: stories saved before v0.13.0 print `go test ./campaign -run
// TestRegressions`, so that command keeps doing what it says while the old
// path lives; it also shows the wrappers hand through what they wrap.
func TestRegressions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "regressions", "*.scenario.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata/regressions: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			o, err := Replay(context.Background(), sc, JudgeOptions{Budget: -1})
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckExpect(o); err != nil {
				t.Errorf("%s (against %s): %v\nreplay: leasecheck repro %s", f, o.Scenario.Implementation, err, f)
			}
		})
	}
}

// A campaign through the old names: its summary is Run's, merged parts
// equal the whole, and Reference is the simulator's reference.
func TestRunThroughOldNames(t *testing.T) {
	tg := Reference()
	cfg := Config{Target: tg, Scenario: tg.Generator(faults.AllKinds), Kinds: faults.AllKinds, First: 1, Seeds: 6, Judge: JudgeOptions{Budget: -1}}
	whole, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Summary
	for i := 1; i <= 2; i++ {
		cfg.Shard, err = ParseShard([]string{"1/2", "2/2"}[i-1])
		if err != nil {
			t.Fatal(err)
		}
		s, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, s)
	}
	merged, err := Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Seeds != 6 || merged.Seeds != whole.Seeds || merged.Failed != whole.Failed || whole.Status() != 0 {
		t.Errorf("whole: %d seeds, %d failed, status %d; merged: %d seeds, %d failed", whole.Seeds, whole.Failed, whole.Status(), merged.Seeds, merged.Failed)
	}
}
