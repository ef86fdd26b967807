package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/report"
	"github.com/leasecheck/leasecheck/model"
)

// maxTold caps the failing rounds described on stderr; the rest are
// counted (and listed in failed_seeds).
const maxTold = 10

// failure saves a failing round (shrunk for --shrink-for, unless it is
// beyond --save) and tells it on stderr: its violations — as the saved
// history shows them, so that every line cited is a line of the file saved
// beside the story; as the round showed them when nothing was saved — what
// the shrinking achieved, the files and the line that replays it.
func (v *verifier) failure(ctx context.Context, f *campaign.Failure) {
	o := f.Outcome
	told := o
	var saved *campaign.Saved
	var saveErr error
	var how string
	if v.cfg.out != "" && (v.cfg.maxSaved < 0 || v.saved < v.cfg.maxSaved) {
		v.saved++
		small, from := o, (*campaign.Size)(nil)
		switch {
		case v.cfg.shrinkFor <= 0:
			how = "saved as run (--shrink-for 0)"
		default:
			v.logf("  shrinking seed %d for up to %v: every candidate is a real run...\n", f.Seed, v.cfg.shrinkFor)
			s, st, err := campaign.ShrinkWithStats(ctx, v.shrink, o, campaign.ShrinkOptions{Keep: o.Failed(), Exact: true,
				For: v.cfg.shrinkFor, KeepOutcomes: true, Judge: v.judge})
			switch {
			case err != nil:
				how = fmt.Sprintf("saved as run, not shrunk: %v", err)
			case st.Kept == 0:
				how = fmt.Sprintf("saved as run: no smaller scenario failed the same way (%s)", st)
			default:
				sz := campaign.SizeOf(o)
				small, from = s, &sz
				how = fmt.Sprintf("shrunk from %s to %s (%s)", sz, campaign.SizeOf(s), st)
			}
		}
		saved, saveErr = v.save(f.Seed, small, from)
		if saved != nil {
			v.sum.Histories = append(v.sum.Histories, saved.History)
			told = small
		}
	}
	v.told++
	if v.told > maxTold {
		return
	}
	v.logMu.Lock()
	defer v.logMu.Unlock()
	if v.bar != nil {
		v.bar.Clear()
	}
	w := v.stderr
	fmt.Fprintf(w, "\nFAIL seed %d: %s\n", f.Seed, strings.Join(o.Failed(), ", "))
	for _, vi := range told.ByCause() {
		campaign.WriteViolation(indent{w}, vi, nil)
	}
	switch {
	case saved != nil:
		fmt.Fprintf(w, "  %s: %s (.history.jsonl with the fault records, .html the timeline and porcupine's view, .md the story, beside it)\n", how, saved.Scenario)
		fmt.Fprintf(w, "  replay: %s\n", v.replay(saved.Scenario))
	case saveErr != nil:
		fmt.Fprintf(w, "  not saved: %s\n  replay: %s\n", scrub(saveErr.Error(), v.cfg.spec), v.replayRound(f.Seed))
	default:
		fmt.Fprintf(w, "  not saved (beyond --save %d)\n  replay: %s\n", v.cfg.maxSaved, v.replayRound(f.Seed))
	}
}

// maxRerunNames bounds the names save tries for one seed's failure.
const maxRerunNames = 100

// save saves a failing round under its seed's name, or, when a file of
// that name holds another failure, under the first free NAME-2, NAME-3, ...
// A real round is not reproducible as a simulated seed is: running the same
// seeds again, or replaying a saved failure (whose round is seed 1 of the
// replay), records another history, which is another failure to keep, not
// the same one to refuse ("not saved: ... exists and holds something
// else", which left the replay's own failure unsaved).
func (v *verifier) save(seed uint64, o *campaign.Outcome, from *campaign.Size) (*campaign.Saved, error) {
	name := v.failureName(seed)
	for i := 1; ; i++ {
		try := name
		if i > 1 {
			try = name + "-" + strconv.Itoa(i)
		}
		saved, err := campaign.WriteFailure(v.cfg.out, try, o, from, v.replay)
		if err == nil || !errors.Is(err, campaign.ErrExists) || i == maxRerunNames {
			return saved, err
		}
	}
}

// replay is the line that replays a saved scenario file: the same backend
// (its spec without the password), the same real TTL, the same holders.
func (v *verifier) replay(file string) string {
	s := v.c.rerunName() + " --backend " + shellQuote(redact(v.cfg.spec))
	if v.cfg.sc == nil || v.cfg.ttlSet {
		s += " --ttl " + v.cfg.ttl.String()
	}
	if v.cfg.mutant != "" {
		s += " --mutant " + v.cfg.mutant
	}
	return s + " --scenario " + shellQuote(file)
}

