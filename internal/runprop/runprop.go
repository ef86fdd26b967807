package runprop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/liveness"
	"github.com/leasecheck/leasecheck/internal/runrecord"
	"github.com/leasecheck/leasecheck/model"
)

// The run properties' stable names (they appear in output, JSON and tests).
const (
	// ExclusiveBelief: no two holders believe they hold the lease at once,
	// except where the one holding the older grant could not know better
	// (belief.go).
	ExclusiveBelief = "exclusive-belief"
	// LivenessRecovery: after the lease's holder crashes, another acquires
	// within TTL + the clock bound + its retry interval (+ a round trip).
	LivenessRecovery = "liveness-recovery"
	// LivenessHandoff: after a release, the next waiter acquires within a
	// retry interval and a round trip, without waiting out the TTL.
	LivenessHandoff = "liveness-handoff"
	// LivenessRenewal: where renewals are timely (no faults, a quiet
	// network, a renew interval and round trip well inside the holder's
	// deadline), they keep the lease: no holder loses it before it releases.
	LivenessRenewal = "liveness-renewal"
	// BeliefFence: every holder believes under the fence the coordinator
	// granted it; a holder that reports another is the finding
	// (belief.go).
	BeliefFence = "belief-fence"
)

// Properties returns the run properties' names, in the order they are reported.
func Properties() []string {
	return []string{ExclusiveBelief, LivenessRecovery, LivenessHandoff, LivenessRenewal, BeliefFence}
}

// Finding is one violation of a run property.
type Finding struct {
	Property string `json:"property"`
	// Explanation tells what happened, in plain words.
	Explanation string `json:"explanation"`
	// Lines are the history lines involved, ascending (may be empty).
	Lines []int `json:"lines,omitempty"`
	// TraceLines are the 1-based lines of the run's trace (runrecord.Run.Trace)
	// that show it, ascending (may be empty).
	TraceLines []int `json:"trace_lines,omitempty"`
	// From and To bound when it happened, in the history's time unit.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// Warning marks a finding that is counted and told but violates
	// nothing: an exclusive-belief overlap a working fence made harmless
	// (belief.go). JudgeWarned returns them apart; Judge never does.
	Warning bool `json:"warning,omitempty"`
}

// maxFindings caps the findings of one property in one run: the first few
// tell the story, the rest repeat it.
const maxFindings = 3

// Judge judges every run property that applies to r's scenario and returns
// the violations, in the order of Properties.
func Judge(r runrecord.Run) []Finding {
	v, _ := judgeWarned(&r)
	return v
}

// JudgeWarned is Judge, and the warnings apart: findings that are counted
// and explained but violate nothing (today: an exclusive-belief overlap in
// fenced storage that no accepted stale write came of).
func JudgeWarned(r runrecord.Run) (violations, warnings []Finding) {
	return judgeWarned(&r)
}

func judgeWarned(r *runrecord.Run) (violations, warnings []Finding) {
	v, warnings := exclusiveBeliefWarned(r)
	violations = append(violations, v...)
	violations = append(violations, recovery(r)...)
	violations = append(violations, handoff(r)...)
	violations = append(violations, renewal(r)...)
	violations = append(violations, beliefFence(r)...)
	return violations, warnings
}

// Applies reports whether property p is judged on run r at all (the
// exclusive-belief exception is judged inside it, span by span; a crash
// never recovered from is judged on every run).
func Applies(p string, r runrecord.Run) bool {
	switch p {
	case ExclusiveBelief, BeliefFence:
		return true
	case LivenessRecovery, LivenessHandoff:
		return livenessApplies(&r)
	case LivenessRenewal:
		return renewalApplies(&r)
	}
	return false
}

// LivenessApplies reports whether recovery and handoff are judged on r: a
// network that loses nothing, no adversarial client (which may take the
// lease itself), and only faults of liveness.FaultKinds (those of the scenario's
// plan and those an explored path struck). A crash never recovered from is
// judged under any faults (see recovery).
func LivenessApplies(r runrecord.Run) bool { return livenessApplies(&r) }

func livenessApplies(r *runrecord.Run) bool {
	if r.Setting.DropPPM > 0 || adversarial(r) {
		return false
	}
	for _, f := range r.Plan {
		if !slices.Contains(liveness.FaultKinds, f.Kind) {
			return false
		}
	}
	return true
}

// adversarial reports whether an adversarial client took part in r.
func adversarial(r *runrecord.Run) bool {
	if r.Setting.Clients > 0 {
		return true
	}
	for i := range r.History.Ops {
		if r.History.Ops[i].Process == r.Setting.Adversary {
			return true
		}
	}
	return false
}

