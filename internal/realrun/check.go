package realrun

import (
	"context"
	"fmt"
	"time"

	"github.com/leasecheck/leasecheck/checker"
)

// RunAndCheck runs cfg against t and checks the history (linearizability
// search budget: budget, 0 meaning 30s). When the run fails, the result
// may still hold the partial history (a backend that stopped answering).
func RunAndCheck(ctx context.Context, t Target, cfg Config, budget time.Duration) (*Result, *checker.Result, error) {
	res, err := Run(ctx, t, cfg)
	if err != nil {
		return res, nil, err // res: the partial history, when there is one
	}
	if budget == 0 {
		budget = 30 * time.Second
	}
	cr, err := checker.Check(ctx, res.History, checker.Options{Timeout: budget})
	if err != nil {
		return res, nil, fmt.Errorf("the recorded history is malformed: %w", err)
	}
	return res, cr, nil
}
