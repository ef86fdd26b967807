package campaign

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// StoryInfo is what a story says beyond the outcome.
type StoryInfo struct {
	// Title heads the story (a seed's file name, a mutant's name).
	Title string
	// ScenarioFile is where the scenario is saved, for the replay command.
	ScenarioFile string
	// From is the size before shrinking (nil: not shrunk).
	From *Size
	// GoTest, when set, is a `go test` command that replays it too.
	GoTest string
	// Replay, when set, is the command that replays it (default:
	// "leasecheck repro ScenarioFile"; for a real backend, "leasecheck
	// verify --backend SPEC --scenario ScenarioFile").
	Replay string
}

// storyLines caps the history and trace lines a story quotes.
const storyLines = 200

// WriteStory writes a person's account of a failing outcome in Markdown:
// what ran (for a planted bug, the article's sentence it breaks), what
// happened in plain words with the lines involved, the history and the
// trace, the account of the driver in its users' terms when it gave one
// (Execution.Notes: DomainNotes), the command that replays it and how to
// keep it as a regression test. It is the story `run` saves beside every failure, and the one of
// the mutants' counterexamples (testdata/scenarios/mutants/).
func WriteStory(w io.Writer, o *Outcome, info StoryInfo) {
	s := &story{w: w, o: o, info: info, impl: o.Scenario.Implementation}
	if t, err := ParseTarget(s.impl); err == nil {
		s.m = t.Mutant()
	}
	s.failed = o.Failed()
	if s.impl == "" {
		s.impl = ImplReference
	}
	s.dn = notes(o)
	s.facts()
	s.glance()
	s.scenario()
	s.trace = o.TraceLines()
	s.happened()
	if s.dn != nil {
		writeNotes(w, s.dn)
		fmt.Fprintln(w)
	}
	s.history()
	s.traceSection()
	s.replay()
}

// story is what WriteStory's sections share: the outcome and what is
// worked out from it once.
type story struct {
	w    io.Writer
	o    *Outcome
	info StoryInfo
	// impl is the scenario's implementation, the reference when unnamed.
	impl string
	// m is the planted bug (nil: not a mutant).
	m *mutants.Mutant
	// failed is the properties violated, the run's first violation first.
	failed []string
	// trace is the run's trace as text lines (nil for a real run).
	trace []string
	// dn is the driver's notes (nil: it gave none).
	dn *DomainNotes
}

// facts writes the title and the facts under it: the implementation, the
// properties violated (for a planted bug, the article's sentence it
// breaks) and the fault kinds drawn from.
func (s *story) facts() {
	w, sc, m, failed := s.w, s.o.Scenario, s.m, s.failed
	if m != nil {
		fmt.Fprintf(w, "# %s: %s\n\n", s.info.Title, m.Failure)
		fmt.Fprintf(w, "- implementation: `%s` (a planted bug in the %s; the rest is the reference)\n", s.impl, m.Component)
		// The run's own first violation leads, as it does in every other
		// record of the failure (the file's name, explore's report); the
		// property the bug was planted for is named beside it.
		if len(failed) == 0 {
			fmt.Fprintf(w, "- violated: no property (the bug is planted for `%s`)", m.Property)
		} else {
			fmt.Fprintf(w, "- caught by: `%s`", failed[0])
			others := slices.Clone(failed[1:])
			for i, p := range others {
				if p == m.Property {
					others[i] = p + ", the property the bug is planted for"
				}
			}
			if len(others) > 0 {
				fmt.Fprintf(w, " (this run also violates: %s)", strings.Join(others, "; "))
			}
			if !slices.Contains(failed, m.Property) {
				fmt.Fprintf(w, " (the bug is planted for `%s`, not violated here)", m.Property)
			}
		}
		fmt.Fprintf(w, "\n- article: %s\n  (%s)\n", m.Article, m.English)
	} else {
		fmt.Fprintf(w, "# %s: %s violated\n\n", s.info.Title, orNone(failed))
		fmt.Fprintf(w, "- implementation: `%s`\n", s.impl)
		fmt.Fprintf(w, "- violated: %s\n", code(failed))
	}
	if len(sc.FaultKinds) > 0 {
		kinds := make([]string, len(sc.FaultKinds))
		for i, k := range sc.FaultKinds {
			kinds[i] = string(k)
		}
		fmt.Fprintf(w, "- fault kinds drawn from: %s\n", strings.Join(kinds, ", "))
	}
}

