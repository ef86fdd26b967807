package campaign

import (
	"context"
	"testing"
	"time"
)

// TestShrinkForCutsPastTheViolation: a timed shrink (a real backend's) first
// runs the scenario cut one TTL after its violation ended. With a budget of
// that one candidate, the result is shorter than the failure and still
// fails the same way; the cut never ends the run before the violation (the
// candidate is kept only when it still fails).
func TestShrinkForCutsPastTheViolation(t *testing.T) {
	for _, name := range []string{"greedy-grant", "write-after-failed-renew", "renew-loop-dies"} {
		cfg := mutantConfig(name, 200)
		cfg.FailFast = true
		var f *Failure
		cfg.OnFailure = func(x *Failure) { f = x }
		sweep(t, cfg)
		if f == nil {
			t.Fatalf("%s: no failure", name)
		}
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
