package campaign

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/faults"
)

// MaxFailedSeeds caps Summary.FailedSeeds: it keeps the smallest failing
// seeds, so a summary's size does not grow with a campaign's failures, and
// merged parts keep exactly the seeds the unsharded run keeps.
const MaxFailedSeeds = 1000

// Summary is what a campaign found: counts, and exact histograms for the
// latency percentiles. It is a mergeable value: Add one outcome at a time
// (memory does not grow with the number of seeds), Merge the summaries of
// disjoint parts into the summary of their union, byte for byte in JSON.
// Nothing in it depends on the number of workers, the order in which seeds
// finished or the wall clock (only an undecided verdict depends on the
// machine's speed; a negative budget removes that).
type Summary struct {
	// Implementation is the target's name (Target.Implementation).
	Implementation string `json:"implementation,omitempty"`
	Seeds          int    `json:"seeds"`
	FirstSeed      uint64 `json:"first_seed"`
	Ops            int64  `json:"ops"`
	// Writes counts the writes recorded (accepted, refused or never
	// answered): a campaign whose operations are all lease traffic
	// exercised no writer, and is an error (Unexercised).
	Writes int64 `json:"writes"`
	// Grants counts the acquires granted over the seeds. A campaign with
	// no operation or no grant exercised nothing, and is an error
	// (Unexercised), not a pass.
	Grants int64 `json:"grants"`
	// FirstError is the first failed request of the first seed that had
	// one (Execution.FirstError): the cause an unexercised campaign gives.
	FirstError string `json:"first_error"`
	// Faults counts the faults injected, for every kind of the campaign.
	Faults map[string]int `json:"faults"`
	// NotInjected counts the faults the scenarios drew that never struck
	// or were applied in part (Execution.Partial: a pause armed for a
	// write no candidate made), by kind ({} when none). A kind drawn and
	// never injected over a whole campaign is an error (Unexercised).
	NotInjected map[string]int `json:"not_injected"`
	// NotInjectedWhy is the first reason a fault of each kind of
	// NotInjected gave for not striking (its fault record's detail).
	NotInjectedWhy map[string]string `json:"not_injected_why,omitempty"`
	// Violations counts the seeds that violate each property judged.
	Violations map[string]int `json:"violations"`
	// Warnings counts the seeds with a warning on each property (a finding
	// that violates nothing: Outcome.Warnings); absent when none.
	Warnings map[string]int `json:"warnings,omitempty"`
	// Undecided counts seeds with no violation whose linearizability search
	// ran out of budget.
	Undecided int `json:"undecided"`
	// Failed counts the seeds with a violation; FailedSeeds lists the
	// smallest MaxFailedSeeds of them, ascending.
	Failed      int      `json:"failed"`
	FailedSeeds []uint64 `json:"failed_seeds"`
	// Sweep is the whole sweep this summary is one shard of (run --shard
	// I/N), nil for an unsharded run and for a merge. Each shard carries it
	// so that Merge can tell a missing first or last shard from a smaller
	// sweep: without it the union of shards 2..N is a valid-looking range.
	Sweep *SweepPart `json:"sweep,omitempty"`
	// SimStats are the simulator's measurements (nil for a real backend).
	*SimStats
}

// SweepPart says which part of which sweep a shard's summary covers: the
// sweep's whole range (FirstSeed, Seeds) and the shard Shard of Shards.
type SweepPart struct {
	FirstSeed uint64 `json:"first_seed"`
	Seeds     int    `json:"seeds"`
	Shard     int    `json:"shard"`
	Shards    int    `json:"shards"`
}

func (w SweepPart) String() string {
	return fmt.Sprintf("shard %d/%d of seeds %s", w.Shard, w.Shards, seedSpan(w.FirstSeed, w.Seeds))
}

