package campaign

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/scenario"
)

// watched is a Target that records overlapping runs and runs that start
// while a failure is being told (OnFailure in progress).
type watched struct {
	Target
	mu               sync.Mutex
	active, overlaps int
	telling          bool
	duringFailure    int
	runs             int
}

func (w *watched) Run(ctx context.Context, sc *scenario.Scenario) (*Execution, error) {
	w.mu.Lock()
	w.active++
	w.runs++
	if w.active > 1 {
		w.overlaps++
	}
	if w.telling {
		w.duringFailure++
	}
	w.mu.Unlock()
	defer func() { w.mu.Lock(); w.active--; w.mu.Unlock() }()
	return w.Target.Run(ctx, sc)
}

// TestSequential: with Config.Sequential no two seeds run at once and no
// seed starts while a failure is being told (a real backend's rounds must
// not overlap each other or a failure's shrinking), whatever Workers says;
// the summary is the same bytes as a parallel campaign's; and FailFast
// runs nothing past the first failure.
func TestSequential(t *testing.T) {
	want, _ := sweep(t, mutantConfig("write-after-failed-renew", 60))
	for _, failFast := range []bool{false, true} {
		cfg := mutantConfig("write-after-failed-renew", 60)
		w := &watched{Target: cfg.Target}
		cfg.Target, cfg.Sequential, cfg.Workers, cfg.FailFast = w, true, 8, failFast
		failures := 0
		cfg.OnFailure = func(f *Failure) {
			failures++
			w.mu.Lock()
			w.telling = true
			w.mu.Unlock()
			time.Sleep(20 * time.Millisecond) // a shrink takes time: would the next seed start?
			w.mu.Lock()
			w.telling = false
			w.mu.Unlock()
		}
		s, _ := sweep(t, cfg)
		if failures == 0 {
			t.Fatal("no failure: the test shows nothing")
		}
		if w.overlaps > 0 || w.duringFailure > 0 {
			t.Errorf("fail-fast=%v: %d runs overlapped, %d started while a failure was told", failFast, w.overlaps, w.duringFailure)
		}
		if failFast {
			if w.runs != s.Seeds {
				t.Errorf("fail-fast: %d runs for %d seeds counted: ran past the first failure", w.runs, s.Seeds)
			}
			continue
		}
		// The watcher hides that the target is simulated (no simulator
		// stats in its summary): the counts must match.
		if s.Seeds != want.Seeds || s.Ops != want.Ops || s.Failed != want.Failed || !slices.Equal(s.FailedSeeds, want.FailedSeeds) || !maps.Equal(s.Violations, want.Violations) {
			t.Errorf("sequential and parallel summaries differ: %+v vs %+v", s, want)
		}
	}
}

// TestShrinkForAndKeepOutcomes: a time budget ends the shrink with the
// smallest scenario found so far and says so; KeepOutcomes returns the
// kept candidate's own outcome, not a new run of it; the original is not
// run again to measure it.
func TestShrinkForAndKeepOutcomes(t *testing.T) {
	cfg, f := firstFailure(t, "greedy-grant", 50)
	w := &watched{Target: cfg.Target}
	full, st, err := ShrinkWithStats(context.Background(), w, f.Outcome, ShrinkOptions{Exact: true, KeepOutcomes: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kept == 0 || st.Tried < st.Kept || st.OutOfTime || !SizeOf(full).Less(SizeOf(f.Outcome)) {
		t.Fatalf("unbounded shrink: %s, size %v from %v", st, SizeOf(full), SizeOf(f.Outcome))
	}
	// Every run was a candidate: the original was not run again, and with
	// KeepOutcomes neither was the result.
	if w.runs != st.Tried {
		t.Errorf("%d runs for %d candidates", w.runs, st.Tried)
	}
	short, st2, err := ShrinkWithStats(context.Background(), cfg.Target, f.Outcome, ShrinkOptions{Exact: true, KeepOutcomes: true, For: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if !st2.OutOfTime || st2.Tried != 0 || short != f.Outcome {
		t.Errorf("a spent budget: %s; want no candidate and the outcome itself", st2)
	}
}
