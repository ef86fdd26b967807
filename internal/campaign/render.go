package campaign

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// Violation is one counterexample to one property, history or run property
// alike: the one shape every command renders, as text (WriteViolation) and
// as JSON.
type Violation struct {
	Property string `json:"property"`
	// Kind is "history" (judged by the checker on the history) or "run"
	// (judged on the simulator's result, package runprop).
	Kind string `json:"kind"`
	// Key is the lease key (history properties).
	Key string `json:"key,omitempty"`
	// Lines are the history lines involved, ascending.
	Lines []int `json:"lines"`
	// TraceLines are the 1-based lines of the run's trace that show it
	// (run properties), ascending.
	TraceLines []int `json:"trace_lines,omitempty"`
	// From and To bound when it happened, in the history's time unit (run
	// properties; both 0 when unknown).
	From int64 `json:"from,omitempty"`
	To   int64 `json:"to,omitempty"`
	// View says which record of the run a history property's violation
	// was found in, when the run has two (Execution.Store): ViewClient or
	// ViewStore; "" when the history is the run's only record.
	View string `json:"view,omitempty"`
	// Explanation tells what happened, in plain words.
	Explanation string `json:"explanation"`
}

// Views of Violation.
const (
	// ViewClient: the clients' view (Execution.History).
	ViewClient = "client"
	// ViewStore: the stores' log (Execution.Store), found there only.
	ViewStore = "store"
)

// viewLabel says, in a violation's headline, which record it comes from.
func viewLabel(view string) string {
	switch view {
	case ViewClient:
		return "the clients' view"
	case ViewStore:
		return "the store's log only: an op the store applied that the client's view leaves unknown"
	}
	return ""
}

// Kinds of Violation.
const (
	HistoryProperty = "history"
	RunProperty     = "run"
)

// FromChecker converts the checker's violation.
func FromChecker(v checker.Violation) Violation {
	return Violation{Property: v.Property, Kind: HistoryProperty, Key: v.Key, Lines: nonNil(v.Lines), Explanation: v.Explanation}
}

// FromFinding converts a run property's finding.
func FromFinding(f Finding) Violation {
	return Violation{Property: f.Property, Kind: RunProperty, Lines: nonNil(f.Lines), TraceLines: f.TraceLines,
		From: f.From, To: f.To, Explanation: f.Explanation}
}

func nonNil(xs []int) []int {
	if xs == nil {
		return []int{}
	}
	return xs
}

// Violations lists every violation of the outcome: the checker's in its
// order, then the run properties' in theirs. Where the run has a stores'
// log (Execution.Store), the client view's violations are marked
// ViewClient, followed by those the stores' log shows that the client's
// view does not (the same property on the same lines), marked ViewStore.
func (o *Outcome) Violations() []Violation {
	var out []Violation
	for _, v := range o.Check.Violations {
		cv := FromChecker(v)
		if o.StoreCheck != nil {
			cv.View = ViewClient
		}
		out = append(out, cv)
	}
	if o.StoreCheck != nil {
		props := StoreProperties()
		for _, v := range o.StoreCheck.Violations {
			if !slices.Contains(props, v.Property) || slices.ContainsFunc(o.Check.Violations, func(c checker.Violation) bool {
				return c.Property == v.Property && c.Key == v.Key && slices.Equal(c.Lines, v.Lines)
			}) {
				continue
			}
			sv := FromChecker(v)
			sv.View = ViewStore
			out = append(out, sv)
		}
	}
	for _, f := range o.Findings {
		out = append(out, FromFinding(f))
	}
	return out
}

// WriteViolation renders v as text, the one way every command does: a
// headline with the property and where, the explanation indented, and for a
// run property the trace lines it cites (trace may be nil).
//
//	VIOLATION linearizable (key "k", lines 3, 5)
//	  no order of the operations explains line 5: ...
//	VIOLATION exclusive-belief (run property, t=120..340, lines 4, trace lines 2, 7)
//	  h1 still believed it held fence 1 at t=120 ...
//	     trace 2:      120 h1  believes fence=1
func WriteViolation(w io.Writer, v Violation, trace []string) { writeFinding(w, "VIOLATION", v, trace) }

