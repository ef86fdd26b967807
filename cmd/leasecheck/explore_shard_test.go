package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExploreShardCommand: explore --shard I/4 for every I, then merge:
// the merged "verdict" is explore --json's for the unsharded run, byte for
// byte, and the exit status is the unsharded run's — on a mutant whose
// counterexample merge saves where --out says and repro replays. merge
// refuses a missing part and a mix of exploration parts and sweep
// summaries, naming the files.
func TestExploreShardCommand(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--mutant", "greedy-grant", "--progress=false"}
	var single, errb bytes.Buffer
	code := run(append([]string{"explore", "--json", "--no-minimize", "--out", filepath.Join(dir, "single")}, args...), nil, &single, &errb)
	if code != exitViolation {
		t.Fatalf("unsharded: exit %d\n%s", code, errb.String())
	}
	var parts []string
	for i := 1; i <= 4; i++ {
		file := filepath.Join(dir, fmt.Sprintf("part-%d.json", i))
		var out, e bytes.Buffer
		if code := run(append([]string{"explore", "--shard", fmt.Sprintf("%d/4", i), "--shard-width", "8", "--part", file}, args...), nil, &out, &e); code > exitViolation {
			t.Fatalf("part %d: exit %d\n%s%s", i, code, out.String(), e.String())
		}
		parts = append(parts, file)
	}
	var merged, me bytes.Buffer
	saved := filepath.Join(dir, "merged")
	if code := run(append([]string{"merge", "--out", saved}, parts...), nil, &merged, &me); code != exitViolation {
		t.Fatalf("merge: exit %d\n%s", code, me.String())
	}
	var a, b struct {
		Verdict json.RawMessage `json:"verdict"`
	}
	if err := json.Unmarshal(single.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(merged.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if len(a.Verdict) == 0 || !bytes.Equal(a.Verdict, b.Verdict) {
		t.Fatalf("merged verdict differs from the unsharded run's:\n%s\n%s", b.Verdict, a.Verdict)
	}
	files, _ := filepath.Glob(filepath.Join(saved, "*.scenario.json"))
	if len(files) != 1 {
		t.Fatalf("merge --out saved %v", files)
	}
	var out, e bytes.Buffer
	if code := run([]string{"repro", files[0]}, nil, &out, &e); code != exitViolation || !strings.Contains(e.String(), "VIOLATION linearizable") {
		t.Fatalf("repro %s: exit %d\n%s", files[0], code, e.String())
	}

	e.Reset()
	if code := run(append([]string{"merge"}, parts[0], parts[1], parts[3]), nil, &out, &e); code != exitUsage || !strings.Contains(e.String(), "part 3/4 is missing") {
		t.Errorf("merge without part 3: exit %d\n%s", code, e.String())
	}
	summary := filepath.Join(dir, "summary.json")
	var sum bytes.Buffer
	run([]string{"run", "--seeds", "3", "--json", "--progress=false", "--out", dir}, nil, &sum, &e)
	os.WriteFile(summary, sum.Bytes(), 0o644)
	e.Reset()
	if code := run([]string{"merge", parts[0], summary}, nil, &out, &e); code != exitUsage || !strings.Contains(e.String(), parts[0]+" is an exploration part") || !strings.Contains(e.String(), summary) {
		t.Errorf("merge of a part and a summary: exit %d\n%s", code, e.String())
	}
}
