package campaign

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// DomainNotes are what a driver recognises in a failure, told in the terms
// its users know (a Kubernetes Lease's holderIdentity, LeaseDuration,
// OnStoppedLeading) rather than the model's: data that the story
// (WriteStory) renders in sections of its own, so that one writer tells
// every failure and a driver writes no Markdown of its own. A driver hands
// them over through Execution.Notes.
type DomainNotes struct {
	// Heading names the terms: the section is headed "In <Heading> terms".
	Heading string
	// Setup says what ran, in those terms.
	Setup string
	// Parameters, when set, are the lines the story's scenario section
	// lists for the run's configuration instead of the reference holder's
	// (its margin, renewal interval and acquire backoff, which a client of
	// its own never had): the client's own timing and settings.
	Parameters []string
	// Events are what happened. The story tells them in time order (those
	// at no one instant last, each group in the order given), so a driver
	// that gathers them by cause cannot tell a reader an effect before it.
	Events []NoteEvent
	// Cause are paragraphs saying why no setting closes it and what does.
	Cause []string
	// Keep, when set, says how to keep the scenario as a regression test,
	// told instead of the simulator's testdata/regressions (which replays
	// only the simulator's scenarios).
	Keep string
}

// A NoteEvent is one thing that happened: at T, in ms of the run (negative:
// no one instant), as history line Line says (0: no line), What in words.
type NoteEvent struct {
	T    int64
	Line int
	What string
}

// notes returns the driver's notes on o, nil when it gave none.
func notes(o *Outcome) *DomainNotes {
	if o.Execution == nil || o.Execution.Notes == nil {
		return nil
	}
	return o.Execution.Notes(o)
}

// WriteDomainNotes writes n as the story's section on it, its Keep as the
// closing paragraph: the section alone, for a caller that appends it to
// a story written before the notes were known.
func WriteDomainNotes(w io.Writer, n *DomainNotes) {
	if n == nil {
		return
	}
	fmt.Fprintln(w)
	writeNotes(w, n)
	if n.Keep != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(n.Keep))
	}
}

// writeNotes writes the section of n that the story places after what
// happened: what ran, the events with their times and lines, the cause.
func writeNotes(w io.Writer, n *DomainNotes) {
	fmt.Fprintf(w, "## In %s terms\n\n", n.Heading)
	if n.Setup != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(n.Setup))
	}
	events := slices.Clone(n.Events)
	slices.SortStableFunc(events, func(a, b NoteEvent) int {
		if a.T < 0 || b.T < 0 {
			return cmp.Compare(untimed(a), untimed(b))
		}
		return cmp.Compare(a.T, b.T)
	})
	for _, e := range events {
		var at []string
		if e.T >= 0 {
			at = append(at, fmt.Sprintf("t=%dms", e.T))
		}
		if e.Line > 0 {
			at = append(at, fmt.Sprintf("line %d", e.Line))
		}
		if len(at) > 0 {
			fmt.Fprintf(w, "- %s: %s\n", strings.Join(at, ", "), strings.TrimSpace(e.What))
		} else {
			fmt.Fprintf(w, "- %s\n", strings.TrimSpace(e.What))
		}
	}
	if len(n.Events) > 0 {
		fmt.Fprintln(w)
	}
	for i, p := range n.Cause {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(p))
	}
}

// untimed is 1 for an event at no one instant, which the story tells last.
func untimed(e NoteEvent) int {
	if e.T < 0 {
		return 1
	}
	return 0
}
