package mutants

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// The run properties: judged on the simulator's result, not on the history
// alone. Each applies only to scenarios where the reference must keep it.
const (
	// LivenessRecovery: after the lease's holder crashes, another acquires
	// within TTL + clock bound + retry interval (sim.Result.Liveness). Judged
	// on a quiet network with no faults but crashes and clock faults.
	LivenessRecovery = "liveness-recovery"
	// LivenessHandoff: after a release, the next waiter acquires within a
	// retry interval and a round trip. Same scenarios.
	LivenessHandoff = "liveness-handoff"
	// LivenessRenewal: with no fault and a round trip below the renew
	// timeout, renewals keep the lease: no holder loses it before it
	// releases (every process acquires once, every renew succeeds).
	LivenessRenewal = "liveness-renewal"
	// ExclusiveBelief: no two holders believe they hold the lease at once
	// (sim.Stats.DoubleBelief). Holder-side bugs that only stretch a belief
	// are invisible in the history when the storage re-checks (the coordinator
	// refuses, or fenced storage accepts a fence it has no reason to refuse);
	// the simulator sees the belief itself. Judged when no pause or freeze is
	// injected (a paused holder cannot update its belief, so the reference
	// too overlaps for the pause's length).
	ExclusiveBelief = "exclusive-belief"
)

// RunProperties lists the run properties.
var RunProperties = []string{LivenessRecovery, LivenessHandoff, LivenessRenewal, ExclusiveBelief}

// Outcome is one scenario judged: every property that failed, with the
// checker's result and the run.
type Outcome struct {
	Run   *sim.Result
	Check *checker.Result
	// Failed lists the properties that failed, checker ones first, each once.
	Failed []string
	// Details explains each run-property failure.
	Details []string
}

// Fails reports whether property p failed.
func (o *Outcome) Fails(p string) bool { return slices.Contains(o.Failed, p) }

// CheckBudget bounds the linearizability search of one history.
const CheckBudget = 10 * time.Second

// Judge runs sc with opts (nil: the reference) and judges every property,
// the linearizability search within CheckBudget.
func Judge(sc *scenario.Scenario, opts *sim.Options) (*Outcome, error) {
	return JudgeWithin(sc, opts, CheckBudget)
}

// JudgeWithin is Judge with the search budget given (as checker.Options'
// Timeout: negative means no limit).
func JudgeWithin(sc *scenario.Scenario, opts *sim.Options, budget time.Duration) (*Outcome, error) {
	r, err := sim.Run(sc, opts)
	if err != nil {
		return nil, err
	}
	res, err := checker.Check(context.Background(), r.History, checker.Options{Workers: 1, Timeout: budget})
	if err != nil {
		return nil, fmt.Errorf("the simulator recorded a history the checker refuses: %w", err)
	}
	o := &Outcome{Run: r, Check: res}
	for _, v := range res.Violations {
		if !o.Fails(v.Property) {
			o.Failed = append(o.Failed, v.Property)
		}
	}
	add := func(p, why string) {
		if !o.Fails(p) {
			o.Failed = append(o.Failed, p)
		}
		o.Details = append(o.Details, p+": "+why)
	}
	if livenessApplies(sc) {
		for _, bad := range r.Liveness() {
			if strings.HasPrefix(bad, "handoff") {
				add(LivenessHandoff, bad)
			} else {
				add(LivenessRecovery, bad)
			}
		}
		if why := unrecovered(r); why != "" && !o.Fails(LivenessRecovery) {
			add(LivenessRecovery, why)
		}
	}
	if renewalApplies(sc) {
		if why := lostLease(r.History); why != "" {
			add(LivenessRenewal, why)
		}
	}
	if beliefApplies(sc) && r.Stats.DoubleBelief > 0 {
		add(ExclusiveBelief, fmt.Sprintf("two holders believed they held the lease at once for %dms in total", r.Stats.DoubleBelief))
	}
	return o, nil
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
	if last < 0 || r.Scenario.Horizon-last <= bound {
		return ""
	}
	return fmt.Sprintf("the holder crashed at t=%d and nobody acquired the lease by the horizon t=%d (bound %dms)", last, r.Scenario.Horizon, bound)
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
// releasing: a second grant to one process, or a renew refused or unanswered.
func lostLease(h *model.History) string {
	grants := map[string]int{}
	for _, op := range h.Ops {
		switch {
		case op.Kind == model.Acquire && op.Returned && op.OK:
			grants[op.Process]++
			if grants[op.Process] == 2 {
				return fmt.Sprintf("line %d: %s acquired a second time: it lost its lease with no fault", op.Line, op.Process)
			}
		case op.Kind == model.Renew && (!op.Returned || !op.OK):
			return fmt.Sprintf("line %d: %s's renew failed with no fault", op.Line, op.Process)
		}
	}
	return ""
}

func beliefApplies(sc *scenario.Scenario) bool {
	for _, f := range sc.Faults {
		if f.Kind == faults.Pause || f.Kind == faults.Freeze {
			return false
		}
	}
	return true
}

// Detection is the result of a detection search.
type Detection struct {
	Mutant   string
	BaseSeed uint64
	// Seed is the first failing seed (0: none within the budget); Seeds is
	// how many seeds were tried, the failing one included.
	Seed  uint64
	Seeds int
	// Failed lists the properties the failing seed broke.
	Failed []string
	// RefFailed lists seeds on which the reference failed (false alarms).
	RefFailed []uint64
	Elapsed   time.Duration
	Outcome   *Outcome
}

// Caught reports whether the expected property failed within the budget.
func (d *Detection) Caught() bool { return d.Seed != 0 }

// DefaultBudget is the detection search's seed budget.
const DefaultBudget = 500

// Detect iterates seeds from base: for each it generates the mutant's
// scenario, runs the mutant and judges it; the first seed on which the
// mutant's expected property fails is the detection. With withRef, the
// reference is run and judged on every seed tried too (its time is not
// counted in Elapsed).
func Detect(m *Mutant, base uint64, budget int, withRef bool) (*Detection, error) {
	d := &Detection{Mutant: m.Name, BaseSeed: base}
	opts := m.Options()
	var refTime time.Duration
	start := time.Now()
	for i := 0; i < budget; i++ {
		seed := base + uint64(i)
		sc := m.Scenario(seed)
		d.Seeds++
		o, err := Judge(sc, opts)
		if err != nil {
			return nil, err
		}
		if withRef {
			t0 := time.Now()
			ro, err := Judge(sc, nil)
			if err != nil {
				return nil, err
			}
			if len(ro.Failed) > 0 {
				d.RefFailed = append(d.RefFailed, seed)
			}
			refTime += time.Since(t0)
		}
		if o.Fails(m.Property) {
			d.Seed, d.Failed, d.Outcome = seed, o.Failed, o
			break
		}
	}
	d.Elapsed = time.Since(start) - refTime
	return d, nil
}