// glance writes the failure in a sentence: the planted bug's story, else
// the findings'.
func (s *story) glance() {
	fmt.Fprintf(s.w, "\n## At a glance\n\n")
	if s.m != nil {
		fmt.Fprintf(s.w, "%s\n", s.m.Story)
	} else if vs := s.o.ByCause(); len(vs) > 0 {
		fmt.Fprintf(s.w, "%s\n", glance(vs))
	}
}

// scenario writes what ran: its size, times and network, each holder's
// work, the reader, the parameters and the faults.
func (s *story) scenario() {
	w, o, sc := s.w, s.o, s.o.Scenario
	real := strings.HasPrefix(s.impl, backendPrefix)
	fmt.Fprintf(w, "\n## The scenario\n\n")
	if s.info.From != nil && *s.info.From != SizeOf(o) {
		fmt.Fprintf(w, "Shrunk from %s to %s; ", s.info.From, SizeOf(o))
	} else {
		fmt.Fprintf(w, "%s; ", SizeOf(o))
	}
	if real {
		// A real run has the server's own network, and the scenario's times
		// are scaled onto the real TTL: its units are the scenario's, not
		// the history's.
		fmt.Fprintf(w, "TTL %d, horizon %d, in the scenario's time units (a real run scales them onto its real TTL), seed %d. %s\n",
			sc.TTL, sc.Horizon, sc.Seed, timesNote(o.History.Header))
		if key := firstKey(o); strings.Contains(key, ".") {
			base, run, _ := strings.Cut(key, ".")
			fmt.Fprintf(w, "- key %q: the scenario's key %q in run %s against the server (every real run, shrink candidate and replay uses a key of its own, so that none sees another's leftovers)\n", key, base, run)
		}
	} else {
		fmt.Fprintf(w, "TTL %dms, network delay %d-%dms (loss %dppm, duplication %dppm), horizon %dms, %s semantics, seed %d.\n",
			sc.TTL, sc.Network.MinDelay, sc.Network.MaxDelay, sc.Network.DropPPM, sc.Network.DupPPM, sc.Horizon, sc.Semantics, sc.Seed)
	}
	unit := "ms"
	if real {
		unit = ""
	}
	for _, p := range sc.Holders {
		fmt.Fprintf(w, "- holder %s starts at %d%s; %s\n", p.Name, p.Start, unit, describeWork(p.Work, unit))
	}
	if sc.ReadEvery > 0 {
		fmt.Fprintf(w, "- reader r1 reads every %d%s\n", sc.ReadEvery, unit)
	}
	for _, l := range parametersOf(o, s.dn) {
		fmt.Fprintf(w, "- %s\n", l)
	}
	for _, f := range CauseFirst(o, sc.Faults) {
		fmt.Fprintf(w, "- fault %s\n", f)
	}
	if len(sc.Faults) == 0 {
		fmt.Fprintf(w, "- no faults\n")
	}
}

// happened writes each finding in plain words with the lines involved
// (its deadlines, the trace lines it cites), then the warnings.
func (s *story) happened() {
	w, o := s.w, s.o
	fmt.Fprintf(w, "\n## What happened\n\n")
	for _, v := range o.ByCause() {
		var where []string
		if v.Kind == RunProperty {
			where = append(where, "run property")
		} else {
			where = append(where, fmt.Sprintf("key %q", v.Key))
		}
		if l := viewLabel(v.View); l != "" {
			where = append(where, l)
		}
		if len(v.Lines) > 0 {
			where = append(where, plural(len(v.Lines), "line ", "lines ")+joinInts(v.Lines))
		}
		if len(v.TraceLines) > 0 {
			where = append(where, plural(len(v.TraceLines), "trace line ", "trace lines ")+joinInts(v.TraceLines))
		}
		fmt.Fprintf(w, "`%s` (%s): %s\n\n", v.Property, strings.Join(where, ", "), strings.TrimSpace(v.Explanation))
		if ds := Deadlines(o, v); len(ds) > 0 {
			for _, d := range ds {
				fmt.Fprintf(w, "- %s\n", d)
			}
			fmt.Fprintln(w)
		}
		if len(v.TraceLines) > 0 {
			fmt.Fprintf(w, "```\n")
			for _, n := range v.TraceLines {
				if n >= 1 && n <= len(s.trace) {
					fmt.Fprintln(w, s.trace[n-1])
				}
			}
			fmt.Fprintf(w, "```\n\n")
		}
	}
	for _, f := range o.Warnings {
		fmt.Fprintf(w, "Warning, `%s` (run property, violating nothing): %s\n\n", f.Property, strings.TrimSpace(f.Explanation))
	}
	if s.m != nil {
		fmt.Fprintf(w, "The reference coordinator, resource and holder pass this same scenario.\n\n")
	}
}

