package fuzzing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every fuzz target of the module has a committed seed corpus: go test
// runs each seed on every run, and the fuzzer starts from something that
// reaches deep into the code instead of from nothing.
func TestEveryFuzzTargetHasASeedCorpus(t *testing.T) {
	root := filepath.Join("..", "..")
	targets, err := Targets(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) < 3 {
		t.Fatalf("found %d fuzz targets, %v: the module has FuzzScenario, FuzzReadHistory and FuzzCheck at least", len(targets), targets)
	}
	for _, why := range MissingCorpus(root, targets) {
		t.Error(why)
	}
}

// The check finds a target wherever it is, and tells a target with a
// corpus from one without (no directory, an empty one, a file go test
// would refuse); functions that are not fuzz targets, testdata and nested
// modules are not the module's targets.
func TestMissingCorpus(t *testing.T) {
	root := t.TempDir()
	write := func(path, s string) {
		t.Helper()
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("a/a_test.go", `package a
import "testing"
func FuzzSeeded(f *testing.F) {}
func FuzzBare(f *testing.F) {}
func Fuzzy(f *testing.F) {}
func FuzzWrongArg(t *testing.T) {}
`)
	write("a/testdata/fuzz/FuzzSeeded/seed-1", "go test fuzz v1\n[]byte(\"x\")\n")
	write("b/sub/b_test.go", "package sub\nimport \"testing\"\nfunc FuzzEmpty(f *testing.F) {}\nfunc FuzzRaw(f *testing.F) {}\n")
	if err := os.MkdirAll(filepath.Join(root, "b/sub/testdata/fuzz/FuzzEmpty"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("b/sub/testdata/fuzz/FuzzRaw/seed.bin", "\x00\x01raw bytes")
	write("a/testdata/x_test.go", "package x\nimport \"testing\"\nfunc FuzzInTestdata(f *testing.F) {}\n")
	write("nested/go.mod", "module example.com/n\n")
	write("nested/n_test.go", "package n\nimport \"testing\"\nfunc FuzzNested(f *testing.F) {}\n")

	targets, err := Targets(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range targets {
		names = append(names, tg.Package()+" "+tg.Name)
	}
	if got, want := strings.Join(names, ", "), "./a FuzzBare, ./a FuzzSeeded, ./b/sub FuzzEmpty, ./b/sub FuzzRaw"; got != want {
		t.Errorf("targets %s, want %s", got, want)
	}
	missing := MissingCorpus(root, targets)
	got := strings.Join(missing, "\n")
	for _, want := range []string{"FuzzBare: no seed corpus: a/testdata/fuzz/FuzzBare does not exist",
		"FuzzEmpty: no seed corpus: b/sub/testdata/fuzz/FuzzEmpty is empty",
		"FuzzRaw: b/sub/testdata/fuzz/FuzzRaw/seed.bin is not a Go fuzz corpus file"} {
		if !strings.Contains(got, filepath.FromSlash(want)) {
			t.Errorf("missing corpora:\n%s\nlack %q", got, want)
		}
	}
	if len(missing) != 3 || strings.Contains(got, "FuzzSeeded") {
		t.Errorf("missing corpora:\n%s\nwant exactly FuzzBare, FuzzEmpty and FuzzRaw", got)
	}
}

// Stats reads go test's progress lines: the execs and time of the last
// line, and as moving only the intervals in which execs grew — a minute
// spent minimizing shows as a stall even though go test calls it PASS.
func TestStats(t *testing.T) {
	out := `fuzz: elapsed: 0s, gathering baseline coverage: 0/12 completed
fuzz: elapsed: 3s, gathering baseline coverage: 12/12 completed, now fuzzing with 2 workers
fuzz: elapsed: 6s, execs: 40 (13/sec), new interesting: 3 (total: 15)
fuzz: elapsed: 9s, execs: 40 (0/sec), new interesting: 3 (total: 15)
fuzz: elapsed: 12s, execs: 40 (0/sec), new interesting: 3 (total: 15)
some test output: elapsed: 99s, execs: 9999 (1/sec)
fuzz: elapsed: 15s, execs: 100 (20/sec), new interesting: 4 (total: 16)
fuzz: elapsed: 1m0s, execs: 1000 (20/sec), new interesting: 4 (total: 16)
PASS
`
	s, err := Read(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if s.Elapsed != time.Minute || s.Execs != 1000 || s.Lines != 7 {
		t.Errorf("stats %+v, want 1m0s, 1000 execs, 7 lines", s)
	}
	// Moving: 3s..6s, 12s..15s and 15s..60s; not 0..3 (baseline, no
	// execs counted), nor 6s..12s (stalled).
	if s.Moving != 51*time.Second {
		t.Errorf("moving %v, want 51s", s.Moving)
	}
	if r := s.Rate(); r < 16.6 || r > 16.7 {
		t.Errorf("rate %.2f, want 1000/60", r)
	}
	stalled, _ := Read(strings.NewReader("fuzz: elapsed: 0s, execs: 0 (0/sec)\nfuzz: elapsed: 3s, execs: 0 (0/sec)\n"))
	if stalled.MovingShare() != 0 || stalled.Execs != 0 {
		t.Errorf("a target that executed nothing: %+v", stalled)
	}
}
