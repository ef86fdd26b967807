package explore

import (
	"context"
	"fmt"
	"slices"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/runprop"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// verdict is what the full judges say about one state's history and run.
type verdict struct {
	failed    []string // violated properties, checker's first, each once
	undecided bool
	check     *checker.Result
	findings  []runprop.Finding
	run       *sim.Result
}

// judge runs the full judges on w's state: runprop.Judge always, the
// checker when withChecker. w is consumed (its Result is taken).
func (x *explorer) judge(w *sim.World, withChecker bool) verdict {
	x.rep.Judged++
	r := w.Result()
	v := verdict{run: r}
	if withChecker {
		if x.ctx == nil {
			x.ctx = context.Background()
		}
		res := checker.Check(x.ctx, r.History, checker.Options{Workers: 1, Timeout: x.o.CheckBudget})
		v.check = res
		for _, viol := range res.Violations {
			if !slices.Contains(v.failed, viol.Property) {
				v.failed = append(v.failed, viol.Property)
			}
		}
		v.undecided = res.Undecided()
	}
	v.findings = runprop.Judge(r)
	for _, f := range v.findings {
		if !slices.Contains(v.failed, f.Property) {
			v.failed = append(v.failed, f.Property)
		}
	}
	return v
}

func needsChecker(flags []string) bool {
	for _, f := range flags {
		if slices.Contains(checker.Properties, f) {
			return true
		}
	}
	return false
}

// judgeFlagged judges a state a monitor flagged; it reports whether a
// violation was confirmed (and the search stops).
func (x *explorer) judgeFlagged(c *sim.World, flags []string, p *path, depth int) bool {
	w := c.Clone()
	if w == nil {
		var err error
		if w, err = x.newWorld(p, depth); err != nil {
			x.err, x.stop = err, true
			return true
		}
	}
	v := x.judge(w, needsChecker(flags) || c.Monitor().(*monitor).diverged)
	return x.record(v, p, depth)
}

// judgeLeaf judges the last state of a path: the run properties (a crash
// never recovered from shows only at the end), and the checker when asked
// for or when the monitors lost track of the reference.
func (x *explorer) judgeLeaf(w *sim.World, p *path, depth int) {
	full := x.o.FullLeaves || w.Monitor().(*monitor).diverged
	x.record(x.judge(w, full), p, depth)
}

func (x *explorer) record(v verdict, p *path, depth int) bool {
	if v.undecided {
		x.rep.Undecided++
	}
	if len(v.failed) == 0 {
		return false
	}
	for _, p := range v.failed {
		x.rep.Violations[p]++
	}
	if x.cex == nil {
		x.cex = &found{path: p.flat(), steps: depth, props: v.failed}
	}
	x.rep.Stopped, x.stop = "violation", true
	return true
}

// finishCounterexample replays the violating path with a trace, so the
// saved scenario and the report tell the story sim.Run tells again.
func (x *explorer) finishCounterexample() error {
	sc := x.sc.Clone()
	sc.Space = cloneSpace(x.sc.Space)
	sc.Schedule = scenario.NewSchedule(x.cex.path, x.cex.steps)
	sc.Implementation = x.o.Implementation
	sc.Expect = slices.Clone(x.cex.props)
	var o sim.Options
	if x.o.Sim != nil {
		o = *x.o.Sim
	}
	o.Chooser, o.Monitor, o.NoTrace = nil, nil, false
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
		Scenario: sc, Run: v.run}
	sc.Expect = slices.Clone(v.failed)
	if v.check != nil {
		for _, viol := range v.check.Violations {
			if viol.Property == cx.Property {
				cx.Explanation, cx.Lines = viol.Explanation, viol.Lines
				break
			}
		}
	}
	for _, f := range v.findings {
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
