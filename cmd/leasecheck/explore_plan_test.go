package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/explore"
)

// --plan FILE searches the file's spaces one after another and says so;
// --print-plan writes the default plan in that form; a bad file, or a plan
// beside a flag that shapes one space, is a usage error naming the file
// and line.
func TestExplorePlanFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "plan.json")
	os.WriteFile(good, []byte("[\n  {},\n  {\"deviations\": 1, \"semantics\": \"fenced-storage\"}\n]\n"), 0o644)
	r, errOut, code := exploreCmd(t, "--plan", good, "--out", dir)
	if code != exitOK || !r.Complete || r.DistinctStates == 0 {
		t.Fatalf("explore --plan %s: exit %d, complete %v, %d distinct states\n%s", good, code, r.Complete, r.DistinctStates, errOut)
	}
	out, errOut, code := runCmd("explore", "--plan", good, "--out", dir)
	if code != exitOK || !strings.Contains(out, "2 spaces explored one after another (2 planned)") || !strings.Contains(out, "fenced-storage") {
		t.Fatalf("explore --plan: exit %d, the report does not list the two spaces:\n%s\n%s", code, out, errOut)
	}

	out, errOut, code = runCmd("explore", "--print-plan")
	if code != exitOK || !strings.HasPrefix(out, "[\n") || strings.Count(out, "\n  {") != len(explore.DefaultPlan()) {
		t.Fatalf("explore --print-plan: exit %d:\n%s\n%s", code, out, errOut)
	}
	printed := filepath.Join(dir, "default.json")
	os.WriteFile(printed, []byte(out), 0o644)
	again, _, code := runCmd("explore", "--plan", printed, "--print-plan")
	if code != exitOK || again != out {
		t.Fatalf("the printed default plan, read back, prints differently (exit %d):\n%s", code, again)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("[\n  {},\n  {\"faults\": [\"meteor\"], \"max_faults\": 1}\n]\n"), 0o644)
	for _, args := range [][]string{
		{"--plan", bad},
		{"--plan", filepath.Join(dir, "missing.json")},
		{"--plan", good, "--holders", "3"},
		{"--plan", good, "--mutant", "greedy-grant"},
	} {
		_, errOut, code := runCmd(append([]string{"explore"}, args...)...)
		if code != exitUsage {
			t.Errorf("explore %v: exit %d, want %d\n%s", args, code, exitUsage, errOut)
		}
		if len(args) > 2 && !strings.Contains(errOut, "--plan searches its own spaces") {
			t.Errorf("explore %v: the error does not say --plan and the flag conflict:\n%s", args, errOut)
		}
		if args[1] == bad && !strings.Contains(errOut, bad+":3: space 2: fault kind \"meteor\"") {
			t.Errorf("explore %v: the error does not name the file, line and reason:\n%s", args, errOut)
		}
	}
}
