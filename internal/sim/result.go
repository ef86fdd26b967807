package sim

import (
	"fmt"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
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
	// Hash digests every event the loop ran, the history and the trace: two
	// runs of one scenario have the same Hash.
	Hash uint64
}

// Belief is one span during which a holder believed it held the lease under
// one fence: from the step at which it started believing to the step at
// which it gave up, crashed or the run ended.
type Belief struct {
	Process string
	Owner   string
	Fence   int64
	From    int64 // true time
	To      int64
	// FromLine and ToLine are the 1-based trace lines where it starts and
	// ends (0: no trace, or the run ended first).
	FromLine, ToLine int
	// Open reports that it had not ended when the run stopped.
	Open bool
	// Told is the clock-drift bound the holder was configured with.
	Told int64
}

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

// Bounds returns the liveness bounds of the scenario the result ran
// (docs/specification.md §1, failure modes 1 and 5): after the holder
// crashes another acquires within TTL + the clock bound + its retry
// interval (plus the network's round trip); after a release the next
// acquire succeeds within a retry interval and a round trip, well before
// the TTL runs out.
func (r *Result) Bounds() (recovery, handoff int64) {
	sc := r.Scenario
	retry := int64(0)
	for _, p := range sc.Holders {
		c := holder.Config{TTL: sc.TTL, RetryMax: p.RetryMax, Timeout: p.Timeout}.WithDefaults()
		retry = max(retry, c.RetryMax)
	}
	retry += (retry*sc.RhoPPM+999_999)/1_000_000 + 1
	rtt := 2 * sc.Network.MaxDelay
	u := r.History.Header.ClockUncertainty
	return sc.TTL + 2*u + retry + rtt + 1, retry + rtt + 1
}
