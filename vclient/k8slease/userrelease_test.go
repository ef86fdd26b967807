package k8slease

import (
	"os"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/model"
)

// TestUserReleaseStory: a controller of a user's with ReleaseOnCancel —
// the package's elector through the user's door, its stories told from
// what ran (userNotes) — whose deposed leader clears the new leader's
// Lease under pauses: the saved story tells that release, with the
// user's own timing in its scenario section, and does not call the new
// leader's writes a zombie's.
func TestUserReleaseStory(t *testing.T) {
	cfg := SweepConfig{Name: "vclient:my-release", Client: &elector{Fenced: true, ReleaseOnCancel: true}, Fenced: true, Tokens: model.GrantTokens,
		Shutdowns: true, Profile: "pause", Timings: safeTimings(), Want: WantViolation, Seeds: 400, FailFast: true, MaxSaved: 1}
	r := Sweep(t, cfg)
	if r.Replayed != nil || len(r.Failures) == 0 {
		return
	}
	f := r.Failures[0]
	if f.Saved == nil {
		t.Fatalf("seed %d not saved: %v", f.Seed, f.SaveErr)
	}
	story, err := os.ReadFile(f.Saved.Story)
	if err != nil {
		t.Fatal(err)
	}
	s := string(story)
	for _, want := range []string{"## In Kubernetes terms", "`ReleaseOnCancel`", "`tryRelease`", "- timing: `LeaseDuration="} {
		if !strings.Contains(s, want) {
			t.Errorf("seed %d's story lacks %q:\n%s", f.Seed, want, s)
		}
	}
	for _, not := range []string{"a zombie write", "acquire backoff"} {
		if strings.Contains(s, not) {
			t.Errorf("seed %d's story tells %q:\n%s", f.Seed, not, s)
		}
	}
}
