package sim

import (
	"slices"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/pairs"
	"github.com/leasecheck/leasecheck/internal/runrecord"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
)

// Result is what a run produced.
type Result struct {
	Scenario *scenario.Scenario
	// History is the run's history v1 in exact mode: call and return are
	// true time, at is the coordinator's lease clock, the header's clock
	// uncertainty bounds |lease clock - true time| over the run.
	History *model.History
	// Trace lists faults, crashes, grants, releases and every change of a
	// holder's belief that it holds the lease, in time order.
	Trace []TraceEvent
	Stats Stats
	// Plan is the faults the run injected or meant to: the scenario's plan,
	// then those an enumerable run's moves struck, at the instant each
	// struck.
	Plan faults.Plan
	// Steps counts the moves the run made (events, faults struck,
	// adversarial requests).
	Steps int
	// Beliefs are the spans during which each holder believed it held the
	// lease; Stops those during which a node was paused or frozen (the
	// property exclusive-belief's exception, package runprop).
	Beliefs []Belief
	Stops   []Stop
	// AdvisoryBelief says the beliefs are a hint the client's library
	// gives, not a promise bounded by the lease: client-go's elector
	// (package vclient/k8slease) calls OnStoppedLeading up to RenewDeadline
	// after a slow renewal's answer, and says it does not fence. Where the
	// history is in fenced storage, exclusive-belief then reports an overlap
	// that no accepted stale write came of as a warning (package runprop).
	// The simulator's holders promise their beliefs: always false here.
	AdvisoryBelief bool
	// HarnessFences says each belief's fence is the harness's reading of
	// the server's record (vclient: the owner's latest grant), not a
	// number the holder reported: belief-fence, which judges the holder's
	// word against the coordinator's, has nothing to judge then.
	HarnessFences bool
	// Pairs are the pairs of fault, step in flight, fault and workload
	// dimension the run met (package pairs).
	Pairs pairs.Set
	// Hash digests every event the loop ran, the history and the trace: two
	// runs of one scenario have the same Hash.
	Hash uint64
}

// Belief, Stop, TraceEvent and Stats are a run's records, as the run
// properties read them (package runrecord); named here for the drivers
// and their users.
type (
	Belief     = runrecord.Belief
	Stop       = runrecord.Stop
	TraceEvent = runrecord.TraceEvent
	Stats      = runrecord.Stats
)

// Record hands r over to the run properties (package runprop): its
// history, slices and measurements shared, not copied, with r.Scenario's
// Setting made for it.
func Record(r *Result) runrecord.Run { return RecordWith(r, nil) }

// RecordWith is Record with s, r.Scenario's Setting, made by the caller
// once for many Results of one scenario (the explorer judges state after
// state); nil makes one.
func RecordWith(r *Result, s *runrecord.Setting) runrecord.Run {
	if s == nil {
		s = Setting(r.Scenario)
	}
	return runrecord.Run{History: r.History, Trace: r.Trace, Stats: &r.Stats, Plan: r.Plan, Beliefs: r.Beliefs, Stops: r.Stops,
		AdvisoryBelief: r.AdvisoryBelief, HarnessFences: r.HarnessFences, Setting: s}
}

// RecordKeys is Record, one run per lease where r's beliefs hold several
// (a candidate holding several Leases, vclient): the run as each lease saw
// it — its history's ops on that key (their lines kept), the beliefs in
// it, and every pause of a holder's as a pause of the holder's part in it
// (runrecord.OnKey), since a paused process holds all its leases paused.
// Each is judged apart: two holders believing in two leases at once is
// what sharding is for. A run of one lease is [Record(r)].
func RecordKeys(r *Result) []runrecord.Run {
	var keys []string
	keyed := false
	for i := range r.Beliefs {
		if k := r.Beliefs[i].Key; k != "" && !slices.Contains(keys, k) {
			keys, keyed = append(keys, k), true
		}
	}
	for i := range r.History.Ops {
		if k := r.History.Ops[i].Key; !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if !keyed && len(keys) <= 1 {
		return []runrecord.Run{Record(r)}
	}
	slices.Sort(keys)
	s := Setting(r.Scenario)
	out := make([]runrecord.Run, 0, len(keys))
	for _, k := range keys {
		h := *r.History
		h.Ops = nil
		for i := range r.History.Ops {
			if r.History.Ops[i].Key == k {
				h.Ops = append(h.Ops, r.History.Ops[i])
			}
		}
		var bs []Belief
		for i := range r.Beliefs {
			if r.Beliefs[i].Key == k {
				bs = append(bs, r.Beliefs[i])
			}
		}
		stops := make([]Stop, len(r.Stops))
		for i, st := range r.Stops {
			st.Process = runrecord.OnKey(st.Process, k)
			stops[i] = st
		}
		run := RecordWith(r, s)
		run.History, run.Beliefs, run.Stops = &h, bs, stops
		out = append(out, run)
	}
	return out
}

// Setting is what the run properties read of sc: its numbers, and each
// holder's settings as sc configures them, with the reference holder's
// defaults (holder.Config.WithDefaults) filled in — what a correct holder
// runs, not what a planted bug makes of it. Nil for a nil sc.
func Setting(sc *scenario.Scenario) *runrecord.Setting {
	if sc == nil {
		return nil
	}
	s := &runrecord.Setting{TTL: sc.TTL, RhoPPM: sc.RhoPPM, Horizon: sc.Horizon, CoordinatorDriftPPM: sc.CoordinatorDriftPPM,
		MaxDelay: sc.Network.MaxDelay, DropPPM: sc.Network.DropPPM, Clients: len(sc.Clients), Adversary: scenario.AdversaryName,
		Holders: make([]runrecord.Holder, len(sc.Holders))}
	for i := range sc.Holders {
		p := &sc.Holders[i]
		told := sc.ToldRho(p)
		c := holder.Config{TTL: sc.TTL, RhoPPM: told, Timeout: p.Timeout, RenewEvery: p.RenewEvery, Margin: p.Margin, RetryMax: p.RetryMax}.WithDefaults()
		s.Holders[i] = runrecord.Holder{Name: p.Name, DriftPPM: p.DriftPPM, ToldRhoPPM: told,
			Timeout: c.Timeout, RenewEvery: c.RenewEvery, Margin: c.Margin, RetryMax: c.RetryMax}
	}
	return s
}

// Bounds returns the liveness bounds of the scenario the result ran
// (docs/specification.md §1, failure modes 1 and 5): after the holder
// crashes another acquires within TTL + the clock bound + its retry
// interval (plus the network's round trip); after a release the next
// acquire succeeds within a retry interval and a round trip, well before
// the TTL runs out: the bounds the run properties judge by
// (runrecord.Setting.Bounds).
func (r *Result) Bounds() (recovery, handoff int64) {
	return Setting(r.Scenario).Bounds(r.History.Header.ClockUncertainty)
}
