package campaign

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/leasecheck/leasecheck/internal/report"
	"github.com/leasecheck/leasecheck/model"
)

// DefaultMaxSaved is how many failing seeds a campaign saves (and shrinks)
// when SaveOptions.Max is 0: the first ones, in seed order.
const DefaultMaxSaved = 10

// SaveOptions say what a campaign keeps of its failing seeds.
type SaveOptions struct {
	// Dir is where failures are saved ("": nowhere).
	Dir string
	// Max is how many failing seeds are saved, the first in seed order (0:
	// DefaultMaxSaved; negative: all).
	Max int
	// NoShrink saves failures as generated instead of shrunk.
	NoShrink bool
	// Shrink tunes the shrinking (its Keep and Exact are set by SaveFailure).
	Shrink ShrinkOptions
	// Replay, when set, is the command that replays a saved scenario file,
	// for the page and the story (nil: "leasecheck repro FILE").
	Replay func(scenarioFile string) string
}

func (o SaveOptions) max() int {
	if o.Max == 0 {
		return DefaultMaxSaved
	}
	return o.Max
}

// Saved names the files of one saved failure.
type Saved struct {
	// Scenario is the scenario file: `leasecheck repro Scenario` reproduces
	// the violation with no other flag (it records the implementation, the
	// fault kinds and the properties it must violate, Expect).
	Scenario string
	// History is the history (format v1, with fault records when the run
	// has them); Page its one HTML page (WritePage: the lease timeline,
	// then porcupine's view of the linearization); Story a Markdown
	// account; Trace the simulator's trace (empty for a real run).
	History, Page, Story, Trace string
	// Outcome is the saved scenario's outcome; From the generated one's
	// size when it was shrunk (nil: saved as generated); Shrink what the
	// shrinking did (nil: not shrunk).
	Outcome *Outcome
	From    *Size
	Shrink  *ShrinkStats
}

// Files lists the saved files.
func (s *Saved) Files() []string {
	fs := []string{s.Scenario, s.History, s.Page, s.Story}
	if s.Trace != "" {
		fs = append(fs, s.Trace)
	}
	return fs
}

// SaveFailure shrinks o (unless opts.NoShrink), keeping exactly the
// properties it violates, and saves it under opts.Dir as name.scenario.json,
// name.history.jsonl, name.html (the page), name.md and name.trace.txt.
func SaveFailure(ctx context.Context, t Target, o *Outcome, name string, opts SaveOptions) (*Saved, error) {
	small := o
	var from *Size
	var stats *ShrinkStats
	if !opts.NoShrink {
		so := opts.Shrink
		so.Keep, so.Exact = o.Failed(), true
		if so.Judge == (JudgeOptions{}) {
			so.Judge = JudgeOptions{Budget: -1}
		}
		s, st, err := ShrinkWithStats(ctx, t, o, so)
		if err != nil {
			return nil, fmt.Errorf("shrinking %s: %w", name, err)
		}
		sz := SizeOf(o)
		small, from, stats = s, &sz, &st
	}
	saved, err := WriteFailure(opts.Dir, name, small, from, opts.Replay)
	if saved != nil {
		saved.Shrink = stats
	}
	return saved, err
}

// FailureName is the base name under which a campaign saves a failing
// seed: the implementation (Target.Implementation: "reference",
// "mutant:NAME") and the seed, as "reference-seed-7" or
// "mutant-renew-loop-dies-seed-7". Failures of different implementations
// saved into one directory never share a name; merge finds a part's saved
// failures by it.
func FailureName(impl string, seed uint64) string {
	return FileName(impl) + "-seed-" + strconv.FormatUint(seed, 10)
}

// FileName makes s usable as part of a file name on any system: every run
// of characters other than letters, digits, '.', '_' and '-' becomes one
// '-' ("mutant:renew-loop-dies" is "mutant-renew-loop-dies",
// "redis://127.0.0.1:6379/2" is "redis-127.0.0.1-6379-2").
func FileName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// WriteFailure saves outcome o under dir (created if need be) as name.*:
// the scenario with Implementation, FaultKinds and Expect filled in, the
// history, the page (WritePage), the story
// (WriteStory) and the trace. from is the size before shrinking (nil: not
// shrunk); replay, when set, is the command that replays the scenario file
// (nil: "leasecheck repro FILE").
//
// A saved failure is never overwritten: when one of its files exists with
// other contents, nothing is written and the error says which (WriteNew).
// Saving the same failure again (a deterministic rerun) is allowed, since
// it changes nothing.
func WriteFailure(dir, name string, o *Outcome, from *Size, replay func(scenarioFile string) string) (*Saved, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, name)
	s := &Saved{Scenario: base + ".scenario.json", History: base + ".history.jsonl", Page: base + ".html",
		Story: base + ".md", Outcome: o, From: from}
	if replay == nil {
		replay = func(f string) string { return "leasecheck repro " + f }
	}
	sc := Expecting(o)
	page := PageInfo{Title: name, Replay: replay(s.Scenario)}
	info := StoryInfo{Title: name, ScenarioFile: s.Scenario, From: from, Replay: replay(s.Scenario)}
	files := []NewFile{
		{s.Scenario, func(w io.Writer) error { _, err := w.Write(sc.Marshal()); return err }},
		{s.History, func(w io.Writer) error { return model.WriteHistory(w, o.History) }},
		{s.Page, func(w io.Writer) error { return WritePage(w, o, page) }},
		{s.Story, func(w io.Writer) error { WriteStory(w, o, info); return nil }},
	}
	if o.Sim != nil {
		s.Trace = base + ".trace.txt"
		files = append(files, NewFile{s.Trace, func(w io.Writer) error {
			for _, l := range o.TraceLines() {
				if _, err := fmt.Fprintln(w, l); err != nil {
					return err
				}
			}
			return nil
		}})
	}
	if err := WriteNew(files...); err != nil {
		return nil, err
	}
	return s, nil
}

