package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
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
	// For, when positive, bounds the shrinking's wall time: no candidate
	// starts after it, and the smallest scenario found so far is the result
	// (one already running finishes). A real backend needs it: each
	// candidate is a real run of seconds.
	For time.Duration
	// KeepOutcomes returns the kept candidate's own outcome instead of
	// judging the result once more: for a target whose runs do not repeat
	// exactly (a real backend), where a second run of the same scenario
	// might not fail at all. A simulated target leaves it off: its final
	// judgment, with the full budget, is the one saved.
	KeepOutcomes bool
}

// ShrinkStats say what a shrink did.
type ShrinkStats struct {
	// Tried counts the candidates run, Kept those that still failed the
	// same way and became the current scenario.
	Tried, Kept int
	// OutOfTime: ShrinkOptions.For ran out before the candidates did.
	OutOfTime bool
	// Took is the shrink's wall time.
	Took time.Duration
}

func (st ShrinkStats) String() string {
	s := fmt.Sprintf("%d %s tried, %d kept, in %v", st.Tried, plural(st.Tried, "candidate", "candidates"), st.Kept, st.Took.Round(100*time.Millisecond))
	if st.OutOfTime {
		s += " (out of time)"
	}
	return s
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
	small, _, err := ShrinkWithStats(ctx, t, o, opts)
	return small, err
}

// ShrinkWithStats is Shrink, and says what it did.
func ShrinkWithStats(ctx context.Context, t Target, o *Outcome, opts ShrinkOptions) (*Outcome, ShrinkStats, error) {
	began := time.Now()
	var st ShrinkStats
	keep := opts.Keep
	if keep == nil {
		keep = o.Failed()
	}
	if len(keep) == 0 {
		return o, st, nil
	}
	var deadline time.Time
	if opts.For > 0 {
		deadline = began.Add(opts.For)
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
	score := func(c *Scenario, co *Outcome) int {
		// Operations first; a holder or a fault weighs a few operations, so
		// removing one may cost a little more history.
		return co.Ops() + 4*len(c.Holders) + 4*len(c.Faults)
	}
	// The scenario the shrink starts from (o's, or the cut candidate's
	// below) has been run already: scenario.Shrink's first test measures it.
	start := o.Scenario
	first := false
	// The last candidate kept (the current scenario) and its outcome, and
	// its score: scenario.Shrink keeps a candidate exactly when it fails
	// and scores no more than the current one.
	var best *Outcome
	var bestC *Scenario
	curScore := score(o.Scenario, o)
	// judged says what became of a candidate run: its outcome when it
	// failed the same way (nil when it did not), and its score.
	type judged struct {
		co    *Outcome
		score int
	}
	judgeCandidate := func(c *Scenario) judged {
		co, err := Judge(ctx, t, c, cand)
		if err != nil {
			return judged{}
		}
		for _, p := range keep {
			if !co.Fails(p) {
				return judged{}
			}
		}
		if opts.Exact && !slices.Equal(co.Failed(), keep) {
			return judged{}
		}
		if control != nil {
			ref, err := Judge(ctx, control, c, cand)
			if err != nil || ref.Violated() {
				return judged{}
			}
		}
		return judged{co, score(c, co)}
	}
	// A timed shrink's candidates are real runs of seconds: one already run
	// (the coarse and the one-step lists propose many again) is not run
	// again; what its run showed stands.
	ran := map[string]judged{}
	test := func(c *Scenario) (bool, int) {
		if first {
			first = false
			return true, curScore
		}
		if ctx.Err() != nil {
			return false, 0
		}
		var key string
		if opts.For > 0 {
			if b, err := json.Marshal(c); err == nil {
				key = string(b)
			}
		}
		j, seen := ran[key]
		if !seen || key == "" {
			if !deadline.IsZero() && time.Now().After(deadline) {
				st.OutOfTime = true
				return false, 0
			}
			st.Tried++
			j = judgeCandidate(c)
			if key != "" {
				ran[key] = j
			}
		}
		if j.co == nil {
			return false, 0
		}
		if j.score <= curScore {
			if !seen {
				st.Kept++
			}
			best, bestC, curScore = j.co, c, j.score
		}
		return true, j.score
	}
	shrink := scenario.Shrink
	if opts.For > 0 {
		shrink = scenario.ShrinkCoarse
		// A real run's first candidates end the run soon after the
		// violation ended: what ran after it only lengthens the story, and
		// every later candidate runs for that much less wall time.
		if h, ok := horizonPastViolation(o); ok {
			for _, c := range scenario.CutAt(o.Scenario, h) {
				budget--
				if kept, _ := test(c); kept && bestC == c {
					start = c
					break
				}
			}
		}
	}
	first = true
	small := shrink(start, test, budget)
	st.Took = time.Since(began)
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	if opts.KeepOutcomes {
		if best == nil {
			return o, st, nil // nothing smaller failed the same way
		}
		if bestC == small {
			return best, st, nil
		}
	}
	final, err := Judge(ctx, t, small, opts.Judge)
	return final, st, err
}

// horizonPastViolation is the horizon, in o's scenario time, of a run cut
// one TTL after o's violations all ended: the latest instant any of them
// cites (a history line's answer, or its call where none came; a run
// property's end), mapped from the history's time to the scenario's by the
// TTL the run granted (a real runner scales scenario time to the backend's
// TTL). ok is false when that is no shorter than the horizon or cannot be
// told.
func horizonPastViolation(o *Outcome) (int64, bool) {
	sc := o.Scenario
	if sc == nil || o.History == nil || sc.TTL <= 0 {
		return 0, false
	}
	var ttl int64 // the history's TTL of a grant, in its time unit
	at := map[int]int64{}
	for _, h := range []*model.History{o.History, o.Store} {
		if h == nil {
			continue
		}
		for _, op := range h.Ops {
			if ttl == 0 && op.TTL > 0 {
				ttl = op.TTL
			}
			if h == o.History && op.Line > 0 {
				at[op.Line] = max(at[op.Line], endOf(op))
			}
		}
	}
	if ttl <= 0 {
		return 0, false
	}
	var end int64
	vs := o.Violations()
	if len(vs) == 0 {
		return 0, false
	}
	for _, v := range vs {
		if v.Kind == RunProperty && v.To > 0 {
			end = max(end, v.To)
			continue
		}
		if len(v.Lines) == 0 {
			return 0, false // a violation that cites no line: nothing says when it ended
		}
		for _, l := range v.Lines {
			t, ok := at[l]
			if !ok {
				return 0, false
			}
			end = max(end, t)
		}
	}
	h := end*sc.TTL/ttl + sc.TTL
	if h >= sc.Horizon {
		return 0, false
	}
	return h, true
}

// endOf is when op ended as its history knows it: its answer, or its call
// when none came.
func endOf(op model.Op) int64 {
	if op.Returned {
		return op.Return
	}
	return op.Call
}
