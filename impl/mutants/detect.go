package mutants

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/runprop"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// The run properties (package runprop), under the names the mutant table
// uses.
const (
	LivenessRecovery = runprop.LivenessRecovery
	LivenessHandoff  = runprop.LivenessHandoff
	LivenessRenewal  = runprop.LivenessRenewal
	ExclusiveBelief  = runprop.ExclusiveBelief
)

// RunProperties lists the run properties.
var RunProperties = runprop.Properties()

// Outcome is one scenario judged: every property that failed, with the
// checker's result and the run.
type Outcome struct {
	Run   *sim.Result
	Check *checker.Result
	// Failed lists the properties that failed, checker ones first, each once.
	Failed []string
	// Details explains each run-property failure.
	Details []string
}

// Fails reports whether property p failed.
func (o *Outcome) Fails(p string) bool { return slices.Contains(o.Failed, p) }

// CheckBudget bounds the linearizability search of one history.
const CheckBudget = 10 * time.Second

// Judge runs sc with opts (nil: the reference) and judges every property,
// the linearizability search within CheckBudget.
func Judge(sc *scenario.Scenario, opts *sim.Options) (*Outcome, error) {
	return JudgeWithin(sc, opts, CheckBudget)
}

// JudgeWithin is Judge with the search budget given (as checker.Options'
// Timeout: negative means no limit).
func JudgeWithin(sc *scenario.Scenario, opts *sim.Options, budget time.Duration) (*Outcome, error) {
	r, err := sim.Run(sc, opts)
	if err != nil {
		return nil, err
	}
	res, err := checker.Check(context.Background(), r.History, checker.Options{Workers: 1, Timeout: budget})
	if err != nil {
		return nil, fmt.Errorf("the simulator recorded a history the checker refuses: %w", err)
	}
	o := &Outcome{Run: r, Check: res}
	for _, v := range res.Violations {
		if !o.Fails(v.Property) {
			o.Failed = append(o.Failed, v.Property)
		}
	}
	for _, f := range runprop.Judge(r) {
		if !o.Fails(f.Property) {
			o.Failed = append(o.Failed, f.Property)
		}
		o.Details = append(o.Details, f.Property+": "+f.Explanation)
	}
	return o, nil
}

// Detection is the result of a detection search.
type Detection struct {
	Mutant   string
	BaseSeed uint64
	// Seed is the first failing seed (0: none within the budget); Seeds is
	// how many seeds were tried, the failing one included.
	Seed  uint64
	Seeds int
	// Failed lists the properties the failing seed broke.
	Failed []string
	// RefFailed lists seeds on which the reference failed (false alarms).
	RefFailed []uint64
	Elapsed   time.Duration
	Outcome   *Outcome
}

// Caught reports whether the expected property failed within the budget.
func (d *Detection) Caught() bool { return d.Seed != 0 }

// DefaultBudget is the detection search's seed budget.
const DefaultBudget = 500

// Detect iterates seeds from base: for each it generates the mutant's
// scenario, runs the mutant and judges it; the first seed on which the
// mutant's expected property fails is the detection. With withRef, the
// reference is run and judged on every seed tried too (its time is not
// counted in Elapsed).
func Detect(m *Mutant, base uint64, budget int, withRef bool) (*Detection, error) {
	d := &Detection{Mutant: m.Name, BaseSeed: base}
	opts := m.Options()
	var refTime time.Duration
	start := time.Now()
	for i := 0; i < budget; i++ {
		seed := base + uint64(i)
		sc := m.Scenario(seed)
		d.Seeds++
		o, err := Judge(sc, opts)
		if err != nil {
			return nil, err
		}
		if withRef {
			t0 := time.Now()
			ro, err := Judge(sc, nil)
			if err != nil {
				return nil, err
			}
			if len(ro.Failed) > 0 {
				d.RefFailed = append(d.RefFailed, seed)
			}
			refTime += time.Since(t0)
		}
		if o.Fails(m.Property) {
			d.Seed, d.Failed, d.Outcome = seed, o.Failed, o
			break
		}
	}
	d.Elapsed = time.Since(start) - refTime
	return d, nil
}
