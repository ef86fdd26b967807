package campaign

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

var update = flag.Bool("update", false, "search, shrink and rewrite the counterexamples under testdata/scenarios/mutants")

// updateStories rewrites only the stories of the scenarios as committed:
// for a change in how stories are told, which should not reshrink them.
var updateStories = flag.Bool("update-stories", false, "rewrite only the .md stories of the committed counterexamples")

// counterexampleDir holds one shrunk scenario (and its story) per mutant,
// as the repository root names it in the stories' commands.
const (
	counterexampleDir  = "../../testdata/scenarios/mutants"
	counterexampleName = "testdata/scenarios/mutants"
)

// TestMutantsCaught is the mutation test: from base seed 1, every mutant is
// caught within mutants.DefaultBudget seeds by the property it is expected
// to break, and the reference passes every property on every seed tried.
func TestMutantsCaught(t *testing.T) {
	for _, m := range mutants.All() {
		t.Run(m.Name, func(t *testing.T) {
			d, err := Detect(context.Background(), m, 1, mutants.DefaultBudget, true)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Caught() {
				t.Fatalf("%s: %s never failed in %d seeds (faults %v); the harness lost its teeth", m.Name, m.Property, d.Seeds, m.Faults)
			}
			if len(d.RefFailed) > 0 {
				t.Fatalf("false alarm: the reference failed seeds %v of %s's search", d.RefFailed, m.Name)
			}
			t.Logf("%s caught by %v at seed %d (%d seeds, %v)", m.Name, d.Failed, d.Seed, d.Seeds, d.Elapsed)
		})
	}
}

// TestMutantCounterexamples replays each mutant's shrunk counterexample as
// `leasecheck repro FILE` does (campaign.Replay, from the implementation the
// file records): the mutant fails the expected property and exactly the
// file's expect, the reference passes everything, and the story is
// current. With -update it first searches (base seed 1), shrinks and
// rewrites the files.
func TestMutantCounterexamples(t *testing.T) {
	ctx := context.Background()
	for _, m := range mutants.All() {
		t.Run(m.Name, func(t *testing.T) {
			path := filepath.Join(counterexampleDir, m.Name+".scenario.json")
			if *update {
				small, _, err := Counterexample(ctx, m, 1, CounterexampleSeeds)
				if err != nil {
					t.Fatal(err)
				}
				if err := small.Save(path); err != nil {
					t.Fatal(err)
				}
			}
			sc, err := scenario.Load(path)
			if err != nil {
				t.Fatalf("%v (regenerate: go test ./internal/campaign -run TestMutantCounterexamples -update)", err)
			}
			if want := "mutant:" + m.Name; sc.Implementation != want {
				t.Fatalf("%s: implementation %q, want %q (repro would not replay the mutant)", path, sc.Implementation, want)
			}
			o, err := Replay(ctx, sc, JudgeOptions{Budget: DetectCheckBudget})
			if err != nil {
				t.Fatal(err)
			}
			if !o.Fails(m.Property) {
				t.Fatalf("%s: %s no longer fails %s (failed: %v)", m.Name, path, m.Property, o.Failed())
			}
			if err := CheckExpect(o); err != nil {
				t.Errorf("%s: %v", path, err)
			}
			ref, err := Judge(ctx, Reference(), sc, JudgeOptions{Budget: DetectCheckBudget})
			if err != nil {
				t.Fatal(err)
			}
			if ref.Violated() || ref.Undecided() {
				t.Fatalf("false alarm: the reference fails %v on %s", ref.Failed(), path)
			}
			md := filepath.Join(counterexampleDir, m.Name+".md")
			var b bytes.Buffer
			WriteStory(&b, o, StoryInfo{Title: m.Name, ScenarioFile: counterexampleName + "/" + m.Name + ".scenario.json",
				GoTest: "go test ./internal/campaign -run 'TestMutantCounterexamples/" + m.Name + "$' -v"})
			if *update || *updateStories {
				if err := os.WriteFile(md, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, b.Bytes()) {
				t.Errorf("%s is stale (regenerate with -update and read the diff)", md)
			}
			t.Logf("%s: %s", m.Name, SizeOf(o))
		})
	}
}
