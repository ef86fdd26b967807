package explore

import (
	"context"
	"fmt"
	"slices"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// verdict is what the full judges say about one state's history and run.
type verdict struct {
	failed    []string // violated properties, in report order
	undecided bool
	out       *campaign.Outcome
	run       *sim.Result
}

// judge runs the full judges on w's state — campaign's, the one place where
// every property is judged — the checker only when withChecker (the
// monitors vouch for the history properties elsewhere). w is consumed (its
// Result is taken).
func (x *explorer) judge(w *sim.World, withChecker bool) verdict {
	x.rep.Judged++
	v, err := x.judgePure(w.Result(), withChecker)
	if err != nil {
		x.err, x.stop = err, true
	}
	return v
}

// judgePure is judge of a run's Result without touching the search's
// state: the parallel workers' judge (search.go), whose counts the merge
// adds.
func (x *explorer) judgePure(r *sim.Result, withChecker bool) (verdict, error) {
	v := verdict{run: r}
	if !withChecker {
		// The run properties alone: most states judged this way violate
		// nothing, and their verdict needs no outcome (record reads it only
		// of a violation).
		s := x.setting
		if r.Scenario != x.sc {
			s = nil // a counterexample's replay runs a scenario of its own
		}
		if len(runprop.Judge(sim.RecordWith(r, s))) == 0 {
			return v, nil
		}
	}
	ex := &campaign.Execution{Scenario: r.Scenario, History: r.History, Sim: r, Faults: r.Stats.Faults}
	out, err := campaign.JudgeExecution(context.Background(), ex, campaign.JudgeOptions{Budget: x.o.CheckBudget, RunOnly: !withChecker})
	if err != nil {
		return v, err
	}
	v.out = out
	v.undecided = out.Undecided()
	v.failed = v.out.Failed()
	return v, nil
}

func needsChecker(flags []string) bool {
	for _, f := range flags {
		if !campaign.IsRunProperty(f) {
			return true
		}
	}
	return false
}

// judgeFlagged judges a state a monitor flagged; it reports whether a
// violation was confirmed (and the search stops).
func (x *explorer) judgeFlagged(c *sim.World, flags []string, p *path, depth int) bool {
	m := c.Monitor().(*monitor)
	x.rep.Judged++
	v, err := x.judgePure(c.ResultSoFar(nil), needsChecker(flags) || m.diverged)
	if err != nil {
		x.err, x.stop = err, true
		return true
	}
	return x.record(v, p, depth, m.ever, false, 0)
}

// judgeLeaf judges the last state of a path: the run properties (a crash
// never recovered from shows only at the end), and the checker when asked
// for or when the monitors lost track of the reference.
func (x *explorer) judgeLeaf(w *sim.World, p *path, depth int) {
	m := w.Monitor().(*monitor)
	full := x.o.FullLeaves || m.diverged
	x.record(x.judge(w, full), p, depth, m.ever, true, 0)
}

// record counts a verdict. ever is what the monitor flagged on the path:
// a violation of a property it never flagged is a disagreement between the
// monitor and the full judges — a bug in leasecheck, since the monitor's
// flags are complete (monitor.go) — and is reported as such, never passed
// over. At a path's end a crash never recovered from is the one violation
// the monitor leaves to the full judges (liveness-recovery).
//
// state is the violating state's digest. Breadth-first search keeps the
// least violation by the counterexample rule (found.before, shard.go) and
// finishes the level it was revealed in; the other strategies stop at the
// first.
func (x *explorer) record(v verdict, p *path, depth int, ever uint64, leaf bool, state uint64) bool {
	if v.undecided {
		x.rep.Undecided++
	}
	if len(v.failed) == 0 {
		return false
	}
	for _, f := range v.failed {
		if ever&propertyBit(f) == 0 && !(leaf && f == runprop.LivenessRecovery) && x.rep.Disagreement == "" {
			x.rep.Disagreement = fmt.Sprintf("the full judges find %s violated after %d moves on a path where the per-state monitor never flagged it: "+
				"the monitor is incomplete, a bug in leasecheck's explorer (the counterexample is the path)", f, depth)
		}
	}
	f := &found{steps: depth, props: v.failed, state: state, revealed: depth}
	if !leaf {
		f.revealed = depth - 1 // revealed while expanding its parent
	}
	if x.cex == nil || x.o.Strategy == BFS && f.before(x.cex) {
		f.at = p // labelled once, when the search ends (finishCounterexample)
		x.cex = f
	}
	x.rep.Stopped = "violation"
	if x.o.Strategy != BFS {
		x.stop = true
	}
	return true
}

// finishCounterexample replays the violating path with a trace, so the
// saved scenario and the report tell the story sim.Run tells again.
func (x *explorer) finishCounterexample() error {
	if x.cex.path == nil {
		cs, err := x.labelled(x.cex.at, x.cex.steps)
		if err != nil {
			return err
		}
		x.cex.path = cs
	}
	sc := x.sc.Clone()
	sc.Space = cloneSpace(x.sc.Space)
	sc.Schedule = scenario.NewSchedule(x.cex.path, x.cex.steps)
	sc.Implementation = x.o.Implementation
	sc.Expect = slices.Clone(x.cex.props)
	var o sim.Options
	if x.o.Sim != nil {
		o = *x.o.Sim
	}
	o.Chooser, o.Monitor, o.NoTrace, o.NoRunHash, o.NoFaultCounts = nil, nil, false, false, false
	w, err := sim.NewWorld(sc, &o)
	if err != nil {
		return err
	}
	for w.Step() {
	}
	if w.Err() != nil {
		return fmt.Errorf("explore: the counterexample does not replay: %w", w.Err())
	}
	v := x.judge(w, true)
	if len(v.failed) == 0 {
		return fmt.Errorf("explore: the counterexample's replay violates nothing (found %v)", x.cex.props)
	}
	x.rep.Judged-- // the replay is not a state of the search
	cx := &Counterexample{Property: v.failed[0], Properties: v.failed, Steps: x.cex.steps, Ops: len(v.run.History.Ops),
		Scenario: sc, Run: v.run, Revealed: x.cex.revealed}
	if x.cex.state != 0 {
		cx.State = fmt.Sprintf("%016x", x.cex.state)
	}
	sc.Expect = slices.Clone(v.failed)
	for _, viol := range v.out.Check.Violations {
		if viol.Property == cx.Property {
			cx.Explanation, cx.Lines = viol.Explanation, viol.Lines
			break
		}
	}
	for _, f := range v.out.Findings {
		if f.Property == cx.Property {
			cx.Explanation, cx.Lines, cx.TraceLines = f.Explanation, f.Lines, f.TraceLines
			break
		}
	}
	x.rep.Counterexample = cx
	return nil
}

func cloneSpace(s *scenario.Space) *scenario.Space {
	c := *s
	c.Faults = slices.Clone(s.Faults)
	return &c
}