// SimStats are the measurements of simulated runs, summed over seeds.
type SimStats struct {
	Events      int64 `json:"events"`
	SimulatedMs int64 `json:"simulated_ms"`
	Dropped     int64 `json:"messages_dropped"`
	Duplicated  int64 `json:"messages_duplicated"`
	// Recovery: ms from the crash of the lease's holder (while another
	// waited) to the next grant; Unrecovered: such crashes never recovered.
	Recovery    Latency `json:"recovery_ms"`
	Unrecovered int     `json:"unrecovered"`
	// Handoff: ms from a release (while another waited) to the next grant.
	Handoff Latency `json:"handoff_ms"`
	// DoubleBeliefMs is the total time two holders believed they held the
	// lease at once, in DoubleBeliefN seeds.
	DoubleBeliefMs int64 `json:"double_belief_ms"`
	DoubleBeliefN  int   `json:"double_belief_seeds"`
	// Truncated counts runs stopped by the event bound.
	Truncated int `json:"truncated"`
}

// NewSummary returns the empty summary of a campaign against the target
// named impl from seed first, listing every fault kind in kinds and every
// property in props at zero.
func NewSummary(impl string, first uint64, kinds []faults.Kind, props []string, simulated bool) *Summary {
	s := &Summary{Implementation: impl, FirstSeed: first, Faults: map[string]int{}, NotInjected: map[string]int{}, Violations: map[string]int{}, FailedSeeds: []uint64{}}
	for _, k := range kinds {
		s.Faults[string(k)] = 0
	}
	for _, p := range props {
		s.Violations[p] = 0
	}
	if simulated {
		s.SimStats = &SimStats{}
	}
	return s
}

// Add counts one judged seed.
func (s *Summary) Add(seed uint64, o *Outcome) {
	s.Seeds++
	s.Ops += int64(o.Ops())
	s.Writes += o.writes()
	s.Grants += o.grants()
	if s.FirstError == "" {
		s.FirstError = o.firstError()
	}
	for k, n := range o.Faults {
		s.Faults[string(k)] += n
	}
	for k, n := range o.Partial {
		if n == 0 {
			continue
		}
		if s.NotInjected == nil {
			s.NotInjected = map[string]int{}
		}
		if s.NotInjectedWhy == nil {
			s.NotInjectedWhy = map[string]string{}
		}
		s.NotInjected[string(k)] += n
		if _, ok := s.NotInjectedWhy[string(k)]; !ok {
			s.NotInjectedWhy[string(k)] = o.partialWhy(k)
		}
	}
	for _, p := range o.Failed() {
		s.Violations[p]++ // seeds, not counterexamples
	}
	for _, p := range o.Warned() {
		if s.Warnings == nil {
			s.Warnings = map[string]int{}
		}
		s.Warnings[p]++
	}
	if o.Undecided() {
		s.Undecided++
	}
	if o.Violated() {
		s.Failed++
		s.FailedSeeds = insertCapped(s.FailedSeeds, seed)
	}
	if o.Sim != nil && s.SimStats != nil {
		st := &o.Sim.Stats
		m := s.SimStats
		m.Events += st.Events
		m.SimulatedMs += st.End
		m.Dropped += int64(st.Dropped)
		m.Duplicated += int64(st.Duplicated)
		for _, d := range st.Recoveries {
			m.Recovery.Observe(d)
		}
		for _, d := range st.Handoffs {
			m.Handoff.Observe(d)
		}
		m.Unrecovered += st.Unrecovered
		m.DoubleBeliefMs += st.DoubleBelief
		if st.DoubleBelief > 0 {
			m.DoubleBeliefN++
		}
		if st.Truncated {
			m.Truncated++
		}
	}
}

// insertCapped inserts seed into the ascending list xs, keeping the
// smallest MaxFailedSeeds.
func insertCapped(xs []uint64, seed uint64) []uint64 {
	i, found := slices.BinarySearch(xs, seed)
	if found || i >= MaxFailedSeeds {
		return xs
	}
	xs = slices.Insert(xs, i, seed)
	if len(xs) > MaxFailedSeeds {
		xs = xs[:MaxFailedSeeds]
	}
	return xs
}

