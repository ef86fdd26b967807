package campaign

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/scenario"
)

// TestShrinkForCutsPastTheViolation: a timed shrink (a real backend's) first
// runs the scenario cut one TTL after its violation ended. With a budget of
// that one candidate, the result is shorter than the failure and still
// fails the same way; the cut never ends the run before the violation (the
// candidate is kept only when it still fails).
func TestShrinkForCutsPastTheViolation(t *testing.T) {
	for _, name := range []string{"greedy-grant", "write-after-failed-renew", "renew-loop-dies"} {
		cfg, f := firstFailure(t, name, 200)
		h, ok := horizonPastViolation(f.Outcome)
		if !ok {
			t.Logf("%s seed %d: its violation ends within a TTL of the horizon (%d)", name, f.Seed, f.Outcome.Scenario.Horizon)
			continue
		}
		end := h - f.Outcome.Scenario.TTL
		for _, v := range f.Outcome.Violations() {
			for _, l := range v.Lines {
				for _, op := range f.Outcome.History.Ops {
					if op.Line == l && endOf(op) > end {
						t.Errorf("%s: the cut (%d) leaves out line %d, which ends at %d", name, h, l, endOf(op))
					}
				}
			}
		}
		small, st, err := ShrinkWithStats(context.Background(), cfg.Target, f.Outcome,
			ShrinkOptions{Exact: true, KeepOutcomes: true, For: time.Minute, Budget: 1})
		if err != nil {
			t.Fatal(err)
		}
		if st.Tried != 1 {
			t.Errorf("%s: %d candidates tried on a budget of 1", name, st.Tried)
		}
		if st.Kept == 1 {
			if small.Scenario.Horizon != h || !small.Violated() {
				t.Errorf("%s: kept horizon %d (want %d), violated %v", name, small.Scenario.Horizon, h, small.Violated())
			}
			if SizeOf(f.Outcome).Less(SizeOf(small)) {
				t.Errorf("%s: the cut grew the story: %v from %v", name, SizeOf(small), SizeOf(f.Outcome))
			}
		}
		t.Logf("%s seed %d: horizon %d -> %d, %v -> %v (%s)", name, f.Seed, f.Outcome.Scenario.Horizon, h, SizeOf(f.Outcome), SizeOf(small), st)
	}
}

// recorded is a target that keeps the scenario of every run.
type recorded struct {
	Target
	runs []string
}

func (r *recorded) Run(ctx context.Context, sc *scenario.Scenario) (*Execution, error) {
	b, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	r.runs = append(r.runs, string(b))
	return r.Target.Run(ctx, sc)
}

// TestShrinkForRunsNoCandidateTwice: a timed shrink (each candidate a real
// run of seconds) never runs the same candidate twice, though its coarse
// and one-step lists propose some again.
func TestShrinkForRunsNoCandidateTwice(t *testing.T) {
	cfg, f := firstFailure(t, "write-after-failed-renew", 200)
	dups := func(opts ShrinkOptions) (int, ShrinkStats) {
		r := &recorded{Target: cfg.Target}
		_, st, err := ShrinkWithStats(context.Background(), r, f.Outcome, opts)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		n := 0
		for _, s := range r.runs {
			if seen[s] {
				n++
			}
			seen[s] = true
		}
		return n, st
	}
	// The coarse shrink's lists, run bare: the candidates they propose again.
	var proposed []string
	scenario.ShrinkCoarse(f.Outcome.Scenario, func(c *scenario.Scenario) (bool, int) {
		b, _ := json.Marshal(c)
		proposed = append(proposed, string(b))
		co, err := Judge(context.Background(), cfg.Target, c, JudgeOptions{Budget: -1})
		if err != nil || !co.Violated() {
			return false, 0
		}
		return true, co.Ops() + 4*len(c.Holders) + 4*len(c.Faults)
	}, DefaultShrinkBudget)
	again := 0
	seen := map[string]bool{}
	for _, s := range proposed {
		if seen[s] {
			again++
		}
		seen[s] = true
	}
	timed, st := dups(ShrinkOptions{Exact: true, KeepOutcomes: true, For: time.Hour})
	t.Logf("the coarse lists propose %d of %d candidates again; the timed shrink ran %d again (%s)", again, len(proposed), timed, st)
	if again == 0 {
		t.Error("the coarse lists propose no candidate twice: the test shows nothing")
	}
	if timed != 0 {
		t.Errorf("a timed shrink ran %d candidates a second time", timed)
	}
}

// firstFailure sweeps the planted bug name over seeds until its first
// failure.
func firstFailure(t *testing.T, name string, seeds int) (Config, *Failure) {
	t.Helper()
	cfg := mutantConfig(name, seeds)
	cfg.FailFast = true
	var f *Failure
	cfg.OnFailure = func(x *Failure) { f = x }
	sweep(t, cfg)
	if f == nil {
		t.Fatalf("%s: no failure in %d seeds", name, seeds)
	}
	return cfg, f
}