// NewFile is a file for WriteNew: its path and what writes its contents.
type NewFile struct {
	Path  string
	Write func(io.Writer) error
}

// ErrExists is wrapped by WriteNew's error when a file would be
// overwritten.
var ErrExists = errors.New("a saved failure is never overwritten")

// WriteNew writes the files, all or none: when one exists with other
// contents than it would be given, nothing is written and the error names
// it (wrapping ErrExists). A file that exists with exactly its contents is
// left as it is. Files are created exclusively, so a concurrent writer of
// the same name loses instead of overwriting.
func WriteNew(files ...NewFile) error {
	contents := make([][]byte, len(files))
	for i, f := range files {
		var b bytes.Buffer
		if err := f.Write(&b); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
		contents[i] = b.Bytes()
	}
	same := make([]bool, len(files))
	for i, f := range files {
		old, err := os.ReadFile(f.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return err
		case bytes.Equal(old, contents[i]):
			same[i] = true
		default:
			return fmt.Errorf("%s exists and holds something else: %w (remove it, or save into another directory)", f.Path, ErrExists)
		}
	}
	for i, f := range files {
		if same[i] {
			continue
		}
		out, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s appeared while saving: %w", f.Path, ErrExists)
		} else if err != nil {
			return err
		}
		if _, err := out.Write(contents[i]); err != nil {
			out.Close()
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
		if err := out.Close(); err != nil {
			return err
		}
	}
	return nil
}

// Expecting returns a copy of o's scenario that records what replaying it
// must show: the implementation stays, Expect lists the properties o
// violates.
func Expecting(o *Outcome) *Scenario {
	sc := o.Scenario.Clone()
	sc.Expect = o.Failed()
	return sc
}

// PageInfo is what a failure's page says beyond the outcome.
type PageInfo struct {
	// Title heads the page (default: the history's name).
	Title string
	// Replay is the command that replays the failure.
	Replay string
}

// WritePage writes the HTML page of a failure: the lease timeline
// (report.WriteTimeline) with the checker's violations, the run
// properties' findings, and the holders' beliefs from the simulator's
// trace (or, for a real run, those its runner recorded: Execution.Beliefs).
// It is the one place that chooses the page of a saved failure.
// Porcupine's view of the linearization is no longer embedded below it:
// squeezed into a frame of the page its labels overlapped at 1400x1000,
// and the timeline lists the same linearization; `leasecheck check
// --porcupine FILE` writes that view on a page of its own.
func WritePage(w io.Writer, o *Outcome, info PageInfo) error {
	in := report.Input{Title: info.Title, History: o.History, Check: o.Check, Replay: info.Replay,
		Beliefs: o.Beliefs, Parameters: parametersOf(o, notes(o))}
	if o.Sim != nil {
		trace := make([]report.TraceLine, len(o.Sim.Trace))
		for i, e := range o.Sim.Trace {
			trace[i] = report.TraceLine{T: e.T, Node: e.Node, What: e.What, Detail: e.Detail}
		}
		in.Beliefs = report.BeliefsFromTrace(trace, o.Sim.Stats.End)
	}
	for _, f := range o.Findings {
		in.Extra = append(in.Extra, report.Finding{Property: f.Property, Explanation: f.Explanation, Lines: f.Lines, From: f.From, To: f.To})
	}
	return report.WriteTimeline(w, in, report.Options{})
}

// WriteFile creates path and writes it with write: how every saved file
// (scenario pages, stories, histories, traces) is written, by campaigns,
// verify and check alike.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// Replay runs a saved scenario against the implementation it records and
// judges it: what `leasecheck repro FILE` does, and what a regression test
// calls (with CheckExpect).
func Replay(ctx context.Context, sc *Scenario, opts JudgeOptions) (*Outcome, error) {
	t, err := ParseTarget(sc.Implementation)
	if err != nil {
		return nil, err
	}
	return Judge(ctx, t, sc, opts)
}

// CheckExpect compares a replay with its scenario's Expect: nil when the
// properties violated are exactly the expected ones (none, for an empty
// Expect), else an error naming the difference.
func CheckExpect(o *Outcome) error {
	want := slices.Clone(o.Scenario.Expect)
	slices.Sort(want)
	got := o.Failed()
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if slices.Equal(want, sorted) {
		return nil
	}
	var missing, extra []string
	for _, p := range want {
		if !slices.Contains(got, p) {
			missing = append(missing, p)
		}
	}
	for _, p := range got {
		if !slices.Contains(want, p) {
			extra = append(extra, p)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "no longer violates "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "also violates "+strings.Join(extra, ", "))
	}
	if o.Undecided() {
		parts = append(parts, "the linearizability search ran out of its budget")
	}
	return fmt.Errorf("expected violations [%s], got [%s]: %s", strings.Join(o.Scenario.Expect, ", "), strings.Join(got, ", "), strings.Join(parts, "; "))
}