// Violated reports whether some seed violated a property.
func (s *Summary) Violated() bool { return s.Failed > 0 }

// Unexercised says why a campaign that ran seeds exercised nothing — no
// operation recorded, or no lease granted, over all of them (every request
// failing: a client and a server that do not speak one content type, a
// backend that refuses every call), or no write (its operations all lease
// traffic: a fenced client that never learned a token writes nothing), or
// a fault kind its scenarios drew and never injected (a pause strikes at a
// write, and none was made; a kind the harness cannot apply to the target,
// whose record says "not applied: why", is not counted here) — with the first failed request, or the
// fault's own record, as its cause; nil when the seeds exercised the
// lease, the writer and every fault kind drawn, or none ran (an empty
// shard). A campaign that exercised nothing is an error (exit 2), not a
// pass: Status says so unless a seed violated a property.
func (s *Summary) Unexercised() error {
	if s.Seeds == 0 {
		return nil
	}
	seeds := Count(int64(s.Seeds), "seed", "seeds")
	if s.Ops > 0 && s.Grants > 0 && s.Writes > 0 {
		for _, k := range orderedKinds(s.NotInjected) {
			// A kind the harness cannot apply to this target says so
			// ("not applied: ... is one server, not a cluster"): shown in
			// the summary, not an error. One that could have struck and
			// never did (a pause armed for a write that never came) is.
			if strings.HasPrefix(s.NotInjectedWhy[k], "not applied:") {
				continue
			}
			if s.Faults[k] == 0 && s.NotInjected[k] > 0 {
				why := ""
				if w := s.NotInjectedWhy[k]; w != "" {
					why = " (the first: " + w + ")"
				}
				return fmt.Errorf("%s did not exercise its faults: over %s, the scenarios drew %s and none was injected%s",
					s.Implementation, seeds, Count(int64(s.NotInjected[k]), k+" fault", k+" faults"), why)
			}
		}
		return nil
	}
	what := "no operation was recorded"
	switch {
	case s.Ops > 0 && s.Grants == 0:
		what = fmt.Sprintf("%s recorded, and no lease was granted", Count(s.Ops, "operation", "operations"))
	case s.Ops > 0:
		what = fmt.Sprintf("%s and %s recorded, and no write: every operation was lease traffic", Count(s.Ops, "operation", "operations"), Count(s.Grants, "grant", "grants"))
	}
	cause := "no request failed: nothing was asked"
	if s.FirstError != "" {
		cause = "the first failed request: " + s.FirstError
	}
	return fmt.Errorf("%s exercised nothing: over %s, %s; %s", s.Implementation, seeds, what, cause)
}

// Status is the campaign's exit status (Status): a violation wins, then a
// campaign that exercised nothing (ExitUsage, Unexercised), then an
// undecided seed.
func (s *Summary) Status() int {
	if !s.Violated() && s.Unexercised() != nil {
		return ExitUsage
	}
	return Status(s.Violated(), s.Undecided > 0)
}

