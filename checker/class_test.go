package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/classgen"
	"github.com/leasecheck/leasecheck/model"
)

// classSample is a fixed spread over every axis of the class (internal/classgen),
// small enough for a unit test: correct histories must hold every property
// — never Unknown — and each plant must be reported as the property it
// breaks, with linearizable decided too. It includes the corner the round
// before left out (16 processes with 20% of their ops unanswered, in
// interval mode under a clock uncertainty of a TTL or more, where every op
// overlaps a dozen others and nearly every unanswered acquire may have been
// granted at almost any point): the greedy pass and the projections decide
// it in well under a second a cell.
func classSample(short bool) []classgen.Params {
	var ps []classgen.Params
	seed := uint64(0)
	for _, interval := range []bool{false, true} {
		for _, uTTL := range []int64{0, 1, 10} {
			for _, sem := range []model.Semantics{model.Seed, model.FencedStorage} {
				for _, fl := range []bool{false, true} {
					if fl && sem == model.FencedStorage {
						continue
					}
					for _, noRetry := range []bool{false, true} {
						seed++
						ops := 1000 + 500*int(seed%4)
						if short {
							ops = 400
						}
						ps = append(ps, classgen.Params{Ops: ops, Keys: []int{1, 3, 10}[seed%3], Procs: []int{2, 5, 8, 16}[seed%4],
							Unanswered: []float64{0.02, 0.05, 0.1, 0.2}[seed%4], Interval: interval, TTL: 100, Uncertainty: uTTL * 100,
							NoRetry: noRetry, Semantics: sem, FenceLess: fl, Seed: seed})
					}
				}
			}
		}
	}
	return ps
}

func TestClassDecided(t *testing.T) {
	for _, p := range classSample(testing.Short()) {
		for _, plant := range classgen.Plants() {
			p.Plant = plant
			h, ok := p.History()
			if !ok {
				continue
			}
			r := mustCheck(t, h, Options{Timeout: 20 * time.Second})
			name := p.Name()
			if plant == classgen.Correct {
				if !r.OK() {
					t.Errorf("%s: a correct history: %v (%s)%s", name, r.Properties, r.Reason, firstViolation(r))
				}
				continue
			}
			if v := r.Verdict(plant.Property()); v != Violated {
				t.Errorf("%s: %s is %v, want violated (%v)", name, plant.Property(), v, r.Properties)
			}
			if v := r.Verdict(Linearizable); v == Unknown {
				t.Errorf("%s: linearizable left Unknown (%s)", name, r.Reason)
			}
		}
	}
}

func firstViolation(r *Result) string {
	if len(r.Violations) == 0 {
		return ""
	}
	v := r.Violations[0]
	return fmt.Sprintf("; first: %s %v %s", v.Property, v.Lines, v.Explanation)
}
