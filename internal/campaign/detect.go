package campaign

import (
	"context"
	"fmt"
	"time"

	"github.com/leasecheck/leasecheck/internal/impl/mutants"
)

// DetectCheckBudget bounds the linearizability search of each history a
// detection search judges.
const DetectCheckBudget = 10 * time.Second

// Detection is the result of a detection search for one planted bug.
type Detection struct {
	Mutant   string
	BaseSeed uint64
	// Seed is the first failing seed (0: none within the budget); Seeds is
	// how many seeds were tried, the failing one included.
	Seed  uint64
	Seeds int
	// Failed lists the properties the failing seed violated.
	Failed []string
	// RefFailed lists seeds on which the reference failed (false alarms).
	RefFailed []uint64
	// Elapsed is the wall time to the detection, the reference's excluded.
	Elapsed time.Duration
	Outcome *Outcome
}

// Caught reports whether the expected property failed within the budget.
func (d *Detection) Caught() bool { return d.Seed != 0 }

// Detect iterates seeds from base: for each it generates m's scenario
// (mutants.Mutant.Scenario), runs m and judges every property; the first
// seed on which m's expected property fails is the detection. With withRef
// the reference is run and judged on every seed tried too (its time is not
// counted in Elapsed).
func Detect(ctx context.Context, m *mutants.Mutant, base uint64, budget int, withRef bool) (*Detection, error) {
	d := &Detection{Mutant: m.Name, BaseSeed: base}
	t, ref := Mutant(m), Reference()
	opts := JudgeOptions{Budget: DetectCheckBudget}
	gen := t.Generator(nil)
	var refTime time.Duration
	start := time.Now()
	for i := 0; i < budget; i++ {
		seed := base + uint64(i)
		sc := gen(seed)
		d.Seeds++
		o, err := Judge(ctx, t, sc, opts)
		if err != nil {
			return nil, err
		}
		if withRef {
			t0 := time.Now()
			ro, err := Judge(ctx, ref, sc, opts)
			if err != nil {
				return nil, err
			}
			if ro.Violated() {
				d.RefFailed = append(d.RefFailed, seed)
			}
			refTime += time.Since(t0)
		}
		if o.Fails(m.Property) {
			d.Seed, d.Failed, d.Outcome = seed, o.Failed(), o
			break
		}
	}
	d.Elapsed = time.Since(start) - refTime
	return d, nil
}

// CounterexampleSeeds is how many failing seeds Counterexample shrinks.
const CounterexampleSeeds = 10

// Counterexample finds the first k seeds from base on which m fails its
// expected property (within mutants.DefaultBudget seeds), shrinks each
// (keeping that property failing and the reference passing), and returns
// the smallest (fewest operations, then faults, then processes; the
// earliest seed on ties), recording what it must violate. Deterministic.
func Counterexample(ctx context.Context, m *mutants.Mutant, base uint64, k int) (*Scenario, *Outcome, error) {
	var best *Outcome
	t := Mutant(m)
	end := base + mutants.DefaultBudget
	seed := base
	for found := 0; found < k && seed < end; found++ {
		d, err := Detect(ctx, m, seed, int(end-seed), false)
		if err != nil {
			return nil, nil, err
		}
		if !d.Caught() {
			break
		}
		small, err := Shrink(ctx, t, d.Outcome, ShrinkOptions{Keep: []string{m.Property}, Judge: JudgeOptions{Budget: DetectCheckBudget}})
		if err != nil {
			return nil, nil, err
		}
		if best == nil || SizeOf(small).Less(SizeOf(best)) {
			best = small
		}
		seed = d.Seed + 1
	}
	if best == nil {
		return nil, nil, fmt.Errorf("%s: not caught in %d seeds from %d", m.Name, mutants.DefaultBudget, base)
	}
	return Expecting(best), best, nil
}