// Merge combines the summaries of disjoint parts of one campaign (shards,
// or consecutive seed ranges) into the summary of their union: the same
// value, and the same JSON bytes, as one run over the union. The parts must
// be of the same target, fault kinds and properties. Shards (parts with a
// Sweep) must all be of one sweep, each whole and each given once, and
// together be every shard of it: a missing shard is refused wherever it is,
// first and last included. Unsharded parts must tile one range without gap
// or overlap.
func Merge(parts ...*Summary) (*Summary, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no summaries")
	}
	ps := slices.Clone(parts)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].FirstSeed < ps[j].FirstSeed })
	if err := checkSweep(ps); err != nil {
		return nil, err
	}
	a := ps[0]
	out := &Summary{Implementation: a.Implementation, FirstSeed: a.FirstSeed, Faults: map[string]int{}, NotInjected: map[string]int{}, Violations: map[string]int{}, FailedSeeds: []uint64{}}
	if a.SimStats != nil {
		out.SimStats = &SimStats{}
	}
	next := a.FirstSeed
	for i, p := range ps {
		switch {
		case p.Implementation != a.Implementation:
			return nil, fmt.Errorf("merge: implementation %q and %q: not one campaign", a.Implementation, p.Implementation)
		case !sameKeys(p.Faults, a.Faults):
			return nil, fmt.Errorf("merge: fault kinds %v and %v: not one campaign", sortedKeys(a.Faults), sortedKeys(p.Faults))
		case !sameKeys(p.Violations, a.Violations):
			return nil, fmt.Errorf("merge: properties %v and %v: not one campaign", sortedKeys(a.Violations), sortedKeys(p.Violations))
		case (p.SimStats == nil) != (a.SimStats == nil):
			return nil, fmt.Errorf("merge: a simulated and a real campaign")
		case i > 0 && p.FirstSeed < next:
			return nil, fmt.Errorf("merge: seeds %s and %s overlap", ps[i-1].seedRange(), p.seedRange())
		case i > 0 && p.FirstSeed > next:
			return nil, fmt.Errorf("merge: seeds %d..%d are in no summary (between %s and %s; a shard stopped early, or one is missing)",
				next, p.FirstSeed-1, ps[i-1].seedRange(), p.seedRange())
		}
		next = p.FirstSeed + uint64(p.Seeds)
		out.Seeds += p.Seeds
		out.Ops += p.Ops
		out.Writes += p.Writes
		out.Grants += p.Grants
		if out.FirstError == "" {
			out.FirstError = p.FirstError
		}
		for k, n := range p.Faults {
			out.Faults[k] += n
		}
		for k, n := range p.Violations {
			out.Violations[k] += n
		}
		for k, n := range p.NotInjected {
			if out.NotInjectedWhy == nil {
				out.NotInjectedWhy = map[string]string{}
			}
			out.NotInjected[k] += n
			if _, ok := out.NotInjectedWhy[k]; !ok && p.NotInjectedWhy[k] != "" {
				out.NotInjectedWhy[k] = p.NotInjectedWhy[k]
			}
		}
		for k, n := range p.Warnings {
			if out.Warnings == nil {
				out.Warnings = map[string]int{}
			}
			out.Warnings[k] += n
		}
		out.Undecided += p.Undecided
		out.Failed += p.Failed
		for _, seed := range p.FailedSeeds {
			out.FailedSeeds = insertCapped(out.FailedSeeds, seed)
		}
		if m, q := out.SimStats, p.SimStats; m != nil {
			m.Events += q.Events
			m.SimulatedMs += q.SimulatedMs
			m.Dropped += q.Dropped
			m.Duplicated += q.Duplicated
			m.Recovery.Merge(&q.Recovery)
			m.Handoff.Merge(&q.Handoff)
			m.Unrecovered += q.Unrecovered
			m.DoubleBeliefMs += q.DoubleBeliefMs
			m.DoubleBeliefN += q.DoubleBeliefN
			m.Truncated += q.Truncated
		}
	}
	return out, nil
}

