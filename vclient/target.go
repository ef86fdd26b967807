package vclient

import (
	"context"
	"testing"
)

// Target is a client in virtual time as a campaign target: the seed loop,
// the judge, the shrinker and the saver of internal/campaign run it like
// the simulator's reference (k8slease's Sweep and ReplayFile take one),
// and its runs are judged on every property, the run properties included
// (its Execution carries a simulator-shaped result: the candidates'
// beliefs, the pauses, the trace), on the clients' view and on the stores'
// log (Execution.Store).
type Target struct {
	// T is the test whose bubbles the runs are (testing/synctest).
	T *testing.T
	// Name is the implementation a scenario records ("vclient:k8slease").
	Name    string
	Client  Client
	Options Options
}

// Implementation implements campaign.Target.
func (t *Target) Implementation() string { return t.Name }

// Run implements campaign.Target: it runs sc (RunRecord) and returns what
// the judge takes.
func (t *Target) Run(_ context.Context, sc *Scenario) (*Execution, error) {
	r, err := RunRecord(t.T, sc, t.Client, t.Options)
	if err != nil {
		return nil, err
	}
	return &Execution{Scenario: sc, History: r.History, Store: r.Store, Sim: r.Result, Faults: r.Stats.Faults,
		FirstError: r.FirstError}, nil
}
