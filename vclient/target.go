package vclient

import (
	"context"
	"testing"

	"github.com/leasecheck/leasecheck/internal/campaign"
)

// Target is a client in virtual time as a campaign target: the seed loop,
// the judge, the shrinker and the saver of package campaign run it like
// the simulator's reference, and its runs are judged on every property,
// the run properties included (its Execution carries a simulator-shaped
// result: the candidates' beliefs, the pauses, the trace), on the
// clients' view and on the stores' log (campaign.Execution.Store).
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

// Run implements campaign.Target.
func (t *Target) Run(_ context.Context, sc *Scenario) (*campaign.Execution, error) {
	r, err := RunRecord(t.T, sc, t.Client, t.Options)
	if err != nil {
		return nil, err
	}
	return &campaign.Execution{Scenario: sc, History: r.History, Store: r.Store, Sim: r.Result, Faults: r.Stats.Faults,
		FirstError: r.FirstError}, nil
}