// history quotes the history's operations, at most storyLines of them.
func (s *story) history() {
	w, h := s.w, s.o.History
	fmt.Fprintf(w, "## History\n\n```\n")
	for i := range h.Ops {
		if i == storyLines {
			fmt.Fprintf(w, "... %d more operations (see the history file)\n", len(h.Ops)-i)
			break
		}
		op := &h.Ops[i]
		fmt.Fprintf(w, "%3d %s\n", op.Line, OpString(op, timefmt.Times{Unit: h.Header.TimeUnit}))
	}
	fmt.Fprintf(w, "```\n")
}

// traceSection quotes the trace, at most storyLines of it; a real run has
// none.
func (s *story) traceSection() {
	if len(s.trace) == 0 {
		return
	}
	fmt.Fprintf(s.w, "\n## Trace\n\n```\n")
	for i, l := range s.trace {
		if i == storyLines {
			fmt.Fprintf(s.w, "... %d more trace lines (see the trace file)\n", len(s.trace)-i)
			break
		}
		fmt.Fprintln(s.w, l)
	}
	fmt.Fprintf(s.w, "```\n")
}

// replay writes the command that replays the scenario, what it does and
// how to keep it as a regression test: a real backend's, a virtual-time
// client's, the driver's own (its notes' Keep) or leasecheck's.
func (s *story) replay() {
	w, impl, failed, dn, info := s.w, s.impl, s.failed, s.dn, s.info
	replay := info.Replay
	switch {
	case strings.HasPrefix(impl, backendPrefix):
		replay = realReplay(info)
	case replay == "":
		replay = "leasecheck repro " + info.ScenarioFile
	}
	fmt.Fprintf(w, "\n## Replay\n\n```sh\n%s\n```\n\n", replay)
	if strings.HasPrefix(impl, backendPrefix) {
		writeRealReplay(w, failed, impl, info)
		return
	}
	if strings.HasPrefix(impl, "vclient:") || strings.HasPrefix(replay, "go test ") {
		// A virtual-time client replays as a go test of its own package,
		// which keeps its regressions itself (package vclient's stories):
		// a test passes, exit 0, when the replay is as saved.
		fmt.Fprintf(w, "The test passes when the replay violates exactly %s and fails otherwise: the scenario records its implementation (`%s`), its fault kinds and the properties it must violate (`expect`).\n", code(failed), impl)
		writeKeep(w, dn)
		return
	}
	fmt.Fprintf(w, "It exits 1 and reports %s violated: the scenario records its implementation (`%s`), its fault kinds and the properties it must violate (`expect`).\n", code(failed), impl)
	if info.GoTest != "" {
		fmt.Fprintf(w, "Also: `%s`.\n", info.GoTest)
	}
	if dn != nil && dn.Keep != "" {
		writeKeep(w, dn)
		return
	}
	fmt.Fprintf(w, "\n## Keep it as a regression test\n\n")
	fmt.Fprintf(w, "Copy the scenario into `testdata/regressions/`: `go test ./internal/campaign -run TestRegressions` replays every scenario there and fails unless exactly the properties of its `expect` are violated.\n\n")
	// The replay command, not a Go snippet: the packages that load and
	// replay a scenario are internal to leasecheck, and the command is what
	// a user's CI can run against a saved file.
	fmt.Fprintf(w, "Anywhere else (a CI step, a script), the replay says `as saved` when exactly the properties of its `expect` are violated and `NOT AS SAVED` with the difference when not; with `--json` its report's `as_expected` says the same. It exits 1 while a property is violated, as saved, so test the report rather than the exit status:\n\n")
	fmt.Fprintf(w, "```sh\nleasecheck repro --json %s > replay.json || true\ngrep -q '\"as_expected\": true' replay.json\n```\n", info.ScenarioFile)
}

// writeRealReplay ends the story of a real backend's failure: what the
// replay does (a real run: the same plan, not the same interleaving) and
// how to keep it.
func writeRealReplay(w io.Writer, failed []string, impl string, info StoryInfo) {
	fmt.Fprintf(w, "It runs the scenario again against the backend (`%s`), with the same processes, programs and fault plan, its times scaled onto the same real TTL, and exits 1 if it violates a property. A real run does not repeat the interleaving exactly: `--seeds N` replays it N times. The scenario records the properties this run violated (`expect`: %s).\n", impl, code(failed))
	if info.GoTest != "" {
		fmt.Fprintf(w, "Also: `%s`.\n", info.GoTest)
	}
	fmt.Fprintf(w, "\n## Keep it as a regression test\n\n")
	// The replay command, not a Go snippet: the runner that replays a
	// scenario against a backend is internal to leasecheck, and verify's
	// command (leasecheck's, or a user's own verify.Main) is what runs it.
	fmt.Fprintf(w, "Keep the scenario beside your backend's tests and replay it, against a server your CI starts, with the replay command: it exits 0 when no replay violates a property (the bug is fixed) and 1 while one does. A real run does not repeat its interleaving, so give it several replays:\n\n")
	fmt.Fprintf(w, "```sh\n%s --seeds 20\n```\n", realReplay(info))
}

