package campaign

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
)

// TestSavedFailureReplays: a campaign saves its failing seeds shrunk, with
// scenario, history, page, story and trace; the scenario records the
// implementation, the fault kinds and the properties it violates, and
// replays (Replay, as repro does) to exactly them; the saved history fails
// the checker's properties again when they are history properties.
func TestSavedFailureReplays(t *testing.T) {
	for _, name := range []string{"greedy-grant", "renew-loop-dies", "no-local-deadline"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := mutantConfig(name, 200)
			cfg.FailFast = true
			cfg.Save = SaveOptions{Dir: dir}
			var f *Failure
			cfg.OnFailure = func(x *Failure) { f = x }
			sweep(t, cfg)
			if f == nil || f.Saved == nil {
				t.Fatalf("no failure saved (%+v)", f)
			}
			s := f.Saved
			for _, p := range s.Files() {
				if st, err := os.Stat(p); err != nil || st.Size() == 0 {
					t.Errorf("%s: %v", p, err)
				}
			}
			// One page per failure: the timeline, porcupine's view left out
			// (its labels overlapped in a frame of the page).
			if page, err := os.ReadFile(s.Page); err != nil || !bytes.Contains(page, []byte("leasecheck timeline")) || bytes.Contains(page, []byte("<iframe")) {
				t.Errorf("%s: %v, or not the timeline alone", s.Page, err)
			}
			if others, _ := filepath.Glob(filepath.Join(dir, "*.html")); len(others) != 1 {
				t.Errorf("HTML files saved: %q, want the one page", others)
			}
			if s.From == nil || !SizeOf(s.Outcome).Less(*s.From) {
				t.Errorf("not shrunk: %v from %v", SizeOf(s.Outcome), s.From)
			}
			sc, err := scenario.Load(s.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Implementation != "mutant:"+name || len(sc.FaultKinds) == 0 || !slices.Equal(sc.Expect, f.Outcome.Failed()) {
				t.Errorf("saved scenario: implementation %q, fault kinds %v, expect %v (the seed failed %v)", sc.Implementation, sc.FaultKinds, sc.Expect, f.Outcome.Failed())
			}
			o, err := Replay(context.Background(), sc, JudgeOptions{Budget: -1})
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckExpect(o); err != nil {
				t.Errorf("replay: %v", err)
			}
			h, err := model.ReadHistoryFile(s.History)
			if err != nil {
				t.Fatal(err)
			}
			res, err := checker.Check(context.Background(), h, checker.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range sc.Expect {
				if !IsRunProperty(p) && res.Verdict(p) != checker.Violated {
					t.Errorf("the saved history does not violate %s", p)
				}
			}
			story, _ := os.ReadFile(s.Story)
			for _, want := range []string{"leasecheck repro " + s.Scenario, "## What happened", "## Keep it as a regression test", "testdata/regressions", "`" + sc.Expect[0] + "`",
				"leasecheck repro --json " + s.Scenario} {
				if !strings.Contains(string(story), want) {
					t.Errorf("story lacks %q:\n%s", want, story)
				}
			}
			// A user cannot import leasecheck's internal packages: the story
			// keeps the failure with a command.
			if strings.Contains(string(story), "scenario.Load") {
				t.Errorf("the story tells the user to call scenario.Load:\n%s", story)
			}
		})
	}
}

// TestCheckExpect: a replay matches its expect exactly; one property
// missing or one more is a mismatch, named.
func TestCheckExpect(t *testing.T) {
	sc, err := scenario.Load(filepath.Join(counterexampleDir, "no-expiry.scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := Replay(context.Background(), sc, JudgeOptions{Budget: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckExpect(o); err != nil {
		t.Fatal(err)
	}
	o.Scenario = sc.Clone()
	o.Scenario.Expect = []string{"liveness-recovery"}
	if err := CheckExpect(o); err == nil || !strings.Contains(err.Error(), "also violates linearizable") {
		t.Errorf("one more violated: %v", err)
	}
	o.Scenario.Expect = []string{"linearizable", "liveness-recovery", "fence-monotonic"}
	if err := CheckExpect(o); err == nil || !strings.Contains(err.Error(), "no longer violates fence-monotonic") {
		t.Errorf("one missing: %v", err)
	}
	o.Scenario.Expect = nil
	if err := CheckExpect(o); err == nil {
		t.Error("a failing replay of a scenario that expects nothing: no mismatch")
	}
}

func TestParseTarget(t *testing.T) {
	for impl, want := range map[string]string{"": "reference", "reference": "reference", "mutant:no-expiry": "mutant:no-expiry"} {
		tg, err := ParseTarget(impl)
		if err != nil || tg.Implementation() != want {
			t.Errorf("ParseTarget(%q) = %v, %v", impl, tg, err)
		}
	}
	for _, bad := range []string{"mutant:nope", "backend:etcd", "etcd", "Reference"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) accepted", bad)
		}
	}
}

