package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/explore"
)

// TestExploreCoverage: explore --coverage re-runs the exploration in a
// build with Go's coverage and reports, per explored package, the share of
// statements run — equal to what Go's own `go tool covdata percent` says
// of the same counters (an independent reading) — and the code never run:
// memstore's Read is listed (no space here has a reader), the holder's
// Tick, which every run calls, is not. The text report says the same.
func TestExploreCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds leasecheck with -cover")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the go command is not on PATH")
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"explore", "--faults", "crash", "--max-faults", "1", "--progress=false", "--coverage", dir}
	if code := run(append(args, "--json"), nil, &out, &errb); code != exitOK {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	var r struct {
		Reductions []string          `json:"reductions"`
		Coverage   *explore.Coverage `json:"coverage"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Coverage == nil {
		t.Fatalf("no coverage (%v) in %.400s", err, out.String())
	}
	if !slices.Equal(r.Reductions, []string{"state hashing", "sleep sets"}) {
		t.Errorf("reductions %v", r.Reductions)
	}
	pct, err := exec.Command("go", "tool", "covdata", "percent", "-i="+filepath.Join(dir, "counters"), "-pkg="+strings.Join(coveredPackages, ",")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Coverage.Packages) != len(coveredPackages) {
		t.Fatalf("packages %+v", r.Coverage.Packages)
	}
	for _, p := range r.Coverage.Packages {
		if p.Statements == 0 || p.Covered == 0 || p.Covered >= p.Statements {
			t.Errorf("%s: %d of %d statements", p.Package, p.Covered, p.Statements)
		}
		if want := fmt.Sprintf("%s\t\tcoverage: %.1f%% of statements", p.Package, p.Percent); !strings.Contains(string(pct), want) {
			t.Errorf("%s: %.1f%%, but go tool covdata percent says\n%s", p.Package, p.Percent, pct)
		}
	}
	holder, store := r.Coverage.Packages[0], r.Coverage.Packages[1]
	named := func(fs []string, file, name string) bool {
		return slices.ContainsFunc(fs, func(f string) bool { return strings.HasPrefix(f, file+":") && strings.HasSuffix(f, ":"+name) })
	}
	if !named(store.UnreachedFunctions, "store.go", "Read") || len(store.Unreached) == 0 {
		t.Errorf("memstore's Read is not reported never run: %v", store.UnreachedFunctions)
	}
	if named(holder.UnreachedFunctions, "holder.go", "Tick") || !named(holder.UnreachedFunctions, "reader.go", "Tick") {
		t.Errorf("the holder's Tick reported never run, or the reader's run: %v", holder.UnreachedFunctions)
	}
	out.Reset()
	if code := run(args, nil, &out, &errb); code != exitOK || !strings.Contains(out.String(), "coverage of the explored machines") ||
		!strings.Contains(out.String(), fmt.Sprintf("%5.1f%% of %d statements run", store.Percent, store.Statements)) {
		t.Errorf("text report: exit %d\n%s", code, out.String())
	}
}
