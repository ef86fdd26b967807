package machine

import "math"

// Never is Ready.WakeAt's "no timer". It is not -1: a clock with a negative
// offset reads negative times.
const Never int64 = math.MinInt64

// Ready is what a holder asks of its driver after a step.
type Ready struct {
	// Send holds the requests to send, in order; the slice may be reused by
	// the next step, so a driver copies what it keeps.
	Send []Request
	// WakeAt is the local monotonic time the holder next wants a Tick, or
	// Never.
	WakeAt int64
	// Believes reports whether the holder believes it holds the lease: the
	// property exclusive-belief judges these beliefs.
	Believes bool
	Fence    int64 // the fence it holds, when Believes
	Done     bool  // its program is finished (released)
	// Waiting reports that it is trying to acquire (in flight or backing
	// off): the liveness properties time how long it waits.
	Waiting bool
}

// Holder is the client side of the lease protocol. A driver calls Tick when
// the holder's clock reaches the WakeAt it asked for (or later), Receive for
// every reply addressed to it, and Ready after each of them. Holders are
// not safe for concurrent use: a driver steps each from one goroutine.
type Holder interface {
	// Tick tells the holder its monotonic clock reads now.
	Tick(now int64)
	// Receive hands it a reply at local time now; it reports whether the
	// reply answered the request in flight (a duplicate, or the answer to a
	// request it gave up on, is ignored and returns false).
	Receive(now int64, r Reply) bool
	// Ready returns what the driver must do now.
	Ready() Ready
}

// Coordinator is the lease service as an in-process state machine.
type Coordinator interface {
	// Apply applies req with the coordinator's lease clock reading now and
	// answers it (the driver fills in Reply.At and Reply.ID).
	Apply(req *Request, now int64) Reply
	// Crash drops whatever state is not durable; the driver restarts the
	// node later and delivers nothing to it meanwhile.
	Crash()
}

// Resource is the fenced storage of fenced-storage semantics (docs/specification.md §1).
type Resource interface {
	Apply(req *Request) Reply
}

// The optional interfaces: faults that act inside a holder. A driver that
// is asked for one of these faults on a machine without the method reports
// the fault as not applicable rather than counting it.

// RenewKiller is the renew-death fault: renewals stop, quietly.
type RenewKiller interface{ KillRenewLoop() }

// Overrunner is the task-overrun fault: the current (or next) work item takes
// d longer; now is the holder's clock.
type Overrunner interface{ Overrun(now, d int64) }

// DoubleReleaser is the double-release fault: the next release is sent a
// second time, late after the first one ends.
type DoubleReleaser interface{ DoubleRelease(late int64) }

// WallClockUser is a machine that reads the wall clock (which faults step
// forward and back). Correct code measures leases on the monotonic clock only
// (docs/design.md §5, Clocks); the hook exists so that code trusting the wall
// clock — a planted bug, or a third party's — can be run and caught. SetWall
// is called with the node's wall-clock reading before every step.
type WallClockUser interface{ SetWall(wall int64) }
