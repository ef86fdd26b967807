package campaign

import (
	"bytes"
	"strings"
	"testing"
)

// TestStoryTellsDomainNotes: a driver's notes (Execution.Notes) are told in
// the story's own sections — the section headed in its terms, each event
// with its time and history line, the cause, and its Keep in place of the
// simulator's regression directory — and without notes the story has no
// such section and keeps the simulator's.
func TestStoryTellsDomainNotes(t *testing.T) {
	o := replayed(t, "../../testdata/scenarios/mutants/drift-ignored.scenario.json")
	var plain bytes.Buffer
	WriteStory(&plain, o, StoryInfo{Title: "plain", ScenarioFile: "x.scenario.json"})
	if s := plain.String(); strings.Contains(s, " terms\n") || !strings.Contains(s, "`go test ./internal/campaign -run TestRegressions`") {
		t.Errorf("a story without notes has a notes section or lacks the simulator's regressions:\n%s", s)
	}

	calls := 0
	o.Execution.Notes = func(got *Outcome) *DomainNotes {
		calls++
		if got != o {
			t.Errorf("notes asked of another outcome")
		}
		return &DomainNotes{Heading: "Widget", Setup: "Two widgets ran.", Keep: "Keep it in widgets/testdata.",
			Events: []NoteEvent{{T: 40, What: "w1 stopped."}, {T: -1, What: "w2 never stopped."}, {T: 12, Line: 3, What: "w1 spun."}},
			Cause:  []string{"Widgets do not fence.", "A token would."}}
	}
	var b bytes.Buffer
	WriteStory(&b, o, StoryInfo{Title: "noted", ScenarioFile: "x.scenario.json"})
	s := b.String()
	if calls != 1 {
		t.Errorf("notes asked %d times, want once", calls)
	}
	want := "## In Widget terms\n\nTwo widgets ran.\n\n- t=12ms, line 3: w1 spun.\n- t=40ms: w1 stopped.\n- w2 never stopped.\n\nWidgets do not fence.\n\nA token would.\n\n## History"
	if !strings.Contains(s, want) {
		t.Errorf("the story lacks the notes' section %q:\n%s", want, s)
	}
	if !strings.Contains(s, "## Keep it as a regression test\n\nKeep it in widgets/testdata.\n") || strings.Contains(s, "go test ./internal/campaign -run TestRegressions") {
		t.Errorf("the story does not keep it the notes' way:\n%s", s)
	}
	if i, j := strings.Index(s, "## What happened"), strings.Index(s, "## In Widget terms"); i < 0 || j < i {
		t.Errorf("the notes' section is not after what happened")
	}

	var alone bytes.Buffer
	WriteDomainNotes(&alone, o.Execution.Notes(o))
	if got := alone.String(); !strings.HasPrefix(got, "\n## In Widget terms\n") || !strings.HasSuffix(got, "A token would.\n\nKeep it in widgets/testdata.\n") {
		t.Errorf("WriteDomainNotes wrote %q", got)
	}
}

// TestPageTellsTheDriversParameters: the page, like the story, shows the
// parameters a driver gave in its notes (a client of the user's timing),
// not the reference holder's it never ran; without them, the reference's.
func TestPageTellsTheDriversParameters(t *testing.T) {
	o := replayed(t, "../../testdata/scenarios/mutants/drift-ignored.scenario.json")
	page := func() string {
		var b bytes.Buffer
		if err := WritePage(&b, o, PageInfo{Title: "p"}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if s := page(); !strings.Contains(s, "renews every") {
		t.Fatalf("the reference's page lacks its holders' parameters")
	}
	o.Execution.Notes = func(*Outcome) *DomainNotes {
		return &DomainNotes{Heading: "Widget", Parameters: []string{"timing: widgets renew every 2 s"}}
	}
	s := page()
	if !strings.Contains(s, "timing: widgets renew every 2 s") || strings.Contains(s, "renews every") {
		t.Errorf("the page does not tell the driver's parameters alone")
	}
	var b bytes.Buffer
	WriteStory(&b, o, StoryInfo{Title: "p", ScenarioFile: "x.scenario.json"})
	if st := b.String(); !strings.Contains(st, "- timing: widgets renew every 2 s\n") || strings.Contains(st, "renews every") {
		t.Errorf("the story does not tell the driver's parameters alone:\n%s", st)
	}
}
