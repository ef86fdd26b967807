package explore

import (
	"fmt"
	"slices"

	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// verdict is what the full judges say about one state's history and run.
type verdict struct {
	Judgement
	run *sim.Result
}

// judge runs the full judges (Options.Judges) on w's state, the checker
// only when withChecker (the monitors vouch for the history properties
// elsewhere). w is consumed (its Result is taken).
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
	s := x.setting
	if r.Scenario != x.sc {
		s = nil // a counterexample's replay runs a scenario of its own
	}
	j, err := x.o.Judges.Judge(r, s, withChecker, x.o.CheckBudget)
	return verdict{Judgement: j, run: r}, err
}

// judgeFlagged judges a state a monitor flagged; it reports whether a
// violation was confirmed (and the search stops).
func (x *explorer) judgeFlagged(c *sim.World, flags []string, p *path, depth int) bool {
	m := c.Monitor().(Monitor)
	x.rep.Judged++
	v, err := x.judgePure(c.ResultSoFar(nil), x.o.Judges.NeedsChecker(flags) || m.Diverged())
	if err != nil {
		x.err, x.stop = err, true
		return true
	}
	return x.record(v, p, depth, m.Ever(), false, 0)
}

// judgeLeaf judges the last state of a path: the run properties (a crash
// never recovered from shows only at the end), and the checker when asked
// for or when the monitors lost track of the reference.
func (x *explorer) judgeLeaf(w *sim.World, p *path, depth int) {
	m := w.Monitor().(Monitor)
	full := x.o.FullLeaves || m.Diverged()
	x.record(x.judge(w, full), p, depth, m.Ever(), true, 0)
}

// record counts a verdict. ever is what the monitor flagged on the path:
// a violation of a property it never flagged is a disagreement between the
// monitor and the full judges — a bug in leasecheck, since the monitor's
// flags are complete (Monitor) — and is reported as such, never passed
// over. At a path's end a crash never recovered from is the one violation
// the monitor leaves to the full judges (Judges.EndOnly).
//
// state is the violating state's digest. Breadth-first search keeps the
// least violation by the counterexample rule (found.before, shard.go) and
// finishes the level it was revealed in; the other strategies stop at the
// first.
func (x *explorer) record(v verdict, p *path, depth int, ever uint64, leaf bool, state uint64) bool {
	if v.Undecided {
		x.rep.Undecided++
	}
	if len(v.Failed) == 0 {
		return false
	}
	for _, f := range v.Failed {
		if ever&x.propertyBit(f) == 0 && !(leaf && x.o.Judges.EndOnly(f)) && x.rep.Disagreement == "" {
			x.rep.Disagreement = fmt.Sprintf("the full judges find %s violated after %d moves on a path where the per-state monitor never flagged it: "+
				"the monitor is incomplete, a bug in leasecheck's explorer (the counterexample is the path)", f, depth)
		}
	}
	f := &found{steps: depth, props: v.Failed, state: state, revealed: depth}
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
	if len(v.Failed) == 0 {
		return fmt.Errorf("explore: the counterexample's replay violates nothing (found %v)", x.cex.props)
	}
	x.rep.Judged-- // the replay is not a state of the search
	cx := &Counterexample{Property: v.Failed[0], Properties: v.Failed, Steps: x.cex.steps, Ops: len(v.run.History.Ops),
		Scenario: sc, Run: v.run, Revealed: x.cex.revealed}
	if x.cex.state != 0 {
		cx.State = fmt.Sprintf("%016x", x.cex.state)
	}
	sc.Expect = slices.Clone(v.Failed)
	cx.Explanation, cx.Lines, cx.TraceLines = v.Explain.Explain(cx.Property)
	x.rep.Counterexample = cx
	return nil
}

// propertyBit is p's bit in a monitor's Ever.
func (x *explorer) propertyBit(p string) uint64 {
	if i := slices.Index(x.props, p); i >= 0 {
		return 1 << uint(i)
	}
	return 0
}

// digestErr is the error a digest of w found: a stale digest the world
// kept (sim.World.VerifyDigests) or the monitor did.
func digestErr(w *sim.World) error {
	if err := w.Err(); err != nil {
		return err
	}
	if m, ok := w.Monitor().(Monitor); ok {
		return m.Err()
	}
	return nil
}

func cloneSpace(s *scenario.Space) *scenario.Space {
	c := *s
	c.Faults = slices.Clone(s.Faults)
	return &c
}
