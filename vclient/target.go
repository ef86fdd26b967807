package vclient

import (
	"context"
	"testing"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// Target is a client in virtual time as a sweep runs it: what
// vclient/k8slease's SweepConfig.Target returns and its ReplayFile replays
// against. A sweep runs one scenario at a time through it, each in a
// synctest bubble of T, and judges every run on every property, the run
// properties included (the candidates' beliefs, the pauses, the trace),
// on the clients' view and on the stores' log.
type Target struct {
	// T is the test whose bubbles the runs are (testing/synctest).
	T *testing.T
	// Name is the implementation a scenario records ("vclient:k8slease").
	Name    string
	Client  Client
	Options Options
}

// Implementation is the implementation a saved scenario records (Name).
func (t *Target) Implementation() string { return t.Name }

// Run runs sc and returns what the sweep judges; a sweep calls it.
func (t *Target) Run(_ context.Context, sc *scenario.Scenario) (*campaign.Execution, error) {
	r, err := run(t.T, sc, t.Client, t.Options)
	if err != nil {
		return nil, err
	}
	return &campaign.Execution{Scenario: sc, History: r.History, Store: r.Store, Sim: r.Result, Faults: r.Stats.Faults,
		Partial: r.Stats.NotApplied, FirstError: r.FirstError}, nil
}