// checkSweep checks that the shards among ps (sorted by first seed) are
// every shard of one sweep, each whole, each once. Either every part is a
// shard or none is: an unsharded range mixed with shards is two campaigns'
// bookkeeping, and its place in the sweep cannot be checked.
func checkSweep(ps []*Summary) error {
	var first *Summary
	for _, p := range ps {
		if p.Sweep != nil {
			first = p
			break
		}
	}
	if first == nil {
		return nil
	}
	w := *first.Sweep
	if w.Shards < 1 || w.Seeds < w.Shards {
		return fmt.Errorf("merge: %s: not a valid sweep", w)
	}
	got := make([]*Summary, w.Shards+1)
	for _, p := range ps {
		if p.Sweep == nil {
			return fmt.Errorf("merge: seeds %s are not a shard, but seeds %s are %s: not one sweep", p.seedRange(), first.seedRange(), w)
		}
		q := *p.Sweep
		if q.FirstSeed != w.FirstSeed || q.Seeds != w.Seeds || q.Shards != w.Shards {
			return fmt.Errorf("merge: %s and %s: not one sweep", w, q)
		}
		if q.Shard < 1 || q.Shard > q.Shards {
			return fmt.Errorf("merge: %s: no such shard", q)
		}
		if got[q.Shard] != nil {
			return fmt.Errorf("merge: shard %d/%d is given twice (seeds %s and %s overlap)", q.Shard, q.Shards, got[q.Shard].seedRange(), p.seedRange())
		}
		got[q.Shard] = p
		wantFirst, wantN := Shard{q.Shard, q.Shards}.Of(w.FirstSeed, w.Seeds)
		if p.FirstSeed != wantFirst || p.Seeds > wantN {
			return fmt.Errorf("merge: %s should cover seeds %s, but covers %s", q, seedSpan(wantFirst, wantN), p.seedRange())
		}
		if p.Seeds < wantN {
			return fmt.Errorf("merge: %s stopped early: seeds %s of %s (a shard run with --fail-fast, or interrupted)", q, p.seedRange(), seedSpan(wantFirst, wantN))
		}
	}
	var missing []string
	for i := 1; i <= w.Shards; i++ {
		if got[i] == nil {
			f, n := Shard{i, w.Shards}.Of(w.FirstSeed, w.Seeds)
			missing = append(missing, fmt.Sprintf("shard %d/%d (seeds %s)", i, w.Shards, seedSpan(f, n)))
		}
	}
	if len(missing) > 0 {
		more := ""
		if len(missing) > 10 {
			more = fmt.Sprintf(" and %d more", len(missing)-10)
			missing = missing[:10]
		}
		return fmt.Errorf("merge: the sweep of seeds %s in %d shards is missing %s%s", seedSpan(w.FirstSeed, w.Seeds), w.Shards, strings.Join(missing, ", "), more)
	}
	return nil
}

func (s *Summary) seedRange() string { return seedSpan(s.FirstSeed, s.Seeds) }

func seedSpan(first uint64, n int) string {
	if n <= 0 {
		return fmt.Sprintf("none from %d", first)
	}
	return fmt.Sprintf("%d..%d", first, first+uint64(n)-1)
}