// TestSavedFailuresNeverShareAName: two planted bugs failing at the same
// seeds, saved into one directory, keep every file of both (the names carry
// the implementation); a different failure saved under an existing name is
// refused and writes nothing, while saving the same failure again (a
// deterministic rerun) changes nothing and succeeds.
func TestSavedFailuresNeverShareAName(t *testing.T) {
	dir := t.TempDir()
	saved := map[string]map[uint64]*Saved{}
	for _, name := range []string{"greedy-grant", "trust-local-clock"} {
		cfg := mutantConfig(name, 40)
		cfg.Save = SaveOptions{Dir: dir, Max: -1, NoShrink: true}
		saved[name] = map[uint64]*Saved{}
		cfg.OnFailure = func(f *Failure) {
			if f.SaveErr != nil {
				t.Fatalf("%s seed %d: %v", name, f.Seed, f.SaveErr)
			}
			saved[name][f.Seed] = f.Saved
		}
		sweep(t, cfg)
	}
	common := 0
	for seed, a := range saved["greedy-grant"] {
		b, ok := saved["trust-local-clock"][seed]
		if !ok {
			continue
		}
		common++
		if a.Scenario == b.Scenario {
			t.Fatalf("seed %d: both saved as %s", seed, a.Scenario)
		}
		for name, s := range map[string]*Saved{"greedy-grant": a, "trust-local-clock": b} {
			sc, err := scenario.Load(s.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Implementation != "mutant:"+name || !strings.Contains(filepath.Base(s.Scenario), name) {
				t.Errorf("seed %d: %s holds %s's failure, want %s's", seed, s.Scenario, sc.Implementation, name)
			}
		}
	}
	if common == 0 {
		t.Fatal("the two mutants share no failing seed: the collision is untested")
	}

	var seed uint64
	var first *Saved
	for seed, first = range saved["greedy-grant"] {
		break
	}
	before := map[string][]byte{}
	for _, f := range first.Files() {
		before[f], _ = os.ReadFile(f)
	}
	// The same failure again: allowed, nothing changes.
	if _, err := WriteFailure(dir, strings.TrimSuffix(filepath.Base(first.Scenario), ".scenario.json"), first.Outcome, nil, nil); err != nil {
		t.Errorf("saving the same failure again: %v", err)
	}
	// Another failure under that name: refused, nothing written.
	var other *Saved
	for s, o := range saved["trust-local-clock"] {
		if s != seed {
			other = o
			break
		}
	}
	if other == nil {
		for _, o := range saved["trust-local-clock"] {
			other = o
		}
	}
	_, err := WriteFailure(dir, strings.TrimSuffix(filepath.Base(first.Scenario), ".scenario.json"), other.Outcome, nil, nil)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), dir) {
		t.Errorf("saving another failure over %s: %v, want ErrExists naming the file", first.Scenario, err)
	}
	for f, b := range before {
		if now, _ := os.ReadFile(f); !bytes.Equal(now, b) {
			t.Errorf("%s was overwritten", f)
		}
	}
}

// TestFileName: names of implementations and backends become file-name
// parts without separators, and FailureName tells implementations apart.
func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"mutant:renew-loop-dies":   "mutant-renew-loop-dies",
		"redis://127.0.0.1:6379/2": "redis-127.0.0.1-6379-2",
		"bsm/redislock":            "bsm-redislock",
		"backend:etcd34-mutex":     "backend-etcd34-mutex",
		`a\b c..d`:                 "a-b-c..d",
		"::":                       "",
	} {
		if got := FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
	if a, b := FailureName(ImplReference, 7), FailureName("mutant:greedy-grant", 7); a == b || a != "reference-seed-7" {
		t.Errorf("FailureName: %q and %q", a, b)
	}
}
