package campaign

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
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
			for _, want := range []string{"leasecheck repro " + s.Scenario, "## What happened", "## Keep it as a regression test", "testdata/regressions", "`" + sc.Expect[0] + "`"} {
				if !strings.Contains(string(story), want) {
					t.Errorf("story lacks %q:\n%s", want, story)
				}
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