// WriteWarning renders a warning (Outcome.Warnings) as WriteViolation does
// a violation, headed WARNING.
func WriteWarning(w io.Writer, v Violation, trace []string) { writeFinding(w, "WARNING", v, trace) }

func writeFinding(w io.Writer, head string, v Violation, trace []string) {
	var where []string
	if v.Kind == RunProperty {
		where = append(where, "run property")
		if v.From != 0 || v.To != 0 {
			where = append(where, fmt.Sprintf("t=%d..%d", v.From, v.To))
		}
	} else {
		where = append(where, fmt.Sprintf("key %q", v.Key))
	}
	if l := viewLabel(v.View); l != "" {
		where = append(where, l)
	}
	if len(v.Lines) > 0 {
		where = append(where, plural(len(v.Lines), "line", "lines")+" "+joinInts(v.Lines))
	}
	if len(v.TraceLines) > 0 {
		where = append(where, plural(len(v.TraceLines), "trace line", "trace lines")+" "+joinInts(v.TraceLines))
	}
	fmt.Fprintf(w, "%s %s (%s)\n", head, v.Property, strings.Join(where, ", "))
	for _, l := range strings.Split(strings.TrimSpace(v.Explanation), "\n") {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, n := range v.TraceLines {
		if n >= 1 && n <= len(trace) {
			fmt.Fprintf(w, "    trace %d: %s\n", n, strings.TrimSpace(trace[n-1]))
		}
	}
}

// WriteOutcome renders every violation of o as text, then a verdict line:
// FAIL with the properties violated, UNDECIDED, or OK.
func WriteOutcome(w io.Writer, o *Outcome) {
	trace := o.TraceLines()
	for _, v := range o.ByCause() {
		fmt.Fprintln(w)
		WriteViolation(w, v, trace)
	}
	for _, f := range o.Warnings {
		fmt.Fprintln(w)
		WriteWarning(w, FromFinding(f), trace)
	}
	switch {
	case o.Violated():
		fmt.Fprintf(w, "\nFAIL: %s violated\n", strings.Join(o.Failed(), ", "))
	case o.Undecided():
		fmt.Fprintf(w, "\nUNDECIDED: the linearizability search ran out of its budget (raise --timeout)\n")
	case len(o.Warnings) > 0:
		fmt.Fprintf(w, "\nOK: every property holds (%d judged), with %s: %s\n", len(o.Judged),
			Count(int64(len(o.Warnings)), "warning", "warnings"), strings.Join(o.Warned(), ", "))
	default:
		fmt.Fprintf(w, "\nOK: every property holds (%d judged)\n", len(o.Judged))
	}
}

// TraceLines returns the run's trace as text lines (nil for a real run).
func (o *Outcome) TraceLines() []string {
	if o.Sim == nil {
		return nil
	}
	out := make([]string, len(o.Sim.Trace))
	for i, e := range o.Sim.Trace {
		out[i] = e.String()
	}
	return out
}

// OpString renders one history operation on a line, as the stories quote
// it, its times as the story renders them (timefmt.Times: in ms).
func OpString(op *model.Op, tf timefmt.Times) string {
	s := fmt.Sprintf("%-6s %-7s", op.Process, op.Kind)
	if op.Owner != "" && op.Owner != op.Process {
		s += " owner=" + op.Owner
	}
	if op.Fence != 0 {
		s += fmt.Sprintf(" fence=%d", op.Fence)
	}
	if op.Value != "" {
		s += fmt.Sprintf(" %q", op.Value)
	}
	if op.Returned {
		s += " " + tf.Span(op.Call, op.Return)
		if op.HasAt {
			s += " at=" + tf.Dur(op.At)
		}
		s += fmt.Sprintf(" ok=%v", op.OK)
	} else {
		s += " [" + tf.Num(op.Call) + ",-]" + tf.Suffix() + " (no answer)"
	}
	if op.Error != "" {
		s += " " + op.Error
	}
	return s
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// plural picks the singular or the plural form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count renders "1 seed", "2 seeds": n and the noun, singular or plural.
func Count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Report is one judged run as JSON (`repro --json`): the verdict on every
// property judged, the violations, and whether the replay shows what its
// scenario expects.
type Report struct {
	Implementation string `json:"implementation"`
	Seed           uint64 `json:"seed"`
	Ops            int    `json:"ops"`
	OK             bool   `json:"ok"`
	Undecided      bool   `json:"undecided"`
	// Properties maps every property judged to holds, violated or unknown.
	Properties map[string]string `json:"properties"`
	// Violated lists the properties violated, in report order.
	Violated   []string    `json:"violated"`
	Violations []Violation `json:"violations"`
	// Expect is the scenario's expect; AsExpected whether exactly those
	// properties are violated (CheckExpect).
	Expect     []string `json:"expect"`
	AsExpected bool     `json:"as_expected"`
}

// ReportOf builds o's report.
func ReportOf(o *Outcome) Report {
	impl := o.Scenario.Implementation
	if impl == "" {
		impl = ImplReference
	}
	r := Report{Implementation: impl, Seed: o.Scenario.Seed, Ops: o.Ops(), OK: !o.Violated() && !o.Undecided(), Undecided: o.Undecided(),
		Properties: map[string]string{}, Violated: o.Failed(), Violations: o.Violations(), Expect: o.Scenario.Expect,
		AsExpected: CheckExpect(o) == nil}
	for _, p := range o.Judged {
		r.Properties[p] = o.Verdict(p)
	}
	if r.Violated == nil {
		r.Violated = []string{}
	}
	if r.Violations == nil {
		r.Violations = []Violation{}
	}
	if r.Expect == nil {
		r.Expect = []string{}
	}
	return r
}

// WriteVerdicts renders the verdict on every property judged, one a line,
// run properties marked.
func WriteVerdicts(w io.Writer, o *Outcome) {
	for _, p := range o.Judged {
		kind := ""
		if IsRunProperty(p) {
			kind = "  (run property)"
		}
		fmt.Fprintf(w, "  %-24s %s%s\n", p, o.Verdict(p), kind)
	}
}

// ByCause is Violations with the violations of one cause told as one
// finding: a history property's violations on one key that cite the same
// first line — one failed renew, one grant, one frozen holder's term —
// and differ only in the later op (a write each) become one, citing every
// line, its story told once and the other ops listed. A holder frozen past
// its TTL that wrote eight times is one finding with its eight writes, not
// eight. Violations (and --json) keep every violation apart.
func (o *Outcome) ByCause() []Violation {
	return groupByCause(o.Violations(), o.History)
}

func groupByCause(vs []Violation, h *model.History) []Violation {
	byLine := map[int]*model.Op{}
	if h != nil {
		for i := range h.Ops {
			byLine[h.Ops[i].Line] = &h.Ops[i]
		}
	}
	type cause struct {
		property, key, view string
		first               int
	}
	var out []Violation
	at := map[cause]int{}
	more := map[int][]int{} // index in out: the other lines of its cause
	for _, v := range vs {
		if v.Kind != HistoryProperty || len(v.Lines) < 2 {
			out = append(out, v)
			continue
		}
		c := cause{v.Property, v.Key, v.View, v.Lines[0]}
		i, ok := at[c]
		if !ok {
			at[c] = len(out)
			out = append(out, v)
			continue
		}
		for _, l := range v.Lines[1:] {
			if !containsInt(out[i].Lines, l) {
				out[i].Lines = append(out[i].Lines, l)
				more[i] = append(more[i], l)
			}
		}
	}
	for i, ls := range more {
		g := &out[i]
		sortInts(g.Lines)
		sortInts(ls)
		var items []string
		for _, l := range ls {
			if op := byLine[l]; op != nil {
				items = append(items, fmt.Sprintf("line %d: %s", l, op.Describe()))
			} else {
				items = append(items, fmt.Sprintf("line %d", l))
			}
		}
		g.Explanation = strings.TrimSpace(g.Explanation) + fmt.Sprintf("\nThe same cause (line %d) also explains %s: %s.",
			g.Lines[0], plural(len(ls), "1 more operation", fmt.Sprintf("%d more operations", len(ls))), strings.Join(items, "; "))
	}
	return out
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func sortInts(xs []int) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}
