package campaign

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// Properties returns every property a simulated run is judged for, in the
// order they are reported: the checker's six history properties
// (docs/specification.md §2), then the run properties (package runprop).
func Properties() []string {
	return append(checker.Properties(), runprop.Properties()...)
}

// IsRunProperty reports whether p is a run property (judged on the
// simulator's result, not on the history).
func IsRunProperty(p string) bool { return slices.Contains(runprop.Properties(), p) }

// JudgedBy returns the properties judged on t's runs: every property for a
// simulated target; a target that implements Properties() []string (a real
// backend: the history properties only) says so itself.
func JudgedBy(t Target) []string {
	if p, ok := t.(interface{ Properties() []string }); ok {
		return p.Properties()
	}
	return Properties()
}

// DefaultBudget is the linearizability search budget of one judged history
// when JudgeOptions.Budget is 0.
const DefaultBudget = 20 * time.Second

// JudgeOptions tune Judge. The zero value means the defaults.
type JudgeOptions struct {
	// Budget bounds the linearizability search of one history: 0 means
	// DefaultBudget, negative no limit (which makes a verdict independent of
	// the machine's speed). Past it the history is undecided (exit 3).
	Budget time.Duration
	// MaxMemory bounds, in bytes, what checking one history may hold (0:
	// DefaultMaxMemory; negative: no limit); past it the history is
	// undecided. It is per history, so a campaign on N workers holds at most
	// N times it, and a verdict does not depend on the number of workers.
	MaxMemory int64
	// RunOnly judges a simulated run's run properties alone and leaves its
	// history unchecked (Outcome.Check empty, Judged the run properties):
	// for a driver whose own monitor vouches for the history properties,
	// the explorer's, so that its outcomes are still this judge's.
	RunOnly bool
}

// DefaultMaxMemory is the memory budget of checking one history when
// JudgeOptions.MaxMemory is 0: far above what simulated histories need,
// well below what would let a few workers exhaust a machine.
const DefaultMaxMemory int64 = 256 << 20

func (o JudgeOptions) checker() checker.Options {
	b := o.Budget
	switch {
	case b == 0:
		b = DefaultBudget
	case b < 0:
		b = -1
	}
	// One key at a time: a campaign runs many histories at once already.
	m := o.MaxMemory
	if m == 0 {
		m = DefaultMaxMemory
	}
	return checker.Options{Timeout: b, Workers: 1, MaxMemory: m}
}

// Outcome is one run judged on every property that applies to it.
type Outcome struct {
	*Execution
	// Check is the checker's verdict on the history properties.
	Check *checker.Result
	// StoreCheck is the checker's verdict on the stores' log (Execution.
	// Store), nil when the runner recorded none; of it only
	// StoreProperties count.
	StoreCheck *checker.Result
	// Findings are the run properties' violations (simulated runs only).
	Findings []Finding
	// Warnings are run-property findings that are counted and told but
	// violate nothing (runprop.JudgeWarned: an exclusive-belief overlap in
	// fenced storage that no accepted stale write came of).
	Warnings []Finding
	// Judged lists the properties judged, in report order.
	Judged []string
}

// Judge runs sc on t and judges the run.
func Judge(ctx context.Context, t Target, sc *Scenario, opts JudgeOptions) (*Outcome, error) {
	r, err := t.Run(ctx, sc)
	if err != nil {
		return nil, err
	}
	return JudgeExecution(ctx, r, opts)
}

// JudgeExecution judges a run: the checker on its history, and the run
// properties on the simulator's result when there is one. This is the one
// place where every property is judged.
func JudgeExecution(ctx context.Context, r *Execution, opts JudgeOptions) (*Outcome, error) {
	if opts.RunOnly {
		if r.Sim == nil {
			return nil, fmt.Errorf("judging the run properties alone needs a simulated run, and this execution has none")
		}
		o := &Outcome{Execution: r, Check: &checker.Result{}, Judged: runprop.Properties()}
		o.Findings, o.Warnings = judgeRun(r.Sim)
		return o, nil
	}
	res, err := check(ctx, r, opts)
	if err != nil {
		return nil, err
	}
	o := &Outcome{Execution: r, Check: res, Judged: checker.Properties()}
	if r.Store != nil {
		o.StoreCheck, err = checker.Check(ctx, r.Store, opts.checker())
		if err != nil {
			return nil, fmt.Errorf("the runner recorded a store's log the checker refuses: %w", err)
		}
	}
	if r.Sim != nil {
		o.Findings, o.Warnings = judgeRun(r.Sim)
		o.Judged = Properties()
	}
	return o, nil
}

