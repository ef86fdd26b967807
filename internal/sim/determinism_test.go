package sim_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/model"
)

var update = flag.Bool("update", false, "rewrite testdata/scenarios/hashes.golden (review the diff)")

// fingerprint runs a seed and hashes what it produced: the loop's event
// hash, the history as written (format v1) and the trace.
func fingerprint(t testing.TB, seed uint64) (uint64, []byte) {
	sc := scenario.FromSeed(seed, scenario.Options{Kinds: faults.AllKinds})
	r, err := sim.Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := model.WriteHistory(&b, r.History); err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Trace {
		fmt.Fprintln(&b, e)
	}
	return r.Hash, b.Bytes()
}

// TestDeterminismTwoRuns: the same seed gives the same trace hash and
// byte-identical history and trace, run after run in one process.
func TestDeterminismTwoRuns(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		h1, b1 := fingerprint(t, seed)
		h2, b2 := fingerprint(t, seed)
		if h1 != h2 || !bytes.Equal(b1, b2) {
			t.Fatalf("seed %d: two runs differ: hash %x vs %x", seed, h1, h2)
		}
	}
}

// TestDeterminismGolden pins the hashes of the first seeds, so runs with
// GOMAXPROCS=1 or 4, with or without -race, on any machine, are compared
// with one another (`go test -race ./internal/sim`, `GOMAXPROCS=1 go test ./internal/sim`).
// After an intended change of the simulator or the holder, regenerate with
// `go test ./internal/sim -run Golden -update` and review the diff.
func TestDeterminismGolden(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "scenarios", "hashes.golden")
	var got strings.Builder
	got.WriteString("# seed  trace-hash  (go test ./internal/sim -run Golden -update rewrites this file)\n")
	for seed := uint64(1); seed <= 40; seed++ {
		h, b := fingerprint(t, seed)
		fmt.Fprintf(&got, "%d %016x %d\n", seed, h, len(b))
	}
	if *update {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got.String() {
		t.Errorf("trace hashes differ from %s:\ngot:\n%s\nwant:\n%s", path, got.String(), want)
	}
}
