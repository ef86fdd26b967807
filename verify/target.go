package verify

import (
	"context"
	"fmt"
	"sync"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// target is a real backend as a campaign.Target: each scenario is a real
// run (realrun.RunScenario) on a key of its own.
type target struct {
	tg   RunTarget
	impl string          // "backend:SPEC", the spec without its password
	opt  realrun.Options // Retarget for the generated workload's rounds, not for replays and shrink candidates
	keys *keys
	// losses hears loss-signal's verdicts on each round's holds (the
	// rounds' target only).
	losses func(res *realrun.Result)
}

// keys hands every run of one verify invocation a key of its own, so that
// nothing a run left behind (a late answer, a grant) leaks into another's
// history: the scenario's key the first time, KEY.2, KEY.3, ... after.
type keys struct {
	mu   sync.Mutex
	used map[string]int
}

func (k *keys) next(key string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.used[key]++
	if n := k.used[key]; n > 1 {
		return fmt.Sprintf("%s.%d", key, n)
	}
	return key
}

// Implementation implements campaign.Target.
func (t *target) Implementation() string { return t.impl }

// Properties are the properties judged on a real run: the checker's six
// history properties. The run properties need the simulator's result; the
// one realrun could feed, exclusive-belief from its belief intervals, is
// not judged: an interval's end is seen by the driver's timer, late by the
// scheduler's delay on a loaded machine, so a strict overlap would flag
// correct backends, and what it would catch — a grant before the previous
// holder's deadline — the checker judges on the history within the
// declared clock uncertainty. The beliefs are drawn on the timeline page.
func (t *target) Properties() []string { return checker.Properties() }

// Run implements campaign.Target.
func (t *target) Run(ctx context.Context, sc *scenario.Scenario) (*campaign.Execution, error) {
	run := sc.Clone()
	run.Key = t.keys.next(sc.Key)
	res, err := realrun.RunScenario(ctx, t.tg, run, t.opt)
	if err != nil {
		if res != nil && res.History != nil {
			if res.Scenario != nil {
				res.Scenario.Implementation = t.impl
			}
			return nil, &roundError{Result: res, Err: err}
		}
		return nil, err
	}
	if t.losses != nil {
		t.losses(res)
	}
	asRun := res.Scenario
	asRun.Implementation = t.impl
	asRun.Expect = nil
	return &campaign.Execution{Scenario: asRun, History: res.History, Faults: res.Faults, Partial: res.Partial, Beliefs: beliefsOf(res)}, nil
}

// roundError is a round that started but could not finish (the backend
// stopped answering, a server verify restarted did not come back): Err
// says why, Result holds the partial history recorded until then, which
// verify saves beside the failures.
type roundError struct {
	Result *realrun.Result
	Err    error
}

func (e *roundError) Error() string { return e.Err.Error() }
func (e *roundError) Unwrap() error { return e.Err }
