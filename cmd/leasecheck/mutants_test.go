package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/impl/mutants"
)

func runCmd(args ...string) (stdout, stderr string, code int) {
	var so, se bytes.Buffer
	code = run(args, strings.NewReader(""), &so, &se)
	return so.String(), se.String(), code
}

func TestMutantsListCommand(t *testing.T) {
	out, errOut, code := runCmd("mutants")
	if code != exitOK {
		t.Fatalf("mutants = exit %d, want 0\n%s", code, errOut)
	}
	for _, m := range mutants.All() {
		if !strings.Contains(out, m.Name) || !strings.Contains(out, m.Article) || !strings.Contains(out, m.English) {
			t.Errorf("mutants: %s, its article sentence or its rendering missing", m.Name)
		}
	}
	out, _, code = runCmd("mutants", "--json")
	if code != exitOK {
		t.Fatalf("mutants --json = exit %d", code)
	}
	var list []struct {
		Name, Component, Failure, Article, English, Property, Replay string
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("mutants --json: %v\n%s", err, out)
	}
	if len(list) != len(mutants.All()) {
		t.Fatalf("mutants --json: %d entries, want %d", len(list), len(mutants.All()))
	}
	for _, e := range list {
		if e.Name == "" || e.Failure == "" || e.Article == "" || e.English == "" || e.Property == "" || e.Component == "" {
			t.Errorf("mutants --json: incomplete entry %+v", e)
		}
		if e.Replay != "leasecheck run --mutant "+e.Name {
			t.Errorf("mutants --json: replay %q", e.Replay)
		}
	}
	if _, _, code := runCmd("mutants", "extra"); code != exitUsage {
		t.Errorf("mutants extra = exit %d, want 2", code)
	}
}

// TestMutantRunFlag: run --mutant catches a mutant (a checker property and
// a run property), prints the replay line of the saved scenario, and
// refuses an unknown name.
func TestMutantRunFlag(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, prop string
		seeds      string
	}{
		{"greedy-grant", "linearizable", "5"},
		{"no-local-deadline", "exclusive-belief", "200"},
	}
	for _, tc := range cases {
		out, errOut, code := runCmd("run", "--mutant", tc.name, "--seeds", tc.seeds, "--json", "--out", dir, "--progress=false")
		if code != exitViolation {
			t.Fatalf("run --mutant %s = exit %d, want 1\n%s%s", tc.name, code, out, errOut)
		}
		var sum struct {
			Violations  map[string]int `json:"violations"`
			FailedSeeds []uint64       `json:"failed_seeds"`
		}
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatal(err)
		}
		if sum.Violations[tc.prop] == 0 || len(sum.FailedSeeds) == 0 {
			t.Errorf("run --mutant %s: violations %v, want %s", tc.name, sum.Violations, tc.prop)
		}
		if !strings.Contains(errOut, "replay: leasecheck repro "+dir+"/mutant-"+tc.name+"-seed-") {
			t.Errorf("run --mutant %s: no replay line in\n%s", tc.name, errOut)
		}
	}
	// The reference over the same seeds and faults passes.
	if out, errOut, code := runCmd("run", "--faults", "renew-death", "--seeds", "50", "--progress=false", "--out", dir); code != exitOK {
		t.Errorf("reference run = exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runCmd("run", "--mutant", "no-such-bug", "--seeds", "1"); code != exitUsage || !strings.Contains(errOut, "greedy-grant") {
		t.Errorf("run --mutant no-such-bug = exit %d, want 2 and the known names\n%s", code, errOut)
	}
}