func sameKeys(a, b map[string]int) bool {
	return slices.Equal(sortedKeys(a), sortedKeys(b))
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// WriteJSON writes s as one line of JSON: the bytes `run --json` prints
// and `merge` reproduces.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// ReadSummary parses a summary written by WriteJSON; unknown fields are
// errors (a file that is not a campaign summary).
func ReadSummary(r io.Reader) (*Summary, error) {
	d := json.NewDecoder(r)
	d.DisallowUnknownFields()
	var s Summary
	if err := d.Decode(&s); err != nil {
		return nil, err
	}
	if s.Faults == nil || s.Violations == nil || s.FailedSeeds == nil {
		return nil, fmt.Errorf("not a campaign summary (no faults, violations or failed_seeds)")
	}
	if s.Seeds < 0 || s.Failed < len(s.FailedSeeds) || !slices.IsSorted(s.FailedSeeds) {
		return nil, fmt.Errorf("inconsistent summary (seeds %d, failed %d, failed_seeds %d)", s.Seeds, s.Failed, len(s.FailedSeeds))
	}
	return &s, nil
}

// WriteText renders s as the table `run` prints for people; wall is the
// campaign's wall time (0: not shown), the only thing in it that is not a
// function of the seeds.
func (s *Summary) WriteText(w io.Writer, wall time.Duration) {
	row := func(name, format string, args ...any) {
		fmt.Fprintf(w, "%-26s %s\n", name, fmt.Sprintf(format, args...))
	}
	if s.Implementation != "" {
		row("implementation", "%s", s.Implementation)
	}
	if s.Seeds > 0 {
		row("seeds", "%d (%d..%d)", s.Seeds, s.FirstSeed, s.FirstSeed+uint64(s.Seeds)-1)
	} else {
		row("seeds", "0")
	}
	row("operations", "%d", s.Ops)
	row("writes", "%d", s.Writes)
	row("grants", "%d", s.Grants)
	if m := s.SimStats; m != nil {
		simSec := float64(m.SimulatedMs) / 1000
		row("simulated events", "%d", m.Events)
		row("simulated time", "%.1fs", simSec)
		if wall > 0 {
			row("wall time", "%.2fs (%.0f simulated s per wall s)", wall.Seconds(), simSec/max(wall.Seconds(), 1e-9))
		}
		row("messages", "%d dropped, %d duplicated", m.Dropped, m.Duplicated)
	} else if wall > 0 {
		row("wall time", "%.2fs", wall.Seconds())
	}
	fmt.Fprintln(w, "\nfaults injected")
	for _, k := range orderedKinds(s.Faults) {
		not := ""
		if n := s.NotInjected[k]; n > 0 {
			not = fmt.Sprintf("  (%d drawn and never struck)", n)
		}
		fmt.Fprintf(w, "  %-24s %d%s\n", k, s.Faults[k], not)
	}
	fmt.Fprintln(w, "\nseeds violating")
	for _, p := range orderedProps(s.Violations) {
		kind := ""
		if IsRunProperty(p) {
			kind = "  (run property)"
		}
		fmt.Fprintf(w, "  %-24s %d%s\n", p, s.Violations[p], kind)
	}
	fmt.Fprintf(w, "  %-24s %d\n", "(undecided)", s.Undecided)
	if len(s.Warnings) > 0 {
		fmt.Fprintln(w, "\nseeds warned (counted, violating nothing)")
		for _, p := range orderedProps(s.Warnings) {
			fmt.Fprintf(w, "  %-24s %d\n", p, s.Warnings[p])
		}
	}
	if m := s.SimStats; m != nil {
		fmt.Fprintln(w, "\nliveness (simulated ms)")
		fmt.Fprintf(w, "  %-24s %s, %d never recovered\n", "recovery after a crash", m.Recovery.Text(), m.Unrecovered)
		fmt.Fprintf(w, "  %-24s %s\n", "handoff after a release", m.Handoff.Text())
		fmt.Fprintf(w, "  %-24s %dms total, in %s\n", "double-belief windows", m.DoubleBeliefMs, Count(int64(m.DoubleBeliefN), "seed", "seeds"))
		if m.Truncated > 0 {
			fmt.Fprintf(w, "  %-24s %s hit the event bound\n", "truncated", Count(int64(m.Truncated), "seed", "seeds"))
		}
	}
	switch {
	case s.Failed > 0:
		shown := s.FailedSeeds
		more := ""
		if len(shown) > 20 {
			shown, more = shown[:20], fmt.Sprintf(" and %d more", s.Failed-20)
		} else if s.Failed > len(shown) {
			more = fmt.Sprintf(" and %d more", s.Failed-len(shown))
		}
		fmt.Fprintf(w, "\nFAIL: %s of %d: %v%s\n", Count(int64(s.Failed), "seed", "seeds"), s.Seeds, shown, more)
	case s.Unexercised() != nil:
		fmt.Fprintf(w, "\nERROR: %v\n", s.Unexercised())
	case s.Undecided > 0:
		fmt.Fprintf(w, "\nUNDECIDED: %s of %d ran out of the search budget (raise --timeout)\n", Count(int64(s.Undecided), "seed", "seeds"), s.Seeds)
	default:
		fmt.Fprintf(w, "\nOK: every property held on every seed\n")
	}
}

// orderedKinds lists a summary's fault kinds in the vocabulary's order,
// unknown names after them sorted.
func orderedKinds(m map[string]int) []string {
	var out []string
	for _, k := range faults.AllKinds {
		if _, ok := m[string(k)]; ok {
			out = append(out, string(k))
		}
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func orderedProps(m map[string]int) []string {
	var out []string
	for _, p := range Properties() {
		if _, ok := m[p]; ok {
			out = append(out, p)
		}
	}
	for _, p := range sortedKeys(m) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
