package explore

import (
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/internal/scenario"
)

// Minimization: a breadth-first counterexample is minimal in steps within
// its space, but the space's world is fixed (its holders and their
// programs). Minimize shrinks the world instead, with scenario.Shrink: the
// candidates and the greedy fixed-point loop a seeded failure is shrunk
// with (a holder, a write, a piece of work fewer; a fault kind, a fault, a
// deviation or an adversarial request fewer; starting earlier or later,
// backing off longer), so that a reduction added there serves both. The
// explorer's own part is the test: a candidate world is searched
// breadth-first, and it still fails when a violation is found there. Each
// space is searched breadth-first, so the final counterexample is minimal
// in steps within the smallest space found.
//
// The test keeps a candidate only when it is strictly smaller (cxSize):
// fewer operations, else fewer faults struck, else a smaller world. As
// small is not enough: most of the shrinker's candidates (the horizon, the
// TTL, a piece of work shaved by an eighth) leave an explored
// counterexample as it was, and keeping each would spend a search apiece
// walking sideways, the whole budget before the cuts that count. Steps
// are not in the size: a shorter delay saves steps but no operation, and
// taking it first leads away from a later start that saves one.
//
// A smaller space counts only when its counterexample violates exactly the
// properties the search's did: a smaller world often fails something else
// first (a holder with a clock stepped forward also lets its lease lapse),
// and a report whose counts and verdict name one violation while its saved
// counterexample shows another tells two stories.

// MinimizeBudget bounds the smaller spaces Minimize explores.
const MinimizeBudget = 120

// MinimizeStates bounds the distinct states Minimize's searches explore
// together. Most candidates that fail to shrink do so by searching their
// whole space without a violation, each up to its own cap; without a total,
// a counterexample in a wide space spends minutes proving that smaller
// spaces hold. Five million keeps every built-in mutant's counterexample
// at or below what the explorer's own list of smaller worlds reached.
const MinimizeStates = 5_000_000

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
	m := &Minimized{FromOps: best.Ops, FromStep: best.Steps}
	want := best.Properties
	cur := cxSize(best, sc)
	first := true
	left := int64(MinimizeStates)
	test := func(c *scenario.Scenario) (bool, int) {
		if first {
			// The shrinker sizes (its copy of) sc first: rep is its search.
			first = false
			return true, cur
		}
		if left <= 0 {
			return false, 0
		}
		m.Tried++
		co := o
		co.MaxStates = min(o.MaxStates, left)
		r, err := Explore(c, co)
		if r != nil {
			left -= int64(r.DistinctStates)
		}
		if err != nil || r.Counterexample == nil || !slices.Equal(r.Counterexample.Properties, want) {
			return false, 0
		}
		n := cxSize(r.Counterexample, c)
		if n >= cur {
			return false, 0
		}
		// Smaller than the current space: the shrinker keeps c.
		best, cur = r.Counterexample, n
		return true, n
	}
	small := scenario.Shrink(sc, test, MinimizeBudget)
	m.ToOps, m.ToSteps, m.Holders = best.Ops, best.Steps, len(small.Holders)
	out := *rep
	out.Counterexample = best
	out.Minimized = m
	return &out
}

// cxSize orders counterexamples for the shrinker: fewer operations, then
// fewer faults struck, then a smaller world (worldSize).
func cxSize(c *Counterexample, s *scenario.Scenario) int {
	struck := 0
	if c.Run != nil {
		struck = len(c.Run.Plan)
	}
	return c.Ops<<16 | min(struck, 1<<6-1)<<10 | min(worldSize(s), 1<<10-1)
}

// worldSize counts what a space's world holds: its holders, their work
// items, writes and pieces of work, and the space's fault kinds and bounds.
func worldSize(s *scenario.Scenario) int {
	n := len(s.Holders) + len(s.Space.Faults) + s.Space.MaxFaults + s.Space.Adversary + s.Space.Deviations
	for _, p := range s.Holders {
		if p.RetryMax < s.TTL {
			n++ // asks again sooner than a TTL: more refused acquires
		}
		for _, it := range p.Work {
			n += 1 + it.Writes
			if it.Work > 0 {
				n++
			}
		}
	}
	return n
}
