package runprop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// The run properties' stable names (they appear in output, JSON and tests).
const (
	// ExclusiveBelief: no two holders believe they hold the lease at once
	// (sim.Stats.DoubleBelief). Judged when no pause or freeze is injected
	// (a paused holder cannot update its belief, so the reference too
	// overlaps for the pause's length).
	ExclusiveBelief = "exclusive-belief"
	// LivenessRecovery: after the lease's holder crashes, another acquires
	// within TTL + clock bound + retry interval (sim.Result.Liveness). Judged
	// on a quiet network with no faults but crashes and clock faults; a crash
	// never recovered from is judged under any faults.
	LivenessRecovery = "liveness-recovery"
	// LivenessHandoff: after a release, the next waiter acquires within a
	// retry interval and a round trip. Same scenarios as LivenessRecovery.
	LivenessHandoff = "liveness-handoff"
	// LivenessRenewal: with no fault and a round trip below the renew
	// timeout, renewals keep the lease: no holder loses it before it
	// releases (every process acquires once, every renew succeeds).
	LivenessRenewal = "liveness-renewal"
)

// Properties returns the run properties' names, in the order they are reported.
func Properties() []string {
	return []string{ExclusiveBelief, LivenessRecovery, LivenessHandoff, LivenessRenewal}
}

// Finding is one violation of a run property.
type Finding struct {
	Property string `json:"property"`
	// Explanation tells what happened, in plain words.
	Explanation string `json:"explanation"`
	// Lines are the history lines involved, ascending (may be empty).
	Lines []int `json:"lines,omitempty"`
	// TraceLines are the 1-based lines of the run's trace (sim.Result.Trace)
	// that show it, ascending (may be empty).
	TraceLines []int `json:"trace_lines,omitempty"`
	// From and To bound when it happened, in the history's time unit.
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Judge judges every run property that applies to r's scenario and returns
// the violations, in the order of Properties.
func Judge(r *sim.Result) []Finding {
	sc := r.Scenario
	var out []Finding
	if beliefApplies(sc) && r.Stats.DoubleBelief > 0 {
		out = append(out, Finding{Property: ExclusiveBelief,
			Explanation: fmt.Sprintf("two holders believed they held the lease at once for %dms in total", r.Stats.DoubleBelief),
			From:        0, To: r.Stats.End})
	}
	var recovery []Finding
	if livenessApplies(sc) {
		for _, bad := range r.Liveness() {
			p := LivenessRecovery
			if strings.HasPrefix(bad, "handoff") {
				p = LivenessHandoff
			}
			f := Finding{Property: p, Explanation: bad, To: r.Stats.End}
			if p == LivenessRecovery {
				recovery = append(recovery, f)
			} else {
				out = append(out, f)
			}
		}
	}
	if len(recovery) == 0 {
		if why := unrecovered(r); why != "" {
			recovery = append(recovery, Finding{Property: LivenessRecovery, Explanation: why, To: r.Stats.End})
		}
	}
	// Keep the order of Properties: recovery before handoff.
	var handoff []Finding
	for _, f := range out {
		if f.Property == LivenessHandoff {
			handoff = append(handoff, f)
		}
	}
	out = slices.DeleteFunc(out, func(f Finding) bool { return f.Property == LivenessHandoff })
	out = append(append(out, recovery...), handoff...)
	if renewalApplies(sc) {
		if why, line := lostLease(r.History); why != "" {
			f := Finding{Property: LivenessRenewal, Explanation: why, To: r.Stats.End}
			if line > 0 {
				f.Lines = []int{line}
			}
			out = append(out, f)
		}
	}
	return out
}

// livenessKinds are the faults under which the liveness bounds hold
// (sim/property_test.go, TestPropertyLiveness).
var livenessKinds = []faults.Kind{faults.ClockOffset, faults.ClockDrift, faults.ClockStep, faults.Crash}

func livenessApplies(sc *scenario.Scenario) bool {
	if sc.Network.DropPPM > 0 {
		return false
	}
	for _, f := range sc.Faults {
		if !slices.Contains(livenessKinds, f.Kind) {
			return false
		}
	}
	return true
}

// unrecovered catches a crash never recovered from, under any faults (the
// rule of sim.Result.Liveness, which judges only clean scenarios): the last
// crash came more than the recovery bound before the horizon, and nobody was
// granted the lease after it.
func unrecovered(r *sim.Result) string {
	if r.Stats.Unrecovered == 0 || r.Stats.Truncated {
		return ""
	}
	last := int64(-1)
	for _, f := range r.Scenario.Faults {
		if f.Kind == faults.Crash || f.Kind == faults.OwnerReuse {
			last = max(last, f.At)
		}
	}
	bound, _ := r.Bounds()
	if last < 0 || r.Scenario.Horizon-last <= bound || !askedAfter(r.History, last) {
		return ""
	}
	return fmt.Sprintf("the holder crashed at t=%d and nobody acquired the lease by the horizon t=%d (bound %dms)", last, r.Scenario.Horizon, bound)
}

// askedAfter reports whether some process asked for the lease after t: a
// run whose holders all finished (or died) owes no recovery (the rule of
// sim.Result.Liveness).
func askedAfter(h *model.History, t int64) bool {
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == model.Acquire && op.Call > t {
			return true
		}
	}
	return false
}

func renewalApplies(sc *scenario.Scenario) bool {
	if len(sc.Faults) > 0 || sc.Network.DropPPM > 0 {
		return false
	}
	// The renew timeout (TTL/3 by default) must exceed the round trip with
	// room to spare; the generator's slow networks (the article's sixth
	// failure mode) flap with the reference too.
	for _, p := range sc.Holders {
		timeout := p.Timeout
		if timeout <= 0 {
			timeout = max(sc.TTL/3, 1)
		}
		if 2*sc.Network.MaxDelay+2 >= timeout {
			return false
		}
	}
	return true
}

// lostLease reports the first sign in h that a holder lost its lease before
// releasing: a second grant to one process, or a renew refused or
// unanswered; and that op's line.
func lostLease(h *model.History) (string, int) {
	grants := map[string]int{}
	for _, op := range h.Ops {
		switch {
		case op.Kind == model.Acquire && op.Returned && op.OK:
			grants[op.Process]++
			if grants[op.Process] == 2 {
				return fmt.Sprintf("line %d: %s acquired a second time: it lost its lease with no fault", op.Line, op.Process), op.Line
			}
		case op.Kind == model.Renew && (!op.Returned || !op.OK):
			return fmt.Sprintf("line %d: %s's renew failed with no fault", op.Line, op.Process), op.Line
		}
	}
	return "", 0
}

func beliefApplies(sc *scenario.Scenario) bool {
	for _, f := range sc.Faults {
		if f.Kind == faults.Pause || f.Kind == faults.Freeze {
			return false
		}
	}
	return true
}
