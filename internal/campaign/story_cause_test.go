package campaign

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

func replayed(t *testing.T, file string) *Outcome {
	t.Helper()
	sc, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	o, err := Replay(context.Background(), sc, JudgeOptions{Budget: DetectCheckBudget})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestStoryNamesDriftCause: a drift bug's story states the drift bound,
// each clock's drift and the margins (the numbers the bug turns on, in no
// operation of the history), and tells that the believing holder's belief
// outlived its lease at the coordinator while the other's ended in time.
func TestStoryNamesDriftCause(t *testing.T) {
	o := replayed(t, "../../testdata/scenarios/mutants/drift-ignored.scenario.json")
	var b bytes.Buffer
	WriteStory(&b, o, StoryInfo{Title: "drift-ignored", ScenarioFile: "x.scenario.json"})
	story := b.String()
	for _, want := range []string{
		"drift bound ±100000ppm (±6ms over a TTL of 60ms)",
		"coordinator +100000ppm (at the bound), h2 -100000ppm (at the bound), h3 +0ppm",
		"- h2: margin 6ms, renews every 61ms (1×TTL)",
		"- h3: margin 6ms, renews every 20ms (TTL/3), request timeout 20ms",
		"network: messages delayed 0-0ms",
		"h2 believed under fence 1 from t=0 until t=59; its last granted acquire was sent at t=0 and applied at t=0",
		"ran to about t=54: the belief outlived the lease by 5ms",
		// The history's at is the coordinator's fast clock: the story
		// gives the run's time, and the clock's reading beside it.
		"applied at t=56 (t=61 on the coordinator's clock), so the coordinator's lease (TTL 60ms on a clock drifting +100000ppm) ran to about t=110",
	} {
		if !strings.Contains(story, want) {
			t.Errorf("the story lacks %q:\n%s", want, story)
		}
	}
	// The holder that acquired after the expiry is cleared, not blamed.
	var h3 string
	for _, l := range strings.Split(story, "\n") {
		if strings.HasPrefix(l, "- h3 believed") {
			h3 = l
		}
	}
	if !strings.Contains(h3, "the belief ended") || strings.Contains(h3, "outlived") {
		t.Errorf("h3's deadline line: %q", h3)
	}
	// The same numbers are on the timeline page.
	var page bytes.Buffer
	if err := WritePage(&page, o, PageInfo{Title: "drift-ignored"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "h2 -100000ppm (at the bound)") {
		t.Error("the timeline page does not show the clocks' drifts")
	}
}

// TestCauseFirst: the fault on the holder whose write no order explains,
// reaching into the violation, is listed first, whichever order the plan
// gives; a fault after the violation goes last.
func TestCauseFirst(t *testing.T) {
	o := replayed(t, "../../testdata/scenarios/mutants/write-without-fence-check.scenario.json")
	plan := slices.Clone(o.Scenario.Faults)
	late := faults.Fault{Kind: faults.Pause, Target: "h1", At: 10_000, Duration: 5}
	rev := slices.Clone(plan)
	slices.Reverse(rev)
	for _, p := range []faults.Plan{plan, append(faults.Plan{late}, rev...)} {
		got := CauseFirst(o, p)
		if got[0].Kind != faults.Freeze || got[0].Target != "h1" {
			t.Errorf("from %v: %v first, want freeze(h1)", p, got[0])
		}
		if len(got) > len(plan) && got[len(got)-1] != late {
			t.Errorf("from %v: %v last, want the fault after the violation", p, got[len(got)-1])
		}
	}
}