func recovery(r *runrecord.Run) []Finding {
	sc := r.Setting
	rb, _ := sc.Bounds(r.History.Header.ClockUncertainty)
	var out []Finding
	if livenessApplies(r) {
		for i, d := range r.Stats.Recoveries {
			if d <= rb || len(out) == maxFindings {
				continue
			}
			at := r.Stats.RecoveryAt[i]
			f := Finding{Property: LivenessRecovery, From: at, To: at + d}
			crash := traceAt(r, at, "crashed", "")
			grant := traceAt(r, at+d, "granted", "")
			f.TraceLines = lines(crash, grant)
			who := "the lease's holder"
			if crash > 0 {
				who = r.Trace[crash-1].Node
			}
			f.Explanation = fmt.Sprintf("%s crashed at t=%d holding the lease while another holder waited; the next grant came only at t=%d, %dms later: "+
				"more than the bound TTL + twice the clock uncertainty + the retry interval + a round trip = %dms. A lease must not block the others much longer than one TTL.",
				who, at, at+d, d, rb)
			if grant > 0 {
				f.Lines = grantLine(r, r.Trace[grant-1].Detail)
			}
			out = append(out, f)
		}
	}
	if len(out) > 0 {
		return out
	}
	if f, ok := unrecovered(r, rb); ok {
		out = append(out, f)
	}
	return out
}

// unrecovered catches a crash never recovered from, under any faults: the
// lease's holder crashed while another waited, a holder asked for the lease
// after the crash, and nobody was granted it although the run went on for
// more than the recovery bound after the crash and after every other fault
// had ended (holders retry until granted, so a correct coordinator grants
// within the bound once the faults are over). A network that loses messages
// or an adversarial client (which may take the lease itself) owes no such
// bound.
func unrecovered(r *runrecord.Run, rb int64) (Finding, bool) {
	sc := r.Setting
	if r.Stats.Unrecovered == 0 || r.Stats.Truncated || sc.DropPPM > 0 || adversarial(r) {
		return Finding{}, false
	}
	since := r.Stats.UnrecoveredSince
	quiet := since
	for _, f := range r.Plan {
		quiet = max(quiet, f.At+f.Duration)
	}
	if sc.Horizon-quiet <= rb {
		return Finding{}, false
	}
	for i := range r.History.Ops {
		op := &r.History.Ops[i]
		if op.Kind != model.Acquire || op.Call <= since {
			continue
		}
		f := Finding{Property: LivenessRecovery, From: since, To: sc.Horizon, Lines: []int{op.Line},
			TraceLines: lines(traceAt(r, since, "crashed", ""))}
		f.Explanation = fmt.Sprintf("the lease's holder crashed at t=%d; %s asked for the lease at t=%d (line %d), yet nobody was granted it by the horizon t=%d, "+
			"although every fault had ended by t=%d and the bound is %dms: a dead holder blocks the others for good, the failure mode of a lock without a lease.",
			since, op.Owner, op.Call, op.Line, sc.Horizon, quiet, rb)
		return f, true
	}
	return Finding{}, false
}

func handoff(r *runrecord.Run) []Finding {
	sc := r.Setting
	if !livenessApplies(r) {
		return nil
	}
	_, hb := sc.Bounds(r.History.Header.ClockUncertainty)
	var out []Finding
	for i, d := range r.Stats.Handoffs {
		tooSlow := d > hb || hb < sc.TTL && d >= sc.TTL
		if !tooSlow || len(out) == maxFindings {
			continue
		}
		at := r.Stats.HandoffAt[i]
		rel := traceAt(r, at, "released", "")
		grant := traceAt(r, at+d, "granted", "")
		f := Finding{Property: LivenessHandoff, From: at, To: at + d, TraceLines: lines(rel, grant)}
		who := "a holder"
		if rel > 0 {
			who = r.Trace[rel-1].Detail
		}
		f.Explanation = fmt.Sprintf("%s released the lease at t=%d while another holder waited, yet the next grant came only at t=%d, %dms later "+
			"(bound: a retry interval and a round trip, %dms; TTL %dms): a graceful handoff must not wait out the lease.",
			who, at, at+d, d, hb, sc.TTL)
		if grant > 0 {
			f.Lines = grantLine(r, r.Trace[grant-1].Detail)
		}
		out = append(out, f)
	}
	return out
}

// renewalKinds are the faults that leave renewals alone: clock offsets and
// wall-clock steps (leases live on the monotonic clock), drift within rho
// (the timeliness test below counts it), a crash or an owner reuse (the
// crashed process's renew goes unanswered for that reason, and is not
// judged), an overrun (renewals go on while the work runs), a late second
// release, a graceful shutdown (it ends the holder's renewals on purpose,
// with a release where the client makes one).
var renewalKinds = []faults.Kind{faults.ClockOffset, faults.ClockStep, faults.ClockDrift, faults.Crash, faults.OwnerReuse,
	faults.Overrun, faults.DoubleRelease, faults.Shutdown}

// RenewalApplies reports whether liveness-renewal is judged on r: only
// faults that leave renewals alone, a quiet network, no adversarial client, and for every holder a
// renewal that is answered well inside its local deadline (renew interval,
// stretched by drift, plus a round trip, below TTL·(1 − 2ρ) − margin) and a
// request timeout above the round trip. Slower settings flap by design —
// the article's sixth failure mode, "a TTL far below the renewal latency" —
// and are judged by the other properties only.
func RenewalApplies(r runrecord.Run) bool { return renewalApplies(&r) }

