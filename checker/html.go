package checker

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// htmlBudget bounds porcupine's own search when it lays out the report.
const htmlBudget = 10 * time.Second

// WriteHTML writes porcupine's interactive visualization of the history: the
// operations per process on a time line, the (partial) linearization with
// the state after each step, and every violation annotated on the
// operations it names. Unknown-outcome ops that the linearization did not
// need are shown as annotations rather than operations, which keeps
// porcupine's search (whose cost doubles per such op) short.
func WriteHTML(w io.Writer, h *model.History, r *Result) error {
	return WriteHTMLWithin(w, h, r, htmlBudget)
}

// WriteHTMLWithin is WriteHTML with porcupine's layout search bounded by
// budget (at least a millisecond): past it the page shows the longest
// partial linearization porcupine found.
func WriteHTMLWithin(w io.Writer, h *model.History, r *Result, budget time.Duration) error {
	budget = max(budget, time.Millisecond)
	c := timed.Compile(h)
	applied := map[int]bool{}
	for _, kl := range r.Linearizations {
		for _, st := range kl.Steps {
			if st.Applied {
				applied[st.Op] = true
			}
		}
	}
	keep := func(i int) bool { return h.Ops[i].Returned || applied[i] }
	pm := timed.PorcupineModel(c)
	m := pm.ToModel()
	_, info := porcupine.CheckOperationsVerbose(m, timed.PorcupineOperations(c, keep), budget)
	// porcupine collects each partition's partial linearizations through a
	// map, so their order (and which of equal length the page shows first)
	// changed from run to run: put them in one order, longest first, so a
	// failure's page is the same bytes every time it is written.
	// PartialLinearizations hands out the slices Visualize reads.
	for _, parts := range info.PartialLinearizations() {
		slices.SortFunc(parts, func(a, b []int) int {
			if c := cmp.Compare(len(b), len(a)); c != 0 {
				return c
			}
			return slices.Compare(a, b)
		})
	}

	ids := timed.ProcessIDs(h)
	byLine := map[int]*model.Op{}
	for i := range h.Ops {
		byLine[h.Ops[i].Line] = &h.Ops[i]
	}
	var notes []porcupine.Annotation
	for _, v := range r.Violations {
		for _, line := range v.Lines {
			op := byLine[line]
			if op == nil {
				continue
			}
			end := op.Call
			if op.Returned {
				end = op.Return
			}
			notes = append(notes, porcupine.Annotation{
				ClientId:        ids[op.Process],
				Tag:             "violation: " + v.Property,
				Start:           op.Call,
				End:             end,
				Description:     fmt.Sprintf("line %d", line),
				Details:         v.Explanation,
				BackgroundColor: "#ff9c9c",
			})
		}
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if keep(i) {
			continue
		}
		notes = append(notes, porcupine.Annotation{
			ClientId:        ids[op.Process],
			Tag:             "no response",
			Start:           op.Call,
			End:             op.Call,
			Description:     op.Describe(),
			Details:         "never returned; no linearization needed it to take effect",
			BackgroundColor: "#dddddd",
		})
	}
	info.AddAnnotations(notes)
	return porcupine.Visualize(m, info, w)
}
