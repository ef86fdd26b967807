package classbench

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/classgen"
)

// programs builds this tree's timing program (plain and deliberately
// slowed) and every release's, once per test run.
var (
	buildOnce sync.Once
	built     struct {
		now, slow Program
		releases  []Program
		dir       string
		err       error
	}
)

func programs(t *testing.T) (now, slow Program, releases []Program, dir string) {
	t.Helper()
	buildOnce.Do(func() {
		root, err := ModuleRoot()
		if err != nil {
			built.err = err
			return
		}
		if built.dir, err = os.MkdirTemp("", "classbench-test-"); err != nil {
			built.err = err
			return
		}
		if built.now, err = BuildCurrent(root, built.dir); err != nil {
			built.err = err
			return
		}
		if built.slow, err = BuildCurrent(root, built.dir, "leasecheck_slow"); err != nil {
			built.err = err
			return
		}
		for _, rel := range Releases {
			p, err := BuildRelease(root, built.dir, rel)
			if err != nil {
				built.err = err
				return
			}
			built.releases = append(built.releases, p)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.now, built.slow, built.releases, built.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// needRegress skips a timing test unless LEASECHECK_REGRESS=1: its times
// mean something only on a machine that runs nothing else meanwhile, so it
// runs on its own (make bench-regress; in CI after the other tests), never
// inside go test ./..., which runs packages in parallel.
func needRegress(t *testing.T) {
	t.Helper()
	if os.Getenv("LEASECHECK_REGRESS") != "1" {
		t.Skip("a timing test: run it alone, LEASECHECK_REGRESS=1 go test ./internal/classbench -run 'TestRegression|TestJudge' -count=1 -v (make bench-regress)")
	}
}

func runSample(t *testing.T, now Program, releases []Program, dir string, cells []classgen.Params, reps int) []CellResult {
	t.Helper()
	cfg := Config{Now: now, Releases: releases, Budget: 10 * time.Second, Reps: reps, Dir: t.TempDir()}
	_ = dir
	var results []CellResult
	for _, cell := range cells {
		r, err := RunCell(cfg, cell)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	var table bytes.Buffer
	WriteTable(&table, results)
	t.Logf("\n%s", table.String())
	return results
}

// TestRegressionSample is the regression check CI runs: on the fixed,
// seeded sample of the matrix, this tree's checker gives each cell's
// verdict, decides linearizability wherever a release did, and takes at
// most Factor times (plus Slack) the best release's time, all measured in
// this run on this machine, each the best of three runs.
func TestRegressionSample(t *testing.T) {
	needRegress(t)
	now, _, releases, dir := programs(t)
	for _, bad := range Judge(runSample(t, now, releases, dir, Sample(), 3)) {
		t.Error(bad)
	}
}

// TestRegressionCatchesSlowedChecker: the same check on a deliberately
// slowed checker (the build tag leasecheck_slow: ten times slower, and 20
// ms a key more) fails, naming the cells: every cell of the sample, since
// v0.3.1 — a listed release — has this tree's fast paths (before it was
// listed, a tenfold slowdown stayed within twice the releases on cells
// where every release was many times slower than this tree). One cell may
// escape on a noisy machine. The slowed build is timed beside the three
// latest releases only: they have every fast path the older ones have, so
// the best release's time, which the rule compares with, is theirs (the
// check above times every release; this one need not time them again).
func TestRegressionCatchesSlowedChecker(t *testing.T) {
	needRegress(t)
	_, slow, releases, dir := programs(t)
	releases = releases[max(len(releases)-3, 0):]
	cells := Sample()
	bad := Judge(runSample(t, slow, releases, dir, cells, 2))
	slower := 0
	for _, b := range bad {
		if strings.Contains(b, "the replay floor, more than") {
			slower++
		}
	}
	if slower < len(cells)-1 {
		t.Fatalf("the slowed checker broke the time rule on %d of %d cells, want at least %d: %q", slower, len(cells), len(cells)-1, bad)
	}
}

// The rules themselves, on measurements made up to test each both ways.
func TestJudgeRules(t *testing.T) {
	correct := classgen.Params{Ops: 1000, Keys: 1, Procs: 2, Seed: 1}
	planted := correct
	planted.Plant = classgen.PlantFenceMonotonic
	all := func(v string) map[string]string {
		m := map[string]string{}
		for _, p := range properties {
			m[p] = v
		}
		return m
	}
	cell := func(p classgen.Params, now, rel Measurement) CellResult {
		return CellResult{Cell: p, Planted: p.Plant != classgen.Correct, FloorNS: 1e6, Columns: []Column{{"now", now}, {"v0", rel}}}
	}
	ms := func(v map[string]string, d time.Duration) Measurement {
		return Measurement{RunOutput: RunOutput{Verdicts: v, NS: d.Nanoseconds()}}
	}
	fm := all("holds")
	fm["fence-monotonic"] = "violated"
	unknown := all("holds")
	unknown["linearizable"] = "unknown"
	for _, tc := range []struct {
		name string
		r    CellResult
		want string // "" when it passes
	}{
		{"right and as fast", cell(correct, ms(all("holds"), 50*time.Millisecond), ms(all("holds"), 50*time.Millisecond)), ""},
		{"within the factor", cell(correct, ms(all("holds"), 100*time.Millisecond), ms(all("holds"), 50*time.Millisecond)), ""},
		{"past the factor", cell(correct, ms(all("holds"), 120*time.Millisecond), ms(all("holds"), 50*time.Millisecond)), "more than 2x v0"},
		{"within the slack", cell(correct, ms(all("holds"), 12*time.Millisecond), ms(all("holds"), time.Millisecond)), ""},
		{"unknown where decided", cell(correct, ms(unknown, time.Millisecond), ms(all("holds"), time.Millisecond)), "where v0 decided"},
		{"the plant missed", cell(planted, ms(all("holds"), time.Millisecond), ms(fm, time.Millisecond)), "want fence-monotonic violated"},
		{"the plant found", cell(planted, ms(fm, time.Millisecond), ms(fm, time.Millisecond)), ""},
		{"a false alarm", cell(correct, ms(fm, time.Millisecond), ms(all("holds"), time.Millisecond)), "want every property holds"},
		{"a wrong release sets no time", cell(planted, ms(fm, 200*time.Millisecond), ms(all("holds"), time.Millisecond)), ""},
	} {
		bad := Judge([]CellResult{tc.r})
		switch {
		case tc.want == "" && len(bad) > 0:
			t.Errorf("%s: %q, want it to pass", tc.name, bad)
		case tc.want != "" && (len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), tc.want)):
			t.Errorf("%s: %q, want %q", tc.name, bad, tc.want)
		}
	}
}
