package main

import (
	"io"
	"strings"
	"testing"
)

// run --pairs and explore --pairs print the pair table, the pairs never
// reached first; explore's report names what it reached; --pairs with
// --shard is refused.
func TestPairsFlag(t *testing.T) {
	out, errOut, code := runCmd("run", "--seeds", "20", "--pairs", "--progress=false", "--save", "0")
	if code != exitOK || !strings.Contains(out, "pairs: ") || !strings.Contains(out, "over seeds 1..20") || !strings.Contains(out, "never reached (") {
		t.Fatalf("run --pairs: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runCmd("explore", "--faults", "crash", "--max-faults", "1", "--pairs", "--progress=false", "--out", t.TempDir())
	if code != exitOK || !strings.Contains(out, "pairs reached over this space") || !strings.Contains(out, "(complete over ") || !strings.Contains(out, "never reached (") {
		t.Fatalf("explore --pairs: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code = runCmd("explore", "--pairs", "--shard", "1/2", "--part", t.TempDir()+"/p.json"); code != exitUsage || !strings.Contains(errOut, "--pairs") {
		t.Fatalf("explore --pairs --shard: exit %d: %s", code, errOut)
	}
}

// run --coverage and explore --coverage (alone) are --pairs: the same
// table; a plain run or explore prints none.
func TestCoverageFlagIsPairs(t *testing.T) {
	out, errOut, code := runCmd("run", "--seeds", "20", "--coverage", "--progress=false", "--save", "0")
	if code != exitOK || !strings.Contains(out, "over seeds 1..20") || !strings.Contains(out, "never reached (") {
		t.Fatalf("run --coverage: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, _, _ = runCmd("run", "--seeds", "20", "--progress=false", "--save", "0"); strings.Contains(out, "never reached (") {
		t.Fatalf("run without --coverage printed the pair table:\n%s", out)
	}
	out, errOut, code = runCmd("explore", "--faults", "crash", "--max-faults", "1", "--coverage", "--progress=false", "--out", t.TempDir())
	if code != exitOK || !strings.Contains(out, "pairs reached over this space") || !strings.Contains(out, "never reached (") || strings.Contains(out, "coverage of the explored machines") {
		t.Fatalf("explore --coverage: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, _, _ = runCmd("explore", "--faults", "crash", "--max-faults", "1", "--progress=false", "--out", t.TempDir()); strings.Contains(out, "never reached (") {
		t.Fatalf("explore without --coverage printed the pair table:\n%s", out)
	}
}

// coverageArgs joins a directory to --coverage (its meaning before the
// pair table: Go's statement coverage, TestExploreCoverage) and leaves a
// --coverage followed by a flag, or last, alone.
func TestCoverageArgs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"--coverage dir --json", "--coverage=dir --json"},
		{"-coverage dir", "-coverage=dir"},
		{"--coverage=dir", "--coverage=dir"},
		{"--coverage --json", "--coverage --json"},
		{"--json --coverage", "--json --coverage"},
		{"--faults crash -- --coverage dir", "--faults crash -- --coverage dir"},
	} {
		if got := strings.Join(coverageArgs(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("coverageArgs(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	fs, f := exploreFlagSet(io.Discard)
	if err := fs.Parse(coverageArgs([]string{"--coverage", "d"})); err != nil || f.coverDir != "d" || f.pairs {
		t.Errorf("--coverage d: dir %q, pairs %v (%v)", f.coverDir, f.pairs, err)
	}
	fs, f = exploreFlagSet(io.Discard)
	if err := fs.Parse([]string{"--coverage"}); err != nil || f.coverDir != "" || !f.pairs {
		t.Errorf("--coverage: dir %q, pairs %v (%v)", f.coverDir, f.pairs, err)
	}
}
