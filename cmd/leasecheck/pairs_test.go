package main

import (
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