// judgeRun judges the run properties on res, lease by lease where it holds
// several (sim.RecordKeys): findings and warnings in the leases' order.
func judgeRun(res *sim.Result) (findings, warnings []Finding) {
	for _, r := range sim.RecordKeys(res) {
		f, w := runprop.JudgeWarned(r)
		findings, warnings = append(findings, f...), append(warnings, w...)
	}
	return findings, warnings
}

// check is the one call of the checker. It refuses a history it cannot
// use: from the simulator that is a bug in the runner, said as such.
func check(ctx context.Context, r *Execution, opts JudgeOptions) (*checker.Result, error) {
	res, err := checker.Check(ctx, r.History, opts.checker())
	if err != nil {
		return nil, fmt.Errorf("the runner recorded a history the checker refuses: %w", err)
	}
	return res, nil
}

// Failed lists the properties violated, each once, in report order.
func (o *Outcome) Failed() []string {
	var out []string
	for _, p := range o.Judged {
		if o.Fails(p) {
			out = append(out, p)
		}
	}
	return out
}

// Fails reports whether property p is violated.
func (o *Outcome) Fails(p string) bool {
	if IsRunProperty(p) {
		for _, f := range o.Findings {
			if f.Property == p {
				return true
			}
		}
		return false
	}
	return o.Check.Verdict(p) == checker.Violated || o.storeVerdict(p) == checker.Violated
}

// StoreProperties are the history properties judged on a stores' log
// (Execution.Store): those of what the world did. stop-on-renew-failure
// is not among them: it asks what a client did after it learned that a
// renewal failed, and the store's log does not say what a client learned.
func StoreProperties() []string {
	return slices.DeleteFunc(checker.Properties(), func(p string) bool { return p == checker.StopOnRenewFailure })
}

// storeVerdict is the verdict of the stores' log on p: Holds where there
// is no log or p is not one of StoreProperties.
func (o *Outcome) storeVerdict(p string) checker.Verdict {
	if o.StoreCheck == nil || !slices.Contains(StoreProperties(), p) {
		return checker.Holds
	}
	return o.StoreCheck.Verdict(p)
}

// storeViolated and storeUndecided are Result.Violated and Undecided of
// the stores' log, on StoreProperties only.
func (o *Outcome) storeViolated() bool {
	if o.StoreCheck == nil {
		return false
	}
	return slices.ContainsFunc(StoreProperties(), func(p string) bool { return o.StoreCheck.Verdict(p) == checker.Violated })
}

func (o *Outcome) storeUndecided() bool {
	if o.StoreCheck == nil {
		return false
	}
	return slices.ContainsFunc(StoreProperties(), func(p string) bool { return o.StoreCheck.Verdict(p) == checker.Unknown })
}

// Warned lists the properties with a warning, each once, in report order.
func (o *Outcome) Warned() []string {
	var out []string
	for _, p := range o.Judged {
		if slices.ContainsFunc(o.Warnings, func(f Finding) bool { return f.Property == p }) {
			out = append(out, p)
		}
	}
	return out
}

// Violated reports whether some property is violated.
func (o *Outcome) Violated() bool {
	return o.Check.Violated() || o.storeViolated() || len(o.Findings) > 0
}

// Undecided reports whether nothing is violated but the linearizability
// search ran out of its budget.
func (o *Outcome) Undecided() bool {
	return !o.Violated() && (o.Check.Undecided() || o.storeUndecided())
}

// Status is the outcome's exit status (Status).
func (o *Outcome) Status() int { return Status(o.Violated(), o.Undecided()) }

// Exit statuses shared by every leasecheck command (docs/specification.md §4).
const (
	ExitOK        = 0 // every property holds
	ExitViolation = 1 // a property is violated
	ExitUsage     = 2 // the input or the command line cannot be used
	ExitUnknown   = 3 // a search budget ran out before a verdict
)

// Status computes an exit status, the one way: a violation wins over an
// undecided verdict, which wins over success.
func Status(violated, undecided bool) int {
	switch {
	case violated:
		return ExitViolation
	case undecided:
		return ExitUnknown
	}
	return ExitOK
}

// Verdict returns the verdict on property p: "holds", "violated", or
// "unknown" (the search ran out of budget; or p was not judged).
func (o *Outcome) Verdict(p string) string {
	switch {
	case !slices.Contains(o.Judged, p):
		return checker.Unknown.String()
	case o.Fails(p):
		return checker.Violated.String()
	case IsRunProperty(p):
		return checker.Holds.String()
	case o.storeVerdict(p) == checker.Unknown:
		return checker.Unknown.String()
	}
	return o.Check.Verdict(p).String()
}
