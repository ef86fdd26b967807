package k8slease

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
)

// TestZombieWrite: client-go's elector, unmodified, under pauses: the
// sweep finds a leader's write accepted after the Lease moved on, shrinks
// it to its smallest scenario, saves it as run saves one (scenario,
// history, timeline, story, replay command), tells its story in
// LeaseDuration / RenewDeadline / OnStoppedLeading terms, and the saved
// file replays to the same violations.
func TestZombieWrite(t *testing.T) {
	dir := k8ssweep.SaveDir(t)
	r := sweep(t, k8ssweep.Unfenced, "pause", Timings[:1], seeds(200), func(c *campaign.Config) {
		c.FailFast = true
		c.Save.Dir = dir
		c.Save.Max = 1
	})
	if len(r.failures) == 0 {
		t.Fatalf("no zombie write in %d seeds of pauses at the default timing", r.sum.Seeds)
	}
	f := r.failures[0]
	s := f.Saved
	if s == nil {
		t.Fatalf("seed %d not saved: %v", f.Seed, f.SaveErr)
	}
	o := s.Outcome
	t.Logf("seed %d: %s; shrunk from %s to %s (%s)", f.Seed, strings.Join(o.Failed(), ", "), s.From, campaign.SizeOf(o), s.Shrink)
	if !o.Fails(checker.SingleWriterPerFence) {
		t.Errorf("the saved failure violates %v, not %s", o.Failed(), checker.SingleWriterPerFence)
	}
	z := k8ssweep.FindZombieWrite(o)
	if z == nil || z.Paused == nil {
		t.Fatalf("the shrunk failure has no paused zombie write: %+v", z)
	}
	if z.Write.At <= z.Grant.At {
		t.Errorf("zombie write at t=%d not after the grant at t=%d", z.Write.At, z.Grant.At)
	}
	story, err := os.ReadFile(s.Story)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LeaseDuration", "RenewDeadline", "OnStoppedLeading", "IsLeader()", "zombie write", "-scenario " + s.Scenario} {
		if !strings.Contains(string(story), want) {
			t.Errorf("story lacks %q:\n%s", want, story)
		}
	}
	t.Logf("story %s:\n%s", s.Story, story)
	// Replayed from the saved file: the same violations, the same history.
	re, err := replayOwn(t, s.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := campaign.CheckExpect(re); err != nil {
		t.Fatalf("replay of %s: %v", s.Scenario, err)
	}
	if !slices.Equal(re.History.Ops, o.History.Ops) {
		t.Errorf("replay of %s recorded a different history", s.Scenario)
	}
}
