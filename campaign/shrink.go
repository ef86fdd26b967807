package campaign

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/scenario"
)

// DefaultShrinkBudget bounds the candidate scenarios one shrink runs.
const DefaultShrinkBudget = 3000

// shrinkCheckBudget bounds each candidate's linearizability search: a
// candidate whose verdict takes longer is not kept (it counts as passing).
const shrinkCheckBudget = 2 * time.Second

// ShrinkOptions tune Shrink. The zero value means the defaults.
type ShrinkOptions struct {
	// Budget bounds the candidates run (0: DefaultShrinkBudget).
	Budget int
	// Keep are the properties every kept candidate must still violate
	// (nil: every property the outcome violates).
	Keep []string
	// Exact also requires a kept candidate to violate nothing else, so the
	// shrunk scenario shows the same violation, not a new one.
	Exact bool
	// Control, when set, must pass every property on each kept candidate:
	// the failure is then the target's, not the scenario's (for a planted
	// bug, the reference). Nil: Simulated.Control for a simulated target.
	Control Target
	// Judge judges the final scenario (candidates get a shorter search
	// budget, at most 2s each).
	Judge JudgeOptions
}

// Size is a scenario's size as a counterexample: its processes (holders
// and the reader that appear in the history), operations, faults.
type Size struct {
	Processes, Ops, Faults int
}

func (s Size) String() string {
	return fmt.Sprintf("%d %s, %d %s, %d %s", s.Processes, plural(s.Processes, "process", "processes"),
		s.Ops, plural(s.Ops, "operation", "operations"), s.Faults, plural(s.Faults, "fault", "faults"))
}

// Less orders sizes: fewer operations, then faults, then processes.
func (s Size) Less(t Size) bool {
	if s.Ops != t.Ops {
		return s.Ops < t.Ops
	}
	if s.Faults != t.Faults {
		return s.Faults < t.Faults
	}
	return s.Processes < t.Processes
}

// SizeOf measures an outcome's scenario and history.
func SizeOf(o *Outcome) Size {
	procs := map[string]bool{}
	for _, op := range o.History.Ops {
		procs[op.Process] = true
	}
	return Size{Processes: len(procs), Ops: o.Ops(), Faults: len(o.Scenario.Faults)}
}

// Shrink minimizes the scenario of o, a failing outcome of t, with
// scenario.Shrink (greedy, deterministic): a candidate is kept when t still
// violates the properties to keep (only them, with Exact), the control
// target passes it, and its run has no more operations, holders and faults
// (weighted). It returns the outcome of the smallest scenario found (o
// itself when nothing smaller fails the same way).
func Shrink(ctx context.Context, t Target, o *Outcome, opts ShrinkOptions) (*Outcome, error) {
	keep := opts.Keep
	if keep == nil {
		keep = o.Failed()
	}
	if len(keep) == 0 {
		return o, nil
	}
	control := opts.Control
	if control == nil {
		if s, ok := t.(*Simulated); ok {
			control = s.Control()
		}
	}
	budget := opts.Budget
	if budget <= 0 {
		budget = DefaultShrinkBudget
	}
	cand := opts.Judge
	if cand.Budget <= 0 || cand.Budget > shrinkCheckBudget {
		cand.Budget = shrinkCheckBudget
	}
	test := func(c *scenario.Scenario) (bool, int) {
		if ctx.Err() != nil {
			return false, 0
		}
		co, err := Judge(ctx, t, c, cand)
		if err != nil {
			return false, 0
		}
		for _, p := range keep {
			if !co.Fails(p) {
				return false, 0
			}
		}
		if opts.Exact && !slices.Equal(co.Failed(), keep) {
			return false, 0
		}
		if control != nil {
			ref, err := Judge(ctx, control, c, cand)
			if err != nil || ref.Violated() {
				return false, 0
			}
		}
		// Operations first; a holder or a fault weighs a few operations, so
		// removing one may cost a little more history.
		return true, co.Ops() + 4*len(c.Holders) + 4*len(c.Faults)
	}
	small := scenario.Shrink(o.Scenario, test, budget)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return Judge(ctx, t, small, opts.Judge)
}