// replayRound is the line that runs round seed again, for one not saved.
func (v *verifier) replayRound(seed uint64) string {
	if v.cfg.sc != nil {
		return v.replay(v.cfg.scenarioFile)
	}
	s := fmt.Sprintf("%s --backend %s --seeds 1 --first %d --duration %v --ttl %v --faults %s", v.c.rerunName(), shellQuote(redact(v.cfg.spec)),
		seed, v.cfg.duration, v.cfg.ttl, kindList(v.cfg.kinds))
	if v.cfg.mutant != "" {
		s += " --mutant " + v.cfg.mutant
	}
	return s
}

// runError reports a round that could not finish — the backend stopped
// answering, a server did not come back — and saves its partial history,
// the scenario as run and the history's timeline: exit 2.
func (v *verifier) runError(err error) int {
	fmt.Fprintf(v.stderr, "%s: %s\n", v.c.Name, scrub(err.Error(), v.cfg.spec))
	var re *roundError
	if !errors.As(err, &re) {
		return ExitUsage
	}
	dir := v.cfg.out
	if dir == "" {
		dir = "leasecheck-failures"
	}
	base := filepath.Join(dir, v.failureName(v.seed)+".partial")
	if err := savePartial(base, re.Result, v.replay(base+".scenario.json")); err != nil {
		fmt.Fprintf(v.stderr, "%s: saving the partial history: %v\n", v.c.Name, err)
		return ExitUsage
	}
	fmt.Fprintf(v.stderr, "%s: the partial history: %s (%d operations; its timeline %s, the scenario as run %s)\n",
		v.c.Name, base+".history.jsonl", len(re.Result.History.Ops), base+".html", base+".scenario.json")
	return ExitUsage
}

// savePartial writes base.history.jsonl, base.scenario.json and base.html
// (the timeline, unjudged) of a run that could not finish.
func savePartial(base string, res *realrun.Result, replay string) error {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return err
	}
	files := []campaign.NewFile{{Path: base + ".history.jsonl", Write: func(w io.Writer) error { return model.WriteHistory(w, res.History) }}}
	if res.Scenario != nil {
		files = append(files, campaign.NewFile{Path: base + ".scenario.json", Write: func(w io.Writer) error { _, err := w.Write(res.Scenario.Marshal()); return err }})
	}
	in := report.Input{Title: filepath.Base(base) + " (the run did not finish: not judged)", History: res.History,
		Beliefs: beliefsOf(res), Replay: replay}
	files = append(files, campaign.NewFile{Path: base + ".html", Write: func(w io.Writer) error { return report.WriteTimeline(w, in, report.Options{}) }})
	return campaign.WriteNew(files...)
}

func beliefsOf(res *realrun.Result) []report.Belief {
	out := make([]report.Belief, len(res.Beliefs))
	for i, b := range res.Beliefs {
		out[i] = report.Belief{Process: b.Process, Fence: b.Fence, From: b.From, To: b.To, Open: b.Open}
	}
	return out
}

// logf writes a line on stderr, clear of the progress bar.
func (v *verifier) logf(format string, args ...any) {
	v.logMu.Lock()
	defer v.logMu.Unlock()
	if v.bar != nil {
		v.bar.Clear()
	}
	fmt.Fprintf(v.stderr, format, args...)
}

// failureName is the base name of round seed's saved failure: the backend
// as selected (backendLabel: etcd34-mutex and etcd-mutex, or two servers of
// one kind, never share a name), the planted bug if any, the seed.
func (v *verifier) failureName(seed uint64) string {
	name := "verify-" + campaign.FileName(v.label)
	if v.cfg.mutant != "" {
		name += "-mutant-" + campaign.FileName(v.cfg.mutant)
	}
	return name + "-seed-" + strconv.FormatUint(seed, 10)
}

// backendLabel names the backend a spec selects for file names: the
// registered name for a server started here ("etcd34-mutex"), the name and
// the address for a server of yours ("redis-127.0.0.1-6379-2"), never the
// credentials.
func backendLabel(name, spec string) string {
	if spec == name {
		return name
	}
	if u, err := url.Parse(spec); err == nil && u.Host != "" {
		return name + "-" + u.Host + u.Path
	}
	if i := strings.LastIndex(spec, "@"); i >= 0 {
		spec = spec[i+1:]
	}
	return name + "-" + spec
}

// shellQuote quotes s for a shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@,=+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// indent prefixes every line written with two spaces.
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	s := strings.TrimSuffix(string(p), "\n")
	_, err := io.WriteString(i.w, "  "+strings.ReplaceAll(s, "\n", "\n  ")+"\n")
	return len(p), err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
