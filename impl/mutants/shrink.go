package mutants

import (
	"fmt"
	"strings"

	"github.com/leasecheck/leasecheck/scenario"
)

// CounterexampleSeeds is how many failing seeds Counterexample shrinks.
const CounterexampleSeeds = 10

// ShrinkBudget bounds the candidates one shrink runs.
const ShrinkBudget = 3000

// Shrink minimizes sc, a scenario on which m's expected property fails,
// with scenario.Shrink: a candidate is kept when the mutant still fails
// the same property, the reference still passes every property, and the
// mutant's run has no more operations.
func (m *Mutant) Shrink(sc *scenario.Scenario) *scenario.Scenario {
	opts := m.Options()
	test := func(c *scenario.Scenario) (bool, int) {
		o, err := Judge(c, opts)
		if err != nil || !o.Fails(m.Property) {
			return false, 0
		}
		ref, err := Judge(c, nil)
		if err != nil || len(ref.Failed) > 0 {
			return false, 0
		}
		// Operations first; a holder or a fault weighs a few operations,
		// so removing one may cost a little more history.
		return true, o.Run.Stats.Ops + 4*len(c.Holders) + 4*len(c.Faults)
	}
	return scenario.Shrink(sc, test, ShrinkBudget)
}

// Counterexample finds the first k seeds from base on which m fails its
// property (within DefaultBudget seeds), shrinks each, and returns the
// smallest result (fewest operations, then faults, then processes; the
// earliest seed on ties) with its outcome. Deterministic.
func (m *Mutant) Counterexample(base uint64, k int) (*scenario.Scenario, *Outcome, error) {
	var best *scenario.Scenario
	var bestO *Outcome
	seed := base
	for found := 0; found < k && seed < base+DefaultBudget; found++ {
		d, err := Detect(m, seed, int(base+DefaultBudget-seed), false)
		if err != nil {
			return nil, nil, err
		}
		if !d.Caught() {
			break
		}
		small := m.Shrink(d.Outcome.Run.Scenario)
		o, err := Judge(small, m.Options())
		if err != nil {
			return nil, nil, err
		}
		if bestO == nil || SizeOf(o).less(SizeOf(bestO)) {
			best, bestO = small, o
		}
		seed = d.Seed + 1
	}
	if best == nil {
		return nil, nil, fmt.Errorf("%s: not caught in %d seeds from %d", m.Name, DefaultBudget, base)
	}
	return best, bestO, nil
}

func (s Size) less(t Size) bool {
	if s.Ops != t.Ops {
		return s.Ops < t.Ops
	}
	if s.Faults != t.Faults {
		return s.Faults < t.Faults
	}
	return s.Processes < t.Processes
}

// Size is a counterexample's size: processes (holders and the reader),
// operations in the mutant's history, faults.
type Size struct {
	Processes, Ops, Faults int
}

func (s Size) String() string {
	return fmt.Sprintf("%d proc, %d ops, %d faults", s.Processes, s.Ops, s.Faults)
}

// SizeOf measures o's scenario and history.
func SizeOf(o *Outcome) Size {
	procs := map[string]bool{}
	for _, op := range o.Run.History.Ops {
		procs[op.Process] = true
	}
	return Size{Processes: len(procs), Ops: o.Run.Stats.Ops, Faults: len(o.Run.Scenario.Faults)}
}

// Explain writes a person's account of o, a run of m that fails m's
// property: what the bug is, what happened, the checker's words, the trace.
func (m *Mutant) Explain(o *Outcome) string {
	var b strings.Builder
	sc := o.Run.Scenario
	fmt.Fprintf(&b, "# %s: %s\n\n", m.Name, m.Failure)
	fmt.Fprintf(&b, "- component: %s (the rest is the reference)\n", m.Component)
	fmt.Fprintf(&b, "- caught by: `%s`", m.Property)
	if len(o.Failed) > 1 {
		fmt.Fprintf(&b, " (this run also fails: %s)", strings.Join(others(o.Failed, m.Property), ", "))
	}
	fmt.Fprintf(&b, "\n- article: %s\n  (%s)\n\n", m.Article, m.English)
	fmt.Fprintf(&b, "## At a glance\n\n%s\n\n", m.Story)
	fmt.Fprintf(&b, "## The shrunk counterexample\n\n%s; TTL %dms, network delay %d-%dms (loss %dppm, duplication %dppm), horizon %dms, %s semantics, seed %d.\n",
		SizeOf(o), sc.TTL, sc.Network.MinDelay, sc.Network.MaxDelay, sc.Network.DropPPM, sc.Network.DupPPM, sc.Horizon, sc.Semantics, sc.Seed)
	for _, p := range sc.Holders {
		fmt.Fprintf(&b, "- holder %s starts at %dms, work %v\n", p.Name, p.Start, p.Work)
	}
	for _, f := range sc.Faults {
		fmt.Fprintf(&b, "- fault %s\n", f)
	}
	if len(sc.Faults) == 0 {
		fmt.Fprintf(&b, "- no faults\n")
	}
	fmt.Fprintf(&b, "\n## What the checker says\n\n")
	for _, v := range o.Check.Violations {
		if v.Property == m.Property {
			fmt.Fprintf(&b, "`%s` (lines %v): %s\n\n", v.Property, v.Lines, strings.TrimSpace(v.Explanation))
		}
	}
	for _, d := range o.Details {
		if strings.HasPrefix(d, m.Property+":") {
			fmt.Fprintf(&b, "`%s`\n\n", d)
		}
	}
	fmt.Fprintf(&b, "The reference coordinator, resource and holder pass this same scenario.\n\n## History\n\n```\n")
	for _, op := range o.Run.History.Ops {
		fmt.Fprintf(&b, "%3d %s\n", op.Line, opString(op.Process, op.Kind.String(), op.Fence, op.Value, op.Call, op.Return, op.Returned, op.At, op.OK, op.Error))
	}
	fmt.Fprintf(&b, "```\n\n## Trace\n\n```\n")
	for _, e := range o.Run.Trace {
		fmt.Fprintln(&b, e)
	}
	fmt.Fprintf(&b, "```\n\nReplay: `go test ./impl/mutants -run 'TestMutantCounterexamples/%s' -v`\n", m.Name)
	return b.String()
}

func others(xs []string, not string) []string {
	var out []string
	for _, x := range xs {
		if x != not {
			out = append(out, x)
		}
	}
	return out
}

func opString(proc, kind string, fence int64, value string, call, ret int64, returned bool, at int64, ok bool, err string) string {
	s := fmt.Sprintf("%-6s %-7s", proc, kind)
	if fence != 0 {
		s += fmt.Sprintf(" fence=%d", fence)
	}
	if value != "" {
		s += fmt.Sprintf(" %q", value)
	}
	if returned {
		s += fmt.Sprintf(" [%d,%d] at=%d ok=%v", call, ret, at, ok)
	} else {
		s += fmt.Sprintf(" [%d,-] (no answer)", call)
	}
	if err != "" {
		s += " " + err
	}
	return s
}
