package k8slease

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
)

var updateFlag = flag.Bool("update", false, "TestRegressions: rewrite each regression's story (.md) and trace (.trace.txt) from its replay")

// TestRegressions replays every saved scenario in testdata/regressions/:
// exactly its expect is violated, and its saved history is recorded again
// byte for byte. With -update it rewrites each one's story and trace from
// the replay (the history is the test's reference: never rewritten), so
// that they follow the story writers; read the diff.
func TestRegressions(t *testing.T) {
	replayDir(t, filepath.Join("testdata", "regressions"), func(t *testing.T, sc *scenario.Scenario) (campaign.Target, error) {
		tg, err := target(t, sc.Implementation)
		if err != nil {
			return nil, err
		}
		return telling(tg, electorNotes), nil
	}, func(t *testing.T, f string, o *campaign.Outcome) {
		if o.History.Header.Fences == model.NoFences {
			for i, l := range o.TraceLines() {
				if strings.Contains(l, "fence=0") {
					t.Errorf("%s: a fence-less run's trace line %d says fence=0: %s", f, i+1, l)
				}
			}
		}
		if *updateFlag {
			base := strings.TrimSuffix(f, ".scenario.json")
			var story, trace bytes.Buffer
			campaign.WriteStory(&story, o, campaign.StoryInfo{Title: filepath.Base(base), ScenarioFile: f, Replay: replayCommand(f), From: shrunkFrom(base + ".md")})
			for _, l := range o.TraceLines() {
				trace.WriteString(l + "\n")
			}
			if err := os.WriteFile(base+".md", story.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(base+".trace.txt", trace.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// shrunkFrom is the size before shrinking that a saved story states, so
// that -update keeps it (nil: none stated).
func shrunkFrom(md string) *campaign.Size {
	old, err := os.ReadFile(md)
	i := bytes.Index(old, []byte("Shrunk from "))
	if err != nil || i < 0 {
		return nil
	}
	var s campaign.Size
	var p, o, f string
	if _, err := fmt.Sscanf(string(old[i:]), "Shrunk from %d %s %d %s %d %s", &s.Processes, &p, &s.Ops, &o, &s.Faults, &f); err != nil {
		return nil
	}
	return &s
}

// TestFencedRefusesTheZombieWrite: the saved zombie write's scenario, run
// against the fenced variant (the same elector, the writes carrying the
// resourceVersion of the update that made their writer leader), the new
// leader writing too: the store refuses the paused leader's write, and
// nothing is violated.
func TestFencedRefusesTheZombieWrite(t *testing.T) {
	sc, err := scenario.Load("testdata/regressions/zombie-write.scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	unfenced, err := replayOwn(t, "testdata/regressions/zombie-write.scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	z := k8ssweep.FindZombieWrite(unfenced)
	if z == nil {
		t.Fatal("the saved scenario shows no zombie write")
	}
	sc.Implementation, sc.Semantics, sc.Expect = k8ssweep.Fenced, "fenced-storage", nil
	// A fenced store learns of the new term from the new leader's first
	// write: give the candidate that takes over work to do.
	for i := range sc.Holders {
		if sc.Holders[i].Name == z.Grant.Owner {
			sc.Holders[i].Work = append(sc.Holders[i].Work, holder.Item{Work: 100, Writes: 1})
		}
	}
	dir := t.TempDir()
	if err := sc.Save(filepath.Join(dir, "fenced.scenario.json")); err != nil {
		t.Fatal(err)
	}
	o, err := replayOwn(t, filepath.Join(dir, "fenced.scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Violated() {
		var b strings.Builder
		campaign.WriteOutcome(&b, o)
		t.Fatalf("fenced: %v\n%s", o.Failed(), b.String())
	}
	refused := false
	for _, op := range o.History.Ops {
		if op.Kind == model.Write && op.Owner == z.Write.Owner && op.Returned && !op.OK && op.Call >= z.Grant.At {
			refused = true
			t.Logf("the store refused %s's write %q at t=%d (fence %d: %s)", op.Owner, op.Value, op.At, op.Fence, op.Error)
		}
	}
	if !refused {
		t.Errorf("fenced: no write of %s's refused after %s's grant at t=%d", z.Write.Owner, z.Grant.Owner, z.Grant.At)
	}
}

// TestNotesCiteTheHistory: every event of the Kubernetes account of a
// saved regression that names a history line names the op the store
// applied at that event's time, and the deprecated WriteStory still writes
// the account as the story's section.
func TestNotesCiteTheHistory(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "regressions", "*.scenario.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no regressions: %v", err)
	}
	for _, f := range files {
		o, err := replayOwn(t, f)
		if err != nil {
			t.Fatal(err)
		}
		n := electorNotes(o)
		cited := 0
		for _, e := range n.Events {
			if e.Line == 0 {
				continue
			}
			cited++
			var op *model.Op
			for i := range o.History.Ops {
				if o.History.Ops[i].Line == e.Line {
					op = &o.History.Ops[i]
				}
			}
			if op == nil || !op.HasAt || op.At != e.T {
				t.Errorf("%s: event %q cites line %d at t=%d, the history's line is %+v", f, e.What, e.Line, e.T, op)
			}
		}
		if cited < 3 {
			t.Errorf("%s: %d events cite a history line, want the renewal, the takeover and the write or release", f, cited)
		}
		var b strings.Builder
		campaign.WriteDomainNotes(&b, n)
		if !strings.HasPrefix(b.String(), "\n## In Kubernetes terms\n\n") || !strings.Contains(b.String(), n.Keep) {
			t.Errorf("%s: the notes render as %q", f, b.String())
		}
	}
}
