package explore

import (
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/internal/scenario"
)

// Minimization: a breadth-first counterexample is minimal in steps within
// its space, but the space's world is fixed (its holders and their
// programs). Minimize shrinks the world instead, as scenario.Shrink shrinks a
// seeded scenario: it explores smaller spaces — a holder fewer, a write or
// a piece of work fewer, a fault kind, a fault, a deviation or an
// adversarial request fewer — and keeps each one in which a violation is
// still found with fewer operations (or as many in fewer steps). Greedy and
// deterministic; each space is searched breadth-first, so the final
// counterexample is minimal in steps within the smallest space found.
//
// A smaller space counts only when its counterexample violates exactly the
// properties the search's did: a smaller world often fails something else
// first (a holder with a clock stepped forward also lets its lease lapse),
// and a report whose counts and verdict name one violation while its saved
// counterexample shows another tells two stories.

// MinimizeBudget bounds the smaller spaces Minimize explores.
const MinimizeBudget = 120

// Minimized says what Minimize did.
type Minimized struct {
	Tried    int `json:"tried"`
	FromOps  int `json:"from_ops"`
	ToOps    int `json:"to_ops"`
	Holders  int `json:"holders"`
	ToSteps  int `json:"to_steps"`
	FromStep int `json:"from_steps"`
}

// Minimize returns rep with its counterexample replaced by the shortest one
// found in smaller spaces of sc (rep itself when none is shorter). The
// search counts of rep stay those of the original search.
func Minimize(sc *scenario.Scenario, o Options, rep *Report) *Report {
	if rep.Counterexample == nil {
		return rep
	}
	o.defaults()
	o.Strategy = BFS
	if o.MaxStates <= 0 || o.MaxStates > 200_000 {
		o.MaxStates = 200_000
	}
	if o.Timeout <= 0 || o.Timeout > 20*time.Second {
		o.Timeout = 20 * time.Second
	}
	best := rep.Counterexample
	cur := sc
	m := &Minimized{FromOps: best.Ops, FromStep: best.Steps}
	want := rep.Counterexample.Properties
	better := func(c *Counterexample) bool {
		if !slices.Equal(c.Properties, want) {
			return false
		}
		return c.Ops < best.Ops || c.Ops == best.Ops && c.Steps <= best.Steps
	}
	for progress := true; progress && m.Tried < MinimizeBudget; {
		progress = false
		for _, cand := range smaller(cur) {
			if m.Tried >= MinimizeBudget {
				break
			}
			if cand.Validate() != nil {
				continue
			}
			m.Tried++
			r, err := Explore(cand, o)
			if err != nil || r.Counterexample == nil || !better(r.Counterexample) {
				continue
			}
			best, cur, progress = r.Counterexample, cand, true
			break
		}
	}
	m.ToOps, m.ToSteps, m.Holders = best.Ops, best.Steps, len(cur.Holders)
	out := *rep
	out.Counterexample = best
	out.Minimized = m
	return &out
}

// smaller lists the one-step smaller spaces of sc, biggest cuts first.
func smaller(sc *scenario.Scenario) []*scenario.Scenario {
	var out []*scenario.Scenario
	edit := func(f func(c *scenario.Scenario) bool) {
		c := sc.Clone()
		c.Space = cloneSpace(sc.Space)
		if f(c) {
			out = append(out, c)
		}
	}
	for i := range sc.Holders {
		if len(sc.Holders) == 1 {
			break
		}
		edit(func(c *scenario.Scenario) bool {
			c.Holders = slices.Delete(c.Holders, i, i+1)
			return true
		})
	}
	for i := range sc.Space.Faults {
		edit(func(c *scenario.Scenario) bool {
			c.Space.Faults = slices.Delete(c.Space.Faults, i, i+1)
			return true
		})
	}
	edit(func(c *scenario.Scenario) bool { return dec(&c.Space.MaxFaults) })
	edit(func(c *scenario.Scenario) bool { return dec(&c.Space.Adversary) })
	edit(func(c *scenario.Scenario) bool { return dec(&c.Space.Deviations) })
	for i := range sc.Holders {
		for j := range sc.Holders[i].Work {
			edit(func(c *scenario.Scenario) bool {
				w := &c.Holders[i].Work[j]
				if w.Writes == 0 {
					return false
				}
				w.Writes--
				return true
			})
			edit(func(c *scenario.Scenario) bool {
				w := &c.Holders[i].Work[j]
				if w.Work == 0 {
					return false
				}
				w.Work = 0
				return true
			})
			edit(func(c *scenario.Scenario) bool {
				w := &c.Holders[i].Work[j]
				if w.Work < 2 {
					return false
				}
				w.Work /= 2
				return true
			})
		}
		edit(func(c *scenario.Scenario) bool {
			if c.Holders[i].Start == 0 {
				return false
			}
			c.Holders[i].Start = 0
			return true
		})
		// Fewer operations may also come from asking later or less often:
		// a holder that starts when its predecessor's lease is about to
		// end, or backs off longer, retries less.
		for _, step := range []int64{c0(sc.TTL / 3), c0(sc.TTL / 10)} {
			edit(func(c *scenario.Scenario) bool {
				if i == 0 || c.Holders[i].Start+step > c.Horizon/2 {
					return false
				}
				c.Holders[i].Start += step
				return true
			})
		}
		edit(func(c *scenario.Scenario) bool {
			p := &c.Holders[i]
			if p.RetryMax >= c.TTL {
				return false
			}
			p.RetryMax = c.TTL
			return true
		})
	}
	edit(func(c *scenario.Scenario) bool { return dec64(&c.Network.MinDelay) })
	return out
}

func c0(v int64) int64 { return max(v, 1) }

func dec64(v *int64) bool {
	if *v == 0 {
		return false
	}
	*v--
	return true
}

func dec(v *int) bool {
	if *v == 0 {
		return false
	}
	*v--
	return true
}
