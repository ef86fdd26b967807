package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/leasecheck/leasecheck/campaign"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
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
	// FenceSource and FencedWrite describe the backend (Info).
	FenceSource string `json:"fence_source"`
	FencedWrite string `json:"fenced_write"`
	// FaultsPartial counts the faults applied in part or not at all (a
	// server verify could only stop, not restart; a holder crashed before
	// its fault struck), by kind, every kind at zero: never in Faults.
	FaultsPartial map[string]int `json:"faults_partial"`
	// Histories are the saved failures' histories.
	Histories []string `json:"histories,omitempty"`
}

func newSummary(info backend.Info, sum *campaign.Summary, kinds []faults.Kind) *Summary {
	s := &Summary{Backend: info.Name, Summary: sum, TimeUnit: "us", FenceSource: info.FenceSource, FencedWrite: info.FencedWrite,
		FaultsPartial: map[string]int{}}
	for _, k := range kinds {
		s.FaultsPartial[string(k)] = 0
	}
	return s
}

// add counts what a round adds beyond the campaign's summary.
func (s *Summary) add(o *campaign.Outcome) {
	s.ClockUncertainty = max(s.ClockUncertainty, o.History.Header.ClockUncertainty)
	for k, n := range o.Partial {
		s.FaultsPartial[string(k)] += n
	}
}

// WriteJSON writes s as one line of JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// WriteText renders s for people: what was verified, then the campaign's
// table (campaign.Summary.WriteText, the renderer `run` uses), with the
// faults applied only in part before it.
func (s *Summary) WriteText(w io.Writer, shown string, info backend.Info, wall time.Duration) {
	row := func(name, format string, args ...any) {
		fmt.Fprintf(w, "%-26s %s\n", name, fmt.Sprintf(format, args...))
	}
	row("backend", "%s", shown)
	row("fences", "%s: %s", info.Fences, info.FenceSource)
	if info.FencedWrites() {
		row("fenced writes", "yes: %s", info.FencedWrite)
	} else {
		row("fenced writes", "no: %s (a holder paused past its TTL can write after the lease moved on)", info.FencedWrite)
	}
	mode := "interval (the server reports no clock)"
	if info.ServerTime {
		mode = "exact (the server's clock mapped onto the client's)"
	}
	row("time", "%s, clock uncertainty <= %.1f ms", mode, float64(s.ClockUncertainty)/1000)
	var partial []string
	for _, k := range faults.AllKinds {
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
