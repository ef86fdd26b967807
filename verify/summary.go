package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// Summary is `verify --json`: the campaign's summary — the same fields as
// `leasecheck run --json`, by construction: counts of rounds (seeds), ops,
// faults injected by kind, violations by property, undecided, failed and
// failed_seeds — and what only a real backend has.
type Summary struct {
	// Backend is the backend's Info.Name.
	Backend string `json:"backend"`
	*campaign.Summary
	// TimeUnit is the histories' time unit; ClockUncertainty the largest
	// clock_uncertainty of a round's history, in it.
	TimeUnit         string `json:"time_unit"`
	ClockUncertainty int64  `json:"clock_uncertainty"`
	// ExpiryLateness is the backend's declared expiry lateness (Info), in
	// TimeUnit: how late it may free an expired lease.
	ExpiryLateness int64 `json:"expiry_lateness"`
	// FenceSource and FencedWrite describe the backend (Info).
	FenceSource string `json:"fence_source"`
	FencedWrite string `json:"fenced_write"`
	// FaultsPartial counts the faults applied in part or not at all (a
	// server verify could only stop, not restart; a holder crashed before
	// its fault struck), by kind, every kind at zero: never in Faults.
	FaultsPartial map[string]int `json:"faults_partial"`
	// Histories are the saved failures' histories.
	Histories []string `json:"histories,omitempty"`
	// Clients says where each owner's client ran: a process of its own
	// (how many, and the stops the kernel reported) or verify's process.
	Clients ClientsSummary `json:"clients"`
	// Beliefs is the verdict on a library that holds while it says so
	// (backend.Holding): its own loss signal against the server's record.
	Beliefs *BeliefVerdict `json:"beliefs,omitempty"`
	// minTTL is the shortest TTL a round granted, in TimeUnit (0: none).
	minTTL int64
}

func newSummary(info backend.Info, sum *campaign.Summary, kinds []faults.Kind) *Summary {
	s := &Summary{Backend: info.Name, Summary: sum, TimeUnit: "us", FenceSource: info.FenceSource, FencedWrite: info.FencedWrite,
		ExpiryLateness: int64(info.ExpiryLateness / time.Microsecond), FaultsPartial: map[string]int{}}
	for _, k := range kinds {
		s.FaultsPartial[string(k)] = 0
	}
	return s
}

// add counts what a round adds beyond the campaign's summary.
func (s *Summary) add(o *campaign.Outcome) {
	s.ClockUncertainty = max(s.ClockUncertainty, o.History.Header.ClockUncertainty)
	for i := range o.History.Ops {
		if op := &o.History.Ops[i]; op.Kind == model.Acquire && op.TTL > 0 && (s.minTTL == 0 || op.TTL < s.minTTL) {
			s.minTTL = op.TTL
		}
	}
	for k, n := range o.Partial {
		s.FaultsPartial[string(k)] += n
	}
}

// declared renders a declaration and its detail once: "none: grants carry
// no token", never "none: none: grants carry no token".
func declared(word, detail string) string {
	detail = strings.TrimPrefix(detail, word+": ")
	if detail == "" || detail == word {
		return word
	}
	return word + ": " + detail
}

// inMs renders a time in microseconds, the histories' unit, in the one
// unit real-backend stories use (timefmt.Times): milliseconds, to the µs.
func inMs(us int64) string { return timefmt.Times{Unit: "us"}.Dur(us) }

// WriteJSON writes s as one line of JSON.
//
// Deprecated: verify's own (--json). It stays while Summary embeds the
// campaign's summary, whose own WriteJSON, writing only its part, would
// silently take its place; the release that ends the embedding deletes
// both.
func (s *Summary) WriteJSON(w io.Writer) error { return s.writeJSON(w) }

// writeJSON writes s as one line of JSON (--json).
func (s *Summary) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// WriteText renders s for people.
//
// Deprecated: verify's own (its summary without --json). It stays while
// Summary embeds the campaign's summary, whose own WriteText would take its
// place; the release that ends the embedding deletes both.
func (s *Summary) WriteText(w io.Writer, shown string, info backend.Info, wall time.Duration) {
	s.writeText(w, shown, info, wall)
}

// writeText renders s for people: what was verified, then the campaign's
// table (campaign.Summary.WriteText, the renderer `run` uses), with the
// faults applied only in part before it.
func (s *Summary) writeText(w io.Writer, shown string, info backend.Info, wall time.Duration) {
	row := func(name, format string, args ...any) {
		fmt.Fprintf(w, "%-26s %s\n", name, fmt.Sprintf(format, args...))
	}
	row("backend", "%s", shown)
	if s.Clients.Mode != "" {
		cl := s.Clients.Note
		if s.Clients.Processes > 0 {
			cl += fmt.Sprintf("; %d started, %d stops reported by the kernel (%s stopped in all)", s.Clients.Processes, s.Clients.KernelStops, inMs(s.Clients.KernelStopped))
		}
		row("clients", "%s", cl)
	}
	row("fences", "%s", declared(info.Fences.String(), info.FenceSource))
	if info.Writes == backend.CheckedWrites {
		row("fenced writes", "%s", declared("yes", info.FencedWrite))
	} else {
		row("fenced writes", "%s (a holder paused past its TTL can write after the lease moved on)", declared("no", strings.TrimPrefix(info.FencedWrite, "none: ")))
	}
	mode := "interval (the server reports no clock)"
	if info.ServerTime {
		mode = "exact (the server's clock mapped onto the client's)"
	}
	row("time", "%s, clock uncertainty <= %s", mode, inMs(s.ClockUncertainty))
	if s.ExpiryLateness > 0 {
		row("expiry lateness", "<= %s: the server may free an expired lease that late (refusing acquires, accepting the holder's writes), never early", inMs(s.ExpiryLateness))
	}
	if s.minTTL > 0 && 2*s.ClockUncertainty >= s.minTTL {
		fmt.Fprintf(w, "\nnote: the clock uncertainty (%s) is at least half the TTL (%s). The checker places each operation anywhere\n"+
			"within %s of when the client saw it, so from timing alone it cannot tell a live lease from an expired one: a\n"+
			"second holder during a live lease, an early expiry or a lease living on past its TTL go unflagged. What still\n"+
			"catches two holders is the fences (fence-monotonic, single-writer-per-fence) and the data they wrote. (A\n"+
			"server restart declares this much: it restores leases with a fresh TTL counted from its recovery.)\n",
			inMs(s.ClockUncertainty), inMs(s.minTTL), inMs(s.ClockUncertainty))
	}
	var partial []string
	for _, k := range slices.Concat(faults.AllKinds, faults.ClusterKinds, faults.NetworkKinds) {
		if n := s.FaultsPartial[string(k)]; n > 0 {
			partial = append(partial, fmt.Sprintf("  %-24s %d", k, n))
		}
	}
	if len(partial) > 0 {
		fmt.Fprintln(w, "\nfaults applied in part or not at all (the fault log and the records say why; not counted below)")
		for _, l := range partial {
			fmt.Fprintln(w, l)
		}
	}
	fmt.Fprintln(w)
	s.Summary.WriteText(w, wall)
}
