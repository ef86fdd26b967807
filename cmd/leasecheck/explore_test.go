package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/campaign"
)

// exploreJSON is the part of explore --json the issue promises.
type exploreJSON struct {
	Strategy       string         `json:"strategy"`
	Complete       bool           `json:"complete"`
	States         int64          `json:"states"`
	DistinctStates int64          `json:"distinct_states"`
	MaxDepth       int            `json:"max_depth"`
	Pruned         int64          `json:"pruned"`
	Violations     map[string]int `json:"violations"`
	Counterexample *struct {
		Property string `json:"property"`
		Steps    int    `json:"steps"`
		File     string `json:"file"`
	} `json:"counterexample"`
}

func exploreCmd(t *testing.T, args ...string) (exploreJSON, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"explore", "--json"}, args...), nil, &out, &errb)
	var r exploreJSON
	if code != exitUsage {
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("explore %v: %v\n%s\n%s", args, err, out.String(), errb.String())
		}
	}
	return r, errb.String(), code
}

// TestExploreReference: the reference in a small bounded space: exit 0,
// complete, counts in the JSON, every property listed.
func TestExploreReference(t *testing.T) {
	r, _, code := exploreCmd(t, "--faults", "crash,pause", "--max-faults", "1")
	if code != exitOK || !r.Complete || r.Strategy != "auto" || r.Counterexample != nil {
		t.Fatalf("exit %d, %+v", code, r)
	}
	if r.States == 0 || r.DistinctStates == 0 || r.MaxDepth == 0 || len(r.Violations) != len(campaign.Properties()) {
		t.Fatalf("counts missing: %+v", r)
	}
}

// TestExploreMutant: a mutant is found (exit 1), its counterexample saved
// where --out says, and `leasecheck repro FILE` alone replays it to a
// violation.
func TestExploreMutant(t *testing.T) {
	dir := t.TempDir()
	r, stderr, code := exploreCmd(t, "--mutant", "greedy-grant", "--out", dir)
	if code != exitViolation || r.Counterexample == nil || r.Violations["linearizable"] == 0 {
		t.Fatalf("exit %d, %+v\n%s", code, r, stderr)
	}
	file := r.Counterexample.File
	if filepath.Dir(file) != dir || !strings.HasSuffix(file, ".scenario.json") || !strings.Contains(stderr, "leasecheck repro "+file) {
		t.Fatalf("counterexample file %q, stderr %q", file, stderr)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"repro", file}, nil, &out, &errb); code != exitViolation || !strings.Contains(errb.String(), "VIOLATION linearizable") {
		t.Fatalf("repro %s: exit %d\n%s", file, code, errb.String())
	}
}

// TestExploreBudget: a budget that ends first is exit 3, never a claim.
func TestExploreBudget(t *testing.T) {
	r, _, code := exploreCmd(t, "--max-states", "50")
	if code != exitUnknown || r.Complete {
		t.Fatalf("exit %d, complete %v", code, r.Complete)
	}
}

// TestExploreUsage: bad flags are exit 2 with a message.
func TestExploreUsage(t *testing.T) {
	for _, args := range [][]string{{"--strategy", "random"}, {"--mutant", "nope"}, {"--faults", "gc"}, {"--holders", "0"}, {"--semantics", "x"}, {"extra"}} {
		if _, stderr, code := exploreCmd(t, args...); code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestExploreDeterministic: identical JSON on two runs, in two processes
// under GOMAXPROCS 1 and 4.
func TestExploreDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	args := []string{"explore", "--json", "--faults", "crash,pause", "--out", t.TempDir()}
	var want string
	for i, procs := range []string{"1", "4", "1", "4"} {
		res := execBin(t, bin, []string{"GOMAXPROCS=" + procs}, args...)
		if res.code != exitOK {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		if i == 0 {
			want = string(res.stdout)
		} else if string(res.stdout) != want {
			t.Fatalf("GOMAXPROCS=%s differs:\n%s\n%s", procs, res.stdout, want)
		}
	}
}

// TestExploreBudgetsAndExits: a run that finds nothing exits 0 — PCT's too,
// though it is never complete —, and a run stopped by a budget exits 3
// with a message naming the budget and the flag that lifts it.
func TestExploreBudgetsAndExits(t *testing.T) {
	r, _, code := exploreCmd(t, "--strategy", "pct", "--runs", "20", "--faults", "crash")
	if code != exitOK || r.Complete || r.Counterexample != nil {
		t.Fatalf("pct finding nothing: exit %d, complete %v", code, r.Complete)
	}
	for _, c := range []struct{ flag, val, says string }{
		{"--max-states", "100", "--max-states 100"},
		{"--timeout", "1ns", "--timeout 1ns"},
		{"--max-memory", "1K", "--max-memory"},
	} {
		r, stderr, code := exploreCmd(t, "--faults", "crash", c.flag, c.val)
		if code != exitUnknown || r.Complete || !strings.Contains(stderr, c.says) {
			t.Fatalf("%s %s: exit %d, complete %v, stderr %q", c.flag, c.val, code, r.Complete, stderr)
		}
	}
}