func renewalApplies(r *runrecord.Run) bool {
	sc := r.Setting
	if sc.DropPPM > 0 || adversarial(r) {
		return false
	}
	for _, f := range r.Plan {
		if !slices.Contains(renewalKinds, f.Kind) {
			return false
		}
	}
	rtt := 2*sc.MaxDelay + 2
	for i := range sc.Holders {
		c := &sc.Holders[i]
		told := c.ToldRhoPPM
		if rtt >= c.Timeout {
			return false
		}
		deadline := sc.TTL - (2*sc.TTL*told+999_999)/1_000_000 - max(c.Margin, 0)
		stretched := c.RenewEvery + (2*c.RenewEvery*sc.RhoPPM+999_999)/1_000_000
		if stretched+rtt+rtt/2+1 >= deadline {
			return false
		}
	}
	return true
}

func renewal(r *runrecord.Run) []Finding {
	if !renewalApplies(r) {
		return nil
	}
	why, line := lostLease(r)
	if why == "" {
		return nil
	}
	return []Finding{{Property: LivenessRenewal, Explanation: why, Lines: []int{line}, To: r.Stats.End}}
}

// lostLease reports the first sign in r's history that a holder lost its
// lease before releasing: a second grant to one process with no release
// of its in between (one that released and asks again starts a new term),
// or a renew refused, or unanswered past its timeout (a run cut short may
// end while a renew is still on its way), of a process that held the lease
// (a restarted incarnation under its predecessor's identity may take the
// lease record it finds for its own: its first "renew" of it can lose to
// a takeover of the lease its predecessor left, which is not a renewal
// failing); and that op's line.
func lostLease(r *runrecord.Run) (string, int) {
	timeout := map[string]int64{}
	for _, p := range r.Setting.Holders {
		timeout[p.Name] = p.Timeout
	}
	grants := map[string]int{}
	held := map[string]bool{}
	for _, op := range r.History.Ops {
		if op.OK && (op.Kind == model.Acquire || op.Kind == model.Renew) {
			held[op.Process] = true
		}
		switch {
		case op.Kind == model.Renew && !held[op.Process]:
			continue // never held: nothing of its own to lose
		case op.Kind == model.Acquire && op.Returned && op.OK:
			grants[op.Process]++
			if grants[op.Process] == 2 {
				return fmt.Sprintf("line %d: %s acquired a second time: it lost its lease with no fault, on a network fast enough for its renewals", op.Line, op.Process), op.Line
			}
		case op.Kind == model.Release && op.OK:
			grants[op.Process] = 0
		case op.Kind == model.Renew && op.Returned && !op.OK:
			return fmt.Sprintf("line %d: %s's renew was refused with no fault, on a network fast enough for its renewals", op.Line, op.Process), op.Line
		case op.Kind == model.Renew && !op.Returned:
			node, _, _ := strings.Cut(op.Process, "#")
			if t, ok := timeout[node]; ok && r.Stats.End < op.Call+t {
				continue // still on its way when the run stopped
			}
			if crashedAfter(r, node, op.Call) {
				continue // its process died with the renew in flight
			}
			return fmt.Sprintf("line %d: %s's renew went unanswered with no fault, on a network fast enough for its renewals", op.Line, op.Process), op.Line
		}
	}
	return "", 0
}

// crashedAfter reports whether node crashed or was shut down at or after t
// (within a timeout of it, when its renew sent at t went unanswered: a
// shutdown abandons the renew in flight).
func crashedAfter(r *runrecord.Run, node string, t int64) bool {
	for _, f := range r.Plan {
		if (f.Kind == faults.Crash || f.Kind == faults.OwnerReuse || f.Kind == faults.Shutdown) && f.Target == node && f.At >= t {
			return true
		}
	}
	return false
}

// traceAt returns the 1-based line of the first trace event at time t whose
// What is what (and whose Node starts with node, when given), or 0.
func traceAt(r *runrecord.Run, t int64, what, node string) int {
	for i, e := range r.Trace {
		if e.T == t && e.What == what && strings.HasPrefix(e.Node, node) {
			return i + 1
		}
		if e.T > t {
			break
		}
	}
	return 0
}

// grantLine finds the history line of the acquire a trace "granted" detail
// ("h2 fence=3") names.
func grantLine(r *runrecord.Run, detail string) []int {
	owner, fence, _ := strings.Cut(detail, " fence=")
	for i := range r.History.Ops {
		op := &r.History.Ops[i]
		if op.Kind == model.Acquire && op.Owner == owner && op.HasAt && fmt.Sprint(op.Fence) == fence {
			return []int{op.Line}
		}
	}
	for i := range r.History.Ops { // the reply never reached the holder: the fence is not in the history
		op := &r.History.Ops[i]
		if op.Kind == model.Acquire && op.Owner == owner && op.HasAt && !op.Returned {
			return []int{op.Line}
		}
	}
	return nil
}

// lines returns the non-zero line numbers, ascending and once each.
func lines(ls ...int) []int {
	var out []int
	for _, l := range ls {
		if l > 0 && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
