package report

import (
	"sort"
	"strconv"
	"strings"
)

// Belief is a holder's side of a lease: from From to To, Process believed
// it held the lease under Fence. Open marks a belief still held when the
// run ended (To is then that end). The coordinator's terms say who held
// the lease; beliefs say who thought so — a GC-paused or clock-skewed
// holder believes past its term (docs/specification.md §1, failure modes 2 and 3).
type Belief struct {
	Process string
	Fence   int64
	From    int64
	To      int64
	Open    bool
}

// TraceLine is one line of a runner's trace, in the history's time unit:
// at T, Node did What (Detail gives its arguments). The simulator's trace
// (sim.TraceEvent) has this shape; it is copied here so that report does
// not depend on the simulator.
type TraceLine struct {
	T      int64
	Node   string
	What   string
	Detail string
}

// BeliefsFromTrace turns the belief lines of a trace into intervals. A
// holder process's "believes" line (detail "fence=N") starts a belief, or
// ends the previous one and starts another when the fence changed;
// "gave-up" or "crashed" ends it. A belief still held at the end of the
// trace runs to end and is Open. Other lines are ignored. The result is
// ordered by From, then by process name.
func BeliefsFromTrace(trace []TraceLine, end int64) []Belief {
	var out []Belief
	open := map[string]int{} // process -> index in out of its open belief
	stop := func(p string, t int64) {
		if i, ok := open[p]; ok {
			out[i].To = max(t, out[i].From)
			delete(open, p)
		}
	}
	for _, e := range trace {
		switch e.What {
		case "believes":
			fence := parseFence(e.Detail)
			if i, ok := open[e.Node]; ok && out[i].Fence == fence {
				continue // the same belief, said again
			}
			stop(e.Node, e.T)
			open[e.Node] = len(out)
			out = append(out, Belief{Process: e.Node, Fence: fence, From: e.T})
		case "gave-up", "crashed":
			stop(e.Node, e.T)
		}
	}
	for _, i := range open {
		out[i].To, out[i].Open = max(end, out[i].From), true
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].From != out[b].From {
			return out[a].From < out[b].From
		}
		return out[a].Process < out[b].Process
	})
	return out
}

// parseFence reads "fence=N" out of a trace detail; 0 when there is none.
func parseFence(detail string) int64 {
	for f := range strings.FieldsSeq(detail) {
		if v, ok := strings.CutPrefix(f, "fence="); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return 0
}
