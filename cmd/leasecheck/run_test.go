package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/model"
)

// buildBinary builds leasecheck into a temporary directory, so run, repro
// and check are exercised as separate processes. The plain build (no extra
// flags) is checkBinary's, built once per test run and shared: nothing
// writes to it, and each go build of it was a link of its own (~6 s).
func buildBinary(t *testing.T, extra ...string) string {
	t.Helper()
	if len(extra) == 0 {
		return checkBinary(t)
	}
	bin := filepath.Join(t.TempDir(), "leasecheck")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	args := append([]string{"build"}, extra...)
	args = append(args, "-o", bin, ".")
	cmd := exec.Command("go", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
	return bin
}

type result struct {
	stdout, stderr []byte
	code           int
}

func execBin(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{so.Bytes(), se.Bytes(), code}
}

type jsonSummary struct {
	Seeds       int            `json:"seeds"`
	Ops         int            `json:"ops"`
	Faults      map[string]int `json:"faults"`
	Violations  map[string]int `json:"violations"`
	FailedSeeds []uint64       `json:"failed_seeds"`
}

// TestRunThousandsOfSeeds: the reference passes thousands of seeds with every
// fault kind injected, and the summary is byte-identical with GOMAXPROCS=1
// and 4 (and, unless -short, in a -race build).
func TestRunThousandsOfSeeds(t *testing.T) {
	bin := buildBinary(t)
	// No search budget: an undecided verdict would depend on the machine's
	// speed, and the summaries are compared byte for byte.
	args := []string{"run", "--seeds", "3000", "--json", "--timeout", "0", "--out", t.TempDir()}
	r1 := execBin(t, bin, []string{"GOMAXPROCS=1"}, args...)
	if r1.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r1.code, r1.stdout, r1.stderr)
	}
	var s jsonSummary
	if err := json.Unmarshal(r1.stdout, &s); err != nil {
		t.Fatalf("run --json: %v\n%s", err, r1.stdout)
	}
	if s.Seeds != 3000 || s.Ops == 0 || len(s.FailedSeeds) != 0 {
		t.Errorf("summary: seeds=%d ops=%d failed=%v", s.Seeds, s.Ops, s.FailedSeeds)
	}
	for _, k := range faults.AllKinds {
		if s.Faults[string(k)] == 0 {
			t.Errorf("fault %s never injected in 3000 seeds", k)
		}
	}
	for p, n := range s.Violations {
		if n != 0 {
			t.Errorf("violations of %s: %d", p, n)
		}
	}
	r4 := execBin(t, bin, []string{"GOMAXPROCS=4"}, args...)
	if !bytes.Equal(r1.stdout, r4.stdout) {
		t.Errorf("summaries differ between GOMAXPROCS=1 and 4:\n%s\n%s", r1.stdout, r4.stdout)
	}
	if testing.Short() {
		return
	}
	race := buildBinary(t, "-race")
	short := []string{"run", "--seeds", "300", "--json", "--timeout", "0", "--out", t.TempDir()}
	rr := execBin(t, race, []string{"GOMAXPROCS=4"}, short...)
	rp := execBin(t, bin, nil, short...)
	if rr.code != 0 || !bytes.Equal(rr.stdout, rp.stdout) {
		t.Errorf("-race build differs (exit %d):\n%s\n%s\n%s", rr.code, rr.stdout, rp.stdout, rr.stderr)
	}
}

// TestRunHistoriesPassCheck: every history the simulator writes is accepted
// by `leasecheck check` run as a separate process, and repro rewrites the
// same bytes.
func TestRunHistoriesPassCheck(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	r := execBin(t, bin, nil, "run", "--seeds", "150", "--histories", dir, "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.history.jsonl"))
	if len(files) != 150 {
		t.Fatalf("%d histories saved, want 150", len(files))
	}
	for _, f := range files {
		c := execBin(t, bin, nil, "check", f)
		if c.code != 0 {
			t.Errorf("check %s: exit %d\n%s%s", f, c.code, c.stdout, c.stderr)
		}
	}
	want, _ := os.ReadFile(filepath.Join(dir, "seed-7.history.jsonl"))
	out := filepath.Join(t.TempDir(), "h.jsonl")
	rp := execBin(t, bin, nil, "repro", "7", "--history", out)
	got, _ := os.ReadFile(out)
	if rp.code != 0 || !bytes.Equal(got, want) || len(got) == 0 {
		t.Errorf("repro 7 (exit %d) wrote %d bytes, run wrote %d; differ=%v\n%s", rp.code, len(got), len(want), !bytes.Equal(got, want), rp.stderr)
	}
}

// TestReproScenarioFile: a saved scenario replays to the same history as its
// seed, the history is written only where --history asks (- for standard
// output), and a bad scenario is a usage error (exit 2).
func TestReproScenarioFile(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.json")
	a := execBin(t, bin, nil, "repro", "11", "--scenario", sc, "--history", "-")
	b := execBin(t, bin, nil, "repro", sc, "--history", "-")
	if a.code != 0 || b.code != 0 || !bytes.Equal(a.stdout, b.stdout) || len(a.stdout) == 0 {
		t.Fatalf("repro seed vs scenario file: exits %d %d, same=%v\n%s%s", a.code, b.code, bytes.Equal(a.stdout, b.stdout), a.stderr, b.stderr)
	}
	if _, err := model.ReadHistory(bytes.NewReader(a.stdout), "stdout"); err != nil {
		t.Errorf("repro --history - wrote no history: %v", err)
	}
	if !strings.Contains(string(a.stderr), "trace hash") {
		t.Errorf("repro should print the trace hash:\n%s", a.stderr)
	}
	plain := execBin(t, bin, nil, "repro", sc)
	if plain.code != 0 || len(plain.stdout) != 0 || !bytes.Equal(plain.stderr, b.stderr) {
		t.Errorf("repro without --history: exit %d, %d bytes on stdout (want none), the same report %v\n%s", plain.code, len(plain.stdout), bytes.Equal(plain.stderr, b.stderr), plain.stdout)
	}
	if c := execBin(t, bin, nil, "repro", sc, "--history", "-", "--json"); c.code != 2 || !strings.Contains(string(c.stderr), "both write standard output") {
		t.Errorf("repro --history - --json: exit %d, want 2 saying why\n%s", c.code, c.stderr)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"version":1,"ttl":-1}`), 0o644)
	if c := execBin(t, bin, nil, "repro", bad); c.code != 2 {
		t.Errorf("repro of a bad scenario: exit %d, want 2\n%s", c.code, c.stderr)
	}
	if c := execBin(t, bin, nil, "run", "--faults", "nope"); c.code != 2 {
		t.Errorf("run --faults nope: exit %d, want 2", c.code)
	}
}
