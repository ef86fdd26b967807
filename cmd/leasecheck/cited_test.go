package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasecheck/leasecheck/internal/campaign"
)

// Every history line a story cites is the op it describes in the file
// saved beside it: run's story on standard error and its .md against the
// saved (shrunk) history, and repro's story against the history it writes.
func TestStoriesCiteTheSavedFile(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"run", "--mutant", "renew-loop-dies", "--fail-fast", "--out", dir}, nil, &out, &errb)
	if code != exitViolation {
		t.Fatalf("run: exit %d\n%s", code, errb.String())
	}
	scenarios, _ := filepath.Glob(filepath.Join(dir, "*.scenario.json"))
	if len(scenarios) != 1 {
		t.Fatalf("saved %v, want one scenario", scenarios)
	}
	base := scenarios[0][:len(scenarios[0])-len(".scenario.json")]
	if err := campaign.CheckCitedLines(base+".history.jsonl", errb.String()); err != nil {
		t.Errorf("run's stderr: %v", err)
	}
	md, err := os.ReadFile(base + ".md")
	if err != nil {
		t.Fatal(err)
	}
	if err := campaign.CheckCitedLines(base+".history.jsonl", string(md)); err != nil {
		t.Errorf("%s.md: %v", base, err)
	}

	hist := filepath.Join(t.TempDir(), "replayed.history.jsonl")
	out.Reset()
	errb.Reset()
	code = run([]string{"repro", scenarios[0], "--history", hist}, nil, &out, &errb)
	if code != exitViolation {
		t.Fatalf("repro: exit %d\n%s", code, errb.String())
	}
	if err := campaign.CheckCitedLines(hist, errb.String()+out.String()); err != nil {
		t.Errorf("repro: %v", err)
	}

	// The check itself catches a story that cites the wrong file: the
	// saved history against a story of other lines.
	if err := campaign.CheckCitedLines(base+".history.jsonl", "no order explains line 2: h9 write(fence=9, \"zz\") -> ok [1,2]"); err == nil {
		t.Error("CheckCitedLines accepted a story describing line 2 as an op it is not")
	}
}
