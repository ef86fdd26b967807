package runrecord

import (
	"fmt"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/model"
)

// Run is one run as the run properties judge it. Its slices and pointers
// are the driver's own, shared, never copied: a Run is made per judged
// state of an exploration.
type Run struct {
	History *model.History
	// Trace lists faults, crashes, grants, releases and every change of a
	// holder's belief that it holds the lease, in time order.
	Trace []TraceEvent
	Stats *Stats
	// Plan is the faults the run injected or meant to.
	Plan    faults.Plan
	Beliefs []Belief
	Stops   []Stop
	// AdvisoryBelief says the beliefs are a hint of the client's library,
	// not a promise bounded by the lease (sim.Result.AdvisoryBelief).
	AdvisoryBelief bool
	// HarnessFences says each belief's fence is the harness's reading of
	// the server's record, not a number the holder reported.
	HarnessFences bool
	Setting       *Setting
}

// Setting is what the run properties read of the scenario a run ran: the
// lease's and the network's numbers, and each holder's settings as the
// scenario configures them, defaults filled in (the bounds are those a
// correct holder so configured keeps).
type Setting struct {
	TTL     int64
	RhoPPM  int64 // the clock-drift bound, in ppm
	Horizon int64 // the run stops here at the latest
	// CoordinatorDriftPPM is the drift actually applied to the
	// coordinator's clock.
	CoordinatorDriftPPM int64
	MaxDelay            int64 // the network's one-way delay bound
	DropPPM             int64 // the network's loss rate
	// Clients counts the scenario's adversarial clients; Adversary is the
	// process name an explored path's adversarial requests carry.
	Clients   int
	Adversary string
	Holders   []Holder
}

// Bounds returns the liveness bounds of a run of setting s, given the
// history's clock uncertainty u (docs/specification.md §1, failure modes 1
// and 5): after the holder crashes another acquires within TTL + 2u + its
// retry interval (+ a round trip); after a release the next acquire
// succeeds within a retry interval and a round trip.
func (s *Setting) Bounds(u int64) (recovery, handoff int64) {
	retry := int64(0)
	for i := range s.Holders {
		retry = max(retry, s.Holders[i].RetryMax)
	}
	retry += (retry*s.RhoPPM+999_999)/1_000_000 + 1
	rtt := 2 * s.MaxDelay
	return s.TTL + 2*u + retry + rtt + 1, retry + rtt + 1
}

// Holder is one holder's settings, defaults filled in.
type Holder struct {
	Name     string
	DriftPPM int64 // the drift actually applied to its clock
	// ToldRhoPPM is the drift bound it was told (may be below the truth).
	ToldRhoPPM int64
	Timeout    int64
	RenewEvery int64
	Margin     int64 // negative: no margin at all
	RetryMax   int64
}

// Belief is one span during which a holder believed it held the lease under
// one fence: from the step at which it started believing to the step at
// which it gave up, crashed or the run ended.
type Belief struct {
	Process string
	// Key is the lease's key where the run has several (a candidate that
	// holds several Leases believes in each apart: OnKey); "" where it has
	// one.
	Key   string
	Owner string
	Fence int64
	From  int64 // true time
	To    int64
	// FromLine and ToLine are the 1-based trace lines where it starts and
	// ends (0: no trace, or the run ended first).
	FromLine, ToLine int
	// Open reports that it had not ended when the run stopped.
	Open bool
	// Told is the clock-drift bound the holder was configured with.
	Told int64
}

// OnKey is the process name of process's part in the lease of key, in a run
// of several leases ("h1@default/shard-a"): each (holder, lease) pair is a
// sequential process of its own on its own key.
func OnKey(process, key string) string { return process + "@" + key }

// Stop is one span during which a node could not act (a pause) or its
// monotonic clock stood still (a freeze).
type Stop struct {
	Node    string
	Process string // the incarnation it stopped
	Kind    faults.Kind
	From    int64
	To      int64
	// FromLine and ToLine are the 1-based trace lines of its start and end.
	FromLine, ToLine int
	Open             bool
}

// TraceEvent is one line of the trace.
type TraceEvent struct {
	T      int64  `json:"t"`
	Node   string `json:"node"`
	What   string `json:"what"`
	Detail string `json:"detail,omitempty"`
}

func (e TraceEvent) String() string {
	s := fmt.Sprintf("%8d %-10s %s", e.T, e.Node, e.What)
	if e.Detail != "" {
		s += " " + e.Detail
	}
	return s
}

// Stats are a run's measurements.
type Stats struct {
	Events     int64
	End        int64 // simulated ms when the run stopped
	Truncated  bool  // stopped by the event bound, not by the program or horizon
	Ops        int
	Dropped    int
	Duplicated int
	// Faults counts the faults injected, by kind.
	Faults map[faults.Kind]int
	// NotApplied counts faults the plan asked for that the target's machine
	// cannot take (it lacks the optional interface: machine.RenewKiller, ...).
	NotApplied map[faults.Kind]int
	// Recoveries: ms from the crash of the lease's holder (while another
	// holder waited) to the next grant; RecoveryAt: when each crash was.
	Recoveries []int64
	RecoveryAt []int64
	// Unrecovered counts such crashes with no grant before the run ended;
	// UnrecoveredSince is when the earliest of them happened.
	Unrecovered      int
	UnrecoveredSince int64
	// Handoffs: ms from a release (while another holder waited) to the next
	// grant; HandoffAt: when each release was.
	Handoffs  []int64
	HandoffAt []int64
	// DoubleBelief is the total time two or more holders believed they held
	// the lease at once.
	DoubleBelief int64
}
