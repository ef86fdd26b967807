package explore

import (
	"fmt"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// DefaultPlan is the spaces `leasecheck explore` searches when no flag
// shapes the space: together they contain the places where a lease
// service's bugs live, each space small enough to finish on one core in
// under a minute.
//
//  1. seed semantics, every fault kind striking at most once anywhere, one
//     message off its shortest delay: the holders' protocol against the
//     environment (pauses, clock faults, crashes, partitions, ...);
//  2. seed semantics with the adversarial client (one request of its menu
//     at any step, as anyone, with any fence): the coordinator's checks
//     behind the owner and fence comparisons, which well-behaved holders
//     never exercise;
//  3. the same under fenced-storage semantics: the resource's fence
//     comparison and the coordinator's grants it trusts;
//  4. fenced storage, the adversary and an owner reuse (a holder crashed
//     and restarted under the same owner name) with exact delays: requests
//     under the holder's own name with its previous incarnation's fence.
//  5. writes per grant: the first holder writes twice, works on and writes
//     again, the second writes twice, a reader reads every 8ms, and one
//     pause, renewal loop's death or lost renewals strikes anywhere: a
//     re-check skipped between writes under one grant, a write taken for a
//     renewal, a second write the store drops;
//  6. late answers: one message delayed up to 16ms, past the request
//     timeout (10ms) and the first backoff after it: an acquire or a renew
//     answered after its sender gave up on it;
//  7. a handoff on the exact tick: three holders starting 3ms apart, no
//     message delay, no margin, every holder's clock slow at a drift bound
//     of 1.5% (2ρ·TTL = 0.9 ticks: rounded up, the least slack) and the
//     coordinator's fast at it, each holder renewing after its deadline
//     (every 31ms), so the lease changes hands at every expiry: a deadline
//     arithmetic off by a tick;
//  8. two faults: one holder, any two faults of every kind striking at
//     any two steps — where two faults meet (a pause after a coordinator
//     restart, a crash inside a partition); one holder, because a second
//     multiplies the states without adding a pair of faults;
//  9. the network's faults beside every fault kind, on a holder renewing
//     every half TTL: one message lost, or delayed up to 16ms (past the
//     request timeout: a late answer, a retry after an unknown outcome,
//     a request and its answer delayed unequally), and one fault;
//  10. the same on a holder renewing every 7ms (under a quarter TTL:
//     renewals overlapping their own answers);
//  11. the same on a holder writing twice under one grant;
//  12. the same beside a reader reading every 15ms (a coordinator
//     restart between a write and a read);
//  13. two of the network's faults, no other: a retry meeting a late
//     answer to the request it retried, an answer lost after a late one.
//
// Spaces 8 to 13 make the plan reach every pair of the pair model
// (package pairs: fault × step in flight, fault × fault, fault ×
// workload); the report says which pairs a search reached, so "complete"
// says complete over what.
//
// Each space is small (the whole plan runs in a few minutes on one core;
// docs/measurements-shapes.md has its counts); `--plan FILE` (LoadPlan)
// explores a plan of the user's, and the flags that shape one space
// explore that one larger space instead.
//
// A violation in any space stops the plan (its counterexample is that
// space's); the plan is complete only when every space is.
func DefaultPlan() []Bounds {
	return []Bounds{
		{Faults: faults.AllKinds, MaxFaults: 1, Deviations: 1},
		{Adversary: 1, Deviations: 1},
		{Adversary: 1, Deviations: 1, Semantics: "fenced-storage"},
		{Adversary: 1, Faults: []faults.Kind{faults.OwnerReuse}, MaxFaults: 1, Semantics: "fenced-storage"},
		{Work: [][]holder.Item{{{Work: 20, Writes: 2}, {Work: 30, Writes: 1}}, {{Work: spaceTTL / 3, Writes: 2}}}, ReadEvery: 8,
			Faults: []faults.Kind{faults.Pause, faults.RenewDeath, faults.DropHeartbeats}, MaxFaults: 1},
		{MaxDelay: lateDelay, Deviations: 1},
		{Holders: 3, Stagger: 3, NoDelay: true, Margin: holder.NoMargin, RhoPPM: tickRho, DriftPPM: -tickRho, CoordinatorDriftPPM: tickRho,
			RenewEvery: spaceTTL + 1, Work: [][]holder.Item{{{Work: 2 * spaceTTL, Writes: 1}}}},
		{Holders: 1, Faults: pairKinds(), MaxFaults: 2},
		{Holders: 1, Faults: pairKinds(), MaxFaults: 1, Deviations: 1, Loss: true, MaxDelay: lateDelay, RenewEvery: spaceTTL / 2},
		{Holders: 1, Faults: pairKinds(), MaxFaults: 1, Deviations: 1, Loss: true, MaxDelay: lateDelay, RenewEvery: 7},
		{Holders: 1, Faults: pairKinds(), MaxFaults: 1, Deviations: 1, Loss: true, MaxDelay: lateDelay, Work: [][]holder.Item{{{Work: 20, Writes: 2}}}},
		{Holders: 1, Faults: pairKinds(), MaxFaults: 1, Deviations: 1, Loss: true, MaxDelay: lateDelay, ReadEvery: 15},
		{Holders: 1, Deviations: 2, Loss: true, MaxDelay: lateDelay},
	}
}

// lateDelay is the longest delay of the late-answer spaces: past the
// request timeout (a third of the TTL, 10ms) and the first backoff after it.
const lateDelay = 16

// pairKinds are the fault kinds the explorer strikes with: every kind but
// clock-offset, which holds from the start (faultgen.Candidates leaves it
// out).
func pairKinds() []faults.Kind {
	var ks []faults.Kind
	for _, k := range faults.AllKinds {
		if k != faults.ClockOffset {
			ks = append(ks, k)
		}
	}
	return ks
}

// tickRho is the tick-handoff space's drift bound: 2ρ·TTL = 0.9 ticks.
const tickRho = 15_000

// ExplorePlan explores each space of plan in turn with the same options
// (o.Timeout and o.MaxStates bound the plan as a whole) and sums their
// reports: States, DistinctStates and the other counts add up, MaxDepth is
// the deepest, Complete holds when every space was exhausted, Spaces lists
// each space's bounds. It returns the report and the scenario of the space
// the search ended in (the violating one, for Minimize).
func ExplorePlan(plan []Bounds, o Options) (*Report, *scenario.Scenario, error) {
	o.defaults()
	start := time.Now()
	var sum *Report
	var last *scenario.Scenario
	for i, b := range plan {
		sc := Space(b)
		so := o
		if o.Timeout > 0 {
			if so.Timeout = o.Timeout - time.Since(start); so.Timeout <= 0 {
				sum.Complete, sum.Stopped = false, "timeout"
				break
			}
		}
		if sum != nil && o.MaxStates > 0 {
			if so.MaxStates = o.MaxStates - sum.DistinctStates; so.MaxStates <= 0 {
				sum.Complete, sum.Stopped = false, "max-states"
				break
			}
		}
		r, err := Explore(sc, so)
		if err != nil {
			return nil, nil, fmt.Errorf("space %d of %d: %w", i+1, len(plan), err)
		}
		last = sc
		r.Spaces = []string{r.Bounds}
		if sum == nil {
			sum = r
		} else {
			sum.add(r)
		}
		if r.Stopped != "exhausted" && r.Stopped != "runs" || r.Disagreement != "" {
			break // a violation, or a budget spent
		}
	}
	if len(plan) > 1 {
		sum.Bounds = fmt.Sprintf("%d spaces explored one after another (%d planned): %s", len(sum.Spaces), len(plan), joinSpaces(sum.Spaces))
	}
	sum.Elapsed = time.Since(start)
	return sum, last, nil
}

func joinSpaces(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += " | "
		}
		out += fmt.Sprintf("(%d) %s", i+1, s)
	}
	return out
}

// add sums r, the report of the next space, into s.
func (s *Report) add(r *Report) {
	s.Complete = s.Complete && r.Complete
	s.States += r.States
	s.CollisionOdds += r.CollisionOdds // a union bound over the spaces
	s.DistinctStates += r.DistinctStates
	s.MaxDepth = max(s.MaxDepth, r.MaxDepth)
	s.Pruned += r.Pruned
	s.PrunedSeen += r.PrunedSeen
	s.PrunedSleep += r.PrunedSleep
	s.Paths += r.Paths
	s.Judged += r.Judged
	s.Undecided += r.Undecided
	s.DepthCut += r.DepthCut
	s.Shallower += r.Shallower
	for p, n := range r.Violations {
		s.Violations[p] += n
	}
	s.Counterexample = r.Counterexample
	s.DepthFirst = r.DepthFirst
	s.Stopped = r.Stopped
	s.Disagreement = r.Disagreement
	s.Spaces = append(s.Spaces, r.Spaces...)
	s.Pairs.Union(&r.Pairs)
	s.spaces = append(s.spaces, r.spaces...)
	s.Cloning = s.Cloning && r.Cloning
	s.PeakHeap = max(s.PeakHeap, r.PeakHeap)
}