// realReplay is the command that replays a real backend's scenario: the
// story's replay line (verify's, which knows the backend and the TTL),
// else leasecheck verify's with the backend left to fill in.
func realReplay(info StoryInfo) string {
	if info.Replay != "" {
		return info.Replay
	}
	return "leasecheck verify --backend SPEC --scenario " + info.ScenarioFile
}

func code(xs []string) string {
	if len(xs) == 0 {
		return "no property"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = "`" + x + "`"
	}
	return strings.Join(s, ", ")
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "no property"
	}
	return strings.Join(xs, ", ")
}

// glance says what went wrong in a sentence or two, for "At a glance":
// the reason each violated property gives (its explanation's last
// sentence before the faults), not the explanation again, which "What
// happened" tells in full.
func glance(vs []Violation) string {
	var out []string
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.Property] {
			continue
		}
		seen[v.Property] = true
		n := 0
		for _, u := range vs {
			if u.Property == v.Property {
				n++
			}
		}
		s := fmt.Sprintf("`%s`", v.Property)
		if n > 1 {
			s += fmt.Sprintf(" (%d violations; the first)", n)
		}
		out = append(out, s+": "+reason(v.Explanation))
	}
	return strings.Join(out, "\n\n") + "\n\nThe lines, the state and the faults are under \"What happened\"."
}

// reason is the sentence of an explanation that says why: the last one
// before "This happened during ...".
func reason(e string) string {
	e = strings.TrimSpace(firstParagraph(e))
	if i := strings.Index(e, " This happened during "); i >= 0 {
		e = e[:i]
	}
	e = strings.TrimSpace(e)
	body := strings.TrimSuffix(e, ".")
	if i := strings.LastIndex(body, ". "); i >= 0 && i+2 < len(body) {
		return body[i+2:] + "."
	}
	return e
}

// describeWork renders a holder's program in words: what it does once it
// holds the lease.
func describeWork(items []holder.Item, unit string) string {
	if len(items) == 0 {
		return "acquires and holds the lease, with no work"
	}
	if len(items) > 4 {
		lo, hi, writes := items[0].Work, items[0].Work, 0
		for _, it := range items {
			lo, hi, writes = min(lo, it.Work), max(hi, it.Work), writes+it.Writes
		}
		return fmt.Sprintf("once it holds the lease, %d rounds of work of %d-%d%s each, %d writes in all", len(items), lo, hi, unit, writes)
	}
	var parts []string
	for _, it := range items {
		switch it.Writes {
		case 0:
			parts = append(parts, fmt.Sprintf("works %d%s without writing", it.Work, unit))
		case 1:
			parts = append(parts, fmt.Sprintf("works %d%s then writes once", it.Work, unit))
		default:
			parts = append(parts, fmt.Sprintf("works %d%s then writes %d times", it.Work, unit, it.Writes))
		}
	}
	return "once it holds the lease, " + strings.Join(parts, "; ")
}

func firstKey(o *Outcome) string {
	if o.History != nil && len(o.History.Ops) > 0 {
		return o.History.Ops[0].Key
	}
	return ""
}

// timesNote says in which unit the story gives the history's times: ms,
// converted by timefmt.Times where the file's unit is another.
func timesNote(h model.Header) string {
	if (timefmt.Times{Unit: h.TimeUnit}).Converted() {
		return fmt.Sprintf("The history's times are given in ms throughout this story, as in its fault log (the history file records them in %s).", unitName(h.TimeUnit))
	}
	return "The history's times are in ms."
}

func unitName(u string) string {
	switch u {
	case "us":
		return "µs"
	case "":
		return "ms"
	}
	return u
}

func firstParagraph(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// writeKeep tells how to keep the scenario in the driver's words, when its
// notes say.
func writeKeep(w io.Writer, n *DomainNotes) {
	if n != nil && n.Keep != "" {
		fmt.Fprintf(w, "\n## Keep it as a regression test\n\n%s\n", strings.TrimSpace(n.Keep))
	}
}
