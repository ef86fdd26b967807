package k8slease

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/campaign"
	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
)

// TestRegressions replays every saved scenario in testdata/regressions/:
// exactly its expect is violated, and its saved history is recorded again
// byte for byte.
func TestRegressions(t *testing.T) {
	files, err := filepath.Glob("testdata/regressions/*.scenario.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no regression scenarios: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			o, err := Replay(t, f)
			if err != nil {
				t.Fatal(err)
			}
			if err := campaign.CheckExpect(o); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".scenario.json") + ".history.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := model.WriteHistory(&got, o.History); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s: the replay recorded a different history:\n%s", f, firstDiff(want, got.Bytes()))
			}
		})
	}
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
	unfenced, err := Replay(t, "testdata/regressions/zombie-write.scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	z := FindZombieWrite(unfenced)
	if z == nil {
		t.Fatal("the saved scenario shows no zombie write")
	}
	sc.Implementation, sc.Semantics, sc.Expect = Fenced, "fenced-storage", nil
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
	o, err := Replay(t, filepath.Join(dir, "fenced.scenario.json"))
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
