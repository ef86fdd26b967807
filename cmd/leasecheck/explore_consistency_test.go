package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// oneCounterexample is every field of explore --json that names the
// violation found or its path.
type oneCounterexample struct {
	Violations     map[string]int `json:"violations"`
	Counterexample *struct {
		Property   string   `json:"property"`
		Properties []string `json:"properties"`
		Steps      int      `json:"steps"`
		File       string   `json:"file"`
	} `json:"counterexample"`
	Minimized *struct {
		FromSteps int `json:"from_steps"`
		ToSteps   int `json:"to_steps"`
	} `json:"minimized"`
	Verdict *struct {
		Result         string `json:"result"`
		Counterexample *struct {
			Property   string   `json:"property"`
			Properties []string `json:"properties"`
			Steps      int      `json:"steps"`
		} `json:"counterexample"`
	} `json:"verdict"`
}

// TestExploreOneCounterexample: whatever the strategy and the number of
// workers, every field of explore's report, the saved scenario, its replay
// and its story name the same violation, and the saved scenario is the
// reported path. trust-local-clock is the planted bug whose smaller worlds
// fail liveness-renewal first: a minimization that took any violation in
// trade reported exclusive-belief in its counts and verdict and saved
// liveness-renewal.
func TestExploreOneCounterexample(t *testing.T) {
	type config struct{ mutant, strategy, workers string }
	runs := []config{
		{"trust-local-clock", "auto", "1"},
		{"trust-local-clock", "bfs", "2"},
		{"trust-local-clock", "dfs", "1"},
		{"trust-local-clock", "pct", "1"},
	}
	if !testing.Short() {
		runs = append(runs, config{"trust-local-clock", "auto", "2"}, config{"write-after-failed-renew", "dfs", "1"}, config{"write-after-failed-renew", "bfs", "2"})
	}
	for _, c := range runs {
		t.Run(c.mutant+"/"+c.strategy+"/"+c.workers, func(t *testing.T) {
			dir := t.TempDir()
			var out, errb bytes.Buffer
			code := run([]string{"explore", "--json", "--mutant", c.mutant, "--strategy", c.strategy, "--workers", c.workers, "--out", dir}, nil, &out, &errb)
			if code != exitViolation {
				t.Fatalf("exit %d, want %d\n%s", code, exitViolation, errb.String())
			}
			var r oneCounterexample
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			checkOneCounterexample(t, r, errb.String())
		})
	}
}

func checkOneCounterexample(t *testing.T, r oneCounterexample, stderr string) {
	t.Helper()
	cx := r.Counterexample
	if cx == nil || len(cx.Properties) == 0 || cx.Property != cx.Properties[0] {
		t.Fatalf("counterexample %+v", cx)
	}
	var counted []string
	for _, p := range campaign.Properties() {
		if r.Violations[p] > 0 {
			counted = append(counted, p)
		}
	}
	if !slices.Equal(counted, cx.Properties) {
		t.Errorf("violations count %v, the counterexample violates %v", counted, cx.Properties)
	}
	if r.Verdict == nil || r.Verdict.Result != "violation" || r.Verdict.Counterexample == nil {
		t.Fatalf("verdict %+v", r.Verdict)
	}
	vc := r.Verdict.Counterexample
	if vc.Property != cx.Property || !slices.Equal(vc.Properties, cx.Properties) {
		t.Errorf("the verdict names %s %v, the counterexample %s %v", vc.Property, vc.Properties, cx.Property, cx.Properties)
	}
	// The verdict's path is the search's; a minimized counterexample says
	// which path it was shortened from.
	switch m := r.Minimized; {
	case m != nil && m.FromSteps != vc.Steps || m != nil && m.ToSteps != cx.Steps:
		t.Errorf("minimized from %d to %d steps, the verdict's path has %d, the counterexample's %d", m.FromSteps, m.ToSteps, vc.Steps, cx.Steps)
	case m == nil && vc.Steps != cx.Steps:
		t.Errorf("the verdict's path has %d steps, the counterexample's %d", vc.Steps, cx.Steps)
	}
	if !strings.HasSuffix(cx.File, "-"+campaign.FileName(cx.Property)+".scenario.json") || !strings.Contains(stderr, "FAIL "+cx.Property+" ") {
		t.Errorf("saved as %s for %s; stderr %q", cx.File, cx.Property, stderr)
	}
	sc, err := scenario.Load(cx.File)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sc.Expect, cx.Properties) || sc.Schedule == nil || sc.Schedule.Steps != cx.Steps {
		t.Errorf("saved scenario expects %v in %+v steps; the counterexample %v in %d", sc.Expect, sc.Schedule, cx.Properties, cx.Steps)
	}
	o, err := campaign.Replay(context.Background(), sc, campaign.JudgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Failed(), cx.Properties) {
		t.Errorf("the saved scenario replays to %v, the counterexample violates %v", o.Failed(), cx.Properties)
	}
	story, err := os.ReadFile(strings.TrimSuffix(cx.File, ".scenario.json") + ".md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(story)
	if !strings.Contains(s, "- caught by: `"+cx.Property+"`") {
		t.Errorf("the story does not lead with %s:\n%s", cx.Property, firstLines(s, 6))
	}
	happened := s[strings.Index(s, "## What happened"):]
	if i := strings.Index(happened, "`"); i < 0 || !strings.HasPrefix(happened[i+1:], cx.Property+"`") {
		t.Errorf("the story's first violation is not %s:\n%s", cx.Property, firstLines(happened, 4))
	}
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	return strings.Join(ls[:min(n, len(ls))], "\n")
}
