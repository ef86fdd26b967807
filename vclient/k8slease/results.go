package k8slease

import (
	"strings"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/model"
)

// What a sweep gives back, in names a module outside leasecheck can write:
// each seed's judged run (Outcome, to SweepConfig.OnSeed as it is judged),
// the failing ones with the files they were saved as (Failure, Saved), and
// the whole sweep's counts (Summary).

// Outcome is one seed's run, judged on both records: the clients' view
// (History) and the store's record (Store).
type Outcome struct {
	// Seed is the seed the run was drawn from.
	Seed uint64
	// Implementation is the implementation the scenario records.
	Implementation string
	// Violated names the properties the run violated, Warned those it only
	// warned on, in report order (empty: none); StoreOnly those of Violated
	// that only the store's record shows (the clients' view alone would
	// have passed them).
	Violated, Warned, StoreOnly []string
	// Undecided: nothing violated, and the history checker could not
	// decide every property within its budget.
	Undecided bool
	// History is the clients' view: each operation's call and, where its
	// answer arrived, its return and outcome, with the faults' records.
	History *model.History
	// Store is the store's record of the same run: every operation the
	// Lease server and the resource applied, in the order applied, each
	// answered at the instant it was applied (nil where the run's server
	// keeps none). What the world did: judge a write by it.
	Store *model.History
	// Faults counts the faults injected, by kind; NotInjected those the
	// scenario drew that never struck (a pause armed for a write that
	// never came).
	Faults, NotInjected map[string]int
	// Ops, Writes and Grants count the operations the run recorded, its
	// writes, and the acquires the server granted.
	Ops, Writes, Grants int

	o *campaign.Outcome
}

func newOutcome(seed uint64, o *campaign.Outcome) *Outcome {
	out := &Outcome{Seed: seed, Implementation: o.Scenario.Implementation, Violated: o.Failed(), Warned: o.Warned(), Undecided: o.Undecided(),
		History: o.History, Store: o.Store, Faults: map[string]int{}, NotInjected: map[string]int{}, Ops: o.Ops(), o: o}
	for _, p := range out.Violated {
		if o.Check.Verdict(p).String() != "violated" && !campaign.IsRunProperty(p) {
			out.StoreOnly = append(out.StoreOnly, p)
		}
	}
	for k, n := range o.Faults {
		out.Faults[string(k)] = n
	}
	for k, n := range o.Partial {
		if n > 0 {
			out.NotInjected[string(k)] = n
		}
	}
	h := o.History
	if o.Store != nil {
		h = o.Store
	}
	for _, op := range o.History.Ops {
		if op.Kind == model.Write {
			out.Writes++
		}
	}
	for _, op := range h.Ops {
		if op.Kind == model.Acquire && op.OK && op.Returned {
			out.Grants++
		}
	}
	return out
}

// Failed names the properties the run violated (Violated).
func (o *Outcome) Failed() []string { return o.Violated }

// Fails reports whether the run violated property p.
func (o *Outcome) Fails(p string) bool { return o.o.Fails(p) }

// Trace is the run's trace, a line an event: each request, answer, fault,
// belief and harness step at its virtual time.
func (o *Outcome) Trace() string { return strings.Join(o.o.TraceLines(), "\n") }

// Report is the run told as -scenario logs it: the violations and
// warnings, each with its lines of the history and the trace, and the
// verdict.
func (o *Outcome) Report() string {
	var b strings.Builder
	campaign.WriteOutcome(&b, o.o)
	return b.String()
}

// Failure is a seed that violated a property, with the files it was saved
// as, shrunk.
type Failure struct {
	Seed uint64
	// Outcome is the seed's run as drawn (before shrinking).
	Outcome *Outcome
	// Saved is where it was saved, nil when it was not (beyond
	// SweepConfig.MaxSaved); SaveErr says why saving failed.
	Saved   *Saved
	SaveErr error
}

// Saved is the files one failure was saved as.
type Saved struct {
	// Scenario replays it (go test -run TestX -scenario FILE, or
	// ReplayScenario); History is its history, shrunk; Story the account of
	// it in Markdown; Page its one HTML page.
	Scenario, History, Story, Page string
}

// Summary is what a sweep ran and found, over every seed.
type Summary struct {
	// Implementation is the implementation the scenarios record.
	Implementation string
	// Seeds ran from FirstSeed.
	Seeds     int
	FirstSeed uint64
	// Ops, Writes and Grants count the operations recorded, the writes
	// among them and the acquires granted.
	Ops, Writes, Grants int64
	// Faults counts the faults injected, for every kind the sweep draws
	// (at zero when none was); NotInjected those drawn that never struck.
	Faults, NotInjected map[string]int
	// Violations counts the seeds violating each property judged,
	// Warnings those warned on it.
	Violations, Warnings map[string]int
	// Undecided counts the seeds left undecided; Failed those violating a
	// property, FailedSeeds the smallest thousand of them, ascending.
	Undecided, Failed int
	FailedSeeds       []uint64
	// FirstError is the first failed request of the first seed that had
	// one: the cause an unexercised sweep gives.
	FirstError string

	s *campaign.Summary
}

func newSummary(s *campaign.Summary) *Summary {
	return &Summary{Implementation: s.Implementation, Seeds: s.Seeds, FirstSeed: s.FirstSeed, Ops: s.Ops, Writes: s.Writes, Grants: s.Grants,
		Faults: s.Faults, NotInjected: s.NotInjected, Violations: s.Violations, Warnings: s.Warnings, Undecided: s.Undecided,
		Failed: s.Failed, FailedSeeds: s.FailedSeeds, FirstError: s.FirstError, s: s}
}

// Unexercised says why a sweep that ran seeds exercised nothing: no
// operation, grant or write over all of them, or a fault kind drawn and
// never injected; nil when it exercised them all. A sweep that exercised
// nothing is an error, not a pass (WantClean fails it).
func (s *Summary) Unexercised() error { return s.s.Unexercised() }

// String is the sweep's table, as a sweep logs it.
func (s *Summary) String() string {
	var b strings.Builder
	s.s.WriteText(&b, 0)
	return b.String()
}
