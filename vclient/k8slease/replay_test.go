package k8slease

import (
	"bytes"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/model"
)

var failuresFlag = flag.Int("failures", 0, "TestReplayRate: saved failures to replay per profile (0: 5; the issue's measure is 100)")

// TestReplayRate saves failures as a sweep does (shrunk, with their
// expectations) and replays each from its file: a replay counts when it
// violates exactly the saved properties and records the saved history
// byte for byte. Every one must, under pauses (the zombie write) and under
// every fault at once (All: lost requests, 503s, client-side timeouts);
// the rate is logged (-failures 100 for the measure; 2 with -short).
func TestReplayRate(t *testing.T) {
	n := *failuresFlag
	if n == 0 {
		n = 5
		if testing.Short() {
			n = 2 // the race detector's run: the harness raced, not the rate
		}
	}
	for _, p := range []Profile{"pause", "all"} {
		dir := t.TempDir()
		r := sweep(t, k8ssweep.Unfenced, p, nil, 50*n, func(c *campaign.Config) {
			c.Save.Dir, c.Save.Max = dir, n
			c.Save.Shrink.Budget = 60
			c.OnOutcome = nil
		})
		var saved []*campaign.Saved
		for _, f := range r.failures {
			if f.Saved != nil {
				saved = append(saved, f.Saved)
			}
		}
		if len(saved) < n {
			t.Fatalf("%s: %d failures saved, want %d", p, len(saved), n)
		}
		began := time.Now()
		same := 0
		for _, s := range saved[:n] {
			o, err := replayOwn(t, s.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(s.History)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := model.WriteHistory(&got, o.History); err != nil {
				t.Fatal(err)
			}
			if campaign.CheckExpect(o) == nil && bytes.Equal(got.Bytes(), want) {
				same++
			} else {
				t.Errorf("%s: %s does not replay", p, s.Scenario)
			}
		}
		t.Logf("%s: %d of %d saved failures replay exactly (%.0f%%), in %v", p, same, n, 100*float64(same)/float64(n), time.Since(began).Round(time.Millisecond))
	}
}
