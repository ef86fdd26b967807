package realrun

import (
	"slices"

	"github.com/leasecheck/leasecheck/model"
)

// Burst is the most background renewals one owner's library started
// within any one window (a TTL) of a history: the measure of renew-rate.
type Burst struct {
	Owner string
	// Window is the window's length.
	Window int64
	// Most renewals started within one window, the first of them at From.
	Most int
	From int64
	// Total renewals of the owner's, and the span from the first call to
	// the last.
	Total int
	Span  int64
}

// RenewalBursts measures, for every owner whose library renewed by itself
// in h (the renew ops of its RenewerProcess, answered or not), the most renewals it
// started within any window of the given length (0: the TTL its first
// renewal asked for); in the order the owners first renewed.
func RenewalBursts(h *model.History, window int64) []Burst {
	calls := map[string][]int64{}
	windows := map[string]int64{}
	var owners []string
	for _, op := range h.Ops {
		if op.Process != model.RenewerProcess(op.Owner) || op.Kind != model.Renew {
			continue // a release of the library's own renews nothing
		}
		if _, ok := calls[op.Owner]; !ok {
			owners = append(owners, op.Owner)
			windows[op.Owner] = window
			if window <= 0 {
				windows[op.Owner] = max(op.TTL, 1)
			}
		}
		calls[op.Owner] = append(calls[op.Owner], op.Call)
	}
	var out []Burst
	for _, o := range owners {
		cs := calls[o]
		slices.Sort(cs)
		b := Burst{Owner: o, Window: windows[o], Total: len(cs), Span: cs[len(cs)-1] - cs[0]}
		for i, j := 0, 0; j < len(cs); j++ {
			for cs[j]-cs[i] >= b.Window {
				i++
			}
			if n := j - i + 1; n > b.Most {
				b.Most, b.From = n, cs[i]
			}
		}
		out = append(out, b)
	}
	return out
}
