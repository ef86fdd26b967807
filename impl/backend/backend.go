package backend

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/model"
)

// Request is one lease operation (docs/specification.md §1). Key is the lease name;
// backends store it under their own prefix.
type Request struct {
	Kind  model.Kind
	Key   string
	Owner string
	// TTL for acquire and renew. Backends round it to their own granularity
	// (etcd: whole seconds) and report what they granted in Response.TTL.
	TTL time.Duration
	// Fence is presented by renew, release and write; 0 for acquire and read.
	Fence int64
	Value string // write
}

// Response is a definite answer from the coordinator.
type Response struct {
	OK     bool
	Reason string // why not OK: one of machine's Reason constants or a backend's own word
	Fence  int64  // acquire: the fence granted
	// TTL is the TTL the coordinator actually applied (acquire, renew), when
	// it differs from the request's; 0 means as requested.
	TTL time.Duration
	// Value and HasValue: read's result (HasValue false: nothing written).
	Value    string
	HasValue bool
	// At is the coordinator's clock when it applied the op, read in the same
	// atomic step (Redis TIME in the script, PostgreSQL clock_timestamp() in
	// the statement); zero when the backend cannot tell (interval mode).
	At time.Time
}

// Backend is a networked lease service. Do must be safe for concurrent use.
// An error means the outcome is unknown; implementations must honour ctx's
// deadline and never block past it.
type Backend interface {
	Do(ctx context.Context, req Request) (Response, error)
	Close() error
}

// Info describes a backend to the runner, the suite and the report. A
// backend declares what it has (docs/design.md §8); the suite judges what
// applies and reports what is missing once. The two declarations that
// decide which properties are checked, Fences and Writes, have no default:
// their zero values are "undeclared", which Check (and so leasetest.Run,
// verify and leasecheck's real runner) refuses, so that a forgotten field
// never turns checks off in silence.
type Info struct {
	Name string // e.g. "redis", "etcd"
	// Fences says what token a grant carries: NoFences (most lock
	// libraries), SequentialFences (1, 2, 3: a counter) or IncreasingFences
	// (only grows, with gaps: revisions, sequences, zxids). Required.
	Fences Fences
	// Writes says whether the service checks writes. CheckedWrites: it
	// checks every write against the holder, its deadline and (with fences)
	// the fence presented, in the same atomic step as the write, and
	// refuses the rest. UncheckedWrites: the write goes to the resource
	// unchecked — a plain SET after taking the lock — so a holder paused
	// past its TTL can write after the lease moved on; the suite reports
	// exactly that, once (leasetest's Zombie), and skips the properties
	// about refused writes, saying so. Required.
	Writes      Writes
	FenceSource string // display: where fences come from, e.g. "INCR on <prefix>fence:<key>"
	FencedWrite string // display: what the write is, e.g. "Lua: check holder, deadline, fence, then SET" or "none: a plain SET"
	// ServerTime: responses carry At, so the history is in exact mode once
	// the server's clock is mapped onto the client's (see Clock).
	ServerTime bool
	// Uncertainty is how far the coordinator's lease clock may be from the
	// client's timeline beyond what the runner measures itself: e.g. how late
	// etcd may expire a lease. It becomes the history's clock_uncertainty
	// (plus the runner's calibration error in exact mode), and the checker
	// and leasetest's timing checks apply it the same way: on both sides of
	// every op without `at` (docs/specification.md §3).
	Uncertainty time.Duration
	// ExpiryLateness is how long after a lease's expiry the coordinator may
	// still treat it as held — refuse an acquire, accept the holder's write
	// or renew — because it frees expired leases late: etcd's lessor finds
	// them on a sweep every 500 ms and revokes them through raft. It never
	// lets anyone be granted a live lease, so it is not clock uncertainty:
	// it becomes the history's expiry_lateness, the checker allows answers
	// "still held" that late and no later (later ones are the finding
	// expiry-lateness), and leasetest waits that much longer before it
	// expects an expired lease to be granted. 0: freed at expiry.
	ExpiryLateness time.Duration
	// TTLGranularity: TTLs are rounded up to a multiple of it (etcd: 1s).
	TTLGranularity time.Duration
	// MinTTL is the shortest TTL the backend grants as asked (etcd: 2s, its
	// minimum lease TTL with the default election timeout); 0 means none.
	// The real runner never maps a scenario's TTL below it.
	MinTTL time.Duration
	// LeasesRestart: after a crash and restart the server restores every
	// lease with a fresh TTL counted from its recovery, plus RestartGrace
	// (ZooKeeper sessions; etcd leases, which the new leader also extends
	// by an election timeout). A lease whose holder could not renew during
	// the outage then outlives its deadline by up to the outage, a TTL and
	// RestartGrace: by design, since nobody could renew while the server
	// was down. The lease clock lagged true time that much, so a run that
	// restarts such a server declares that much more clock uncertainty
	// (docs/design.md §5: a run is never flagged for the clock it was given).
	// False: deadlines survive a restart (Redis and PostgreSQL keep an
	// absolute expiry on the server's clock).
	LeasesRestart bool
	RestartGrace  time.Duration
	// EndsWithClient: the lock lives in the client's session, not in a
	// lease — the server frees it as soon as it sees the client's
	// connection close (PostgreSQL's session advisory locks: "held until
	// explicitly released or the session ends"). A crash closes a dead
	// client's connections, so the runner records its lock as released
	// from then on, at an instant nobody reports: a release of the dead
	// incarnation's grant, called at the crash and never answered
	// (process "<process>/session"). Another client granted the lock
	// after the crash, before the dead one's TTL, is then explained, as it
	// is in the world; a grant before the crash is still a violation.
	EndsWithClient bool
	// LossLateness is how late after its lock is lost a library that holds
	// while it says so (Holding) may signal the loss: the bound of the
	// property loss-signal, declared like ExpiryLateness. 0 with Holding:
	// the signal must come by the loss itself.
	LossLateness time.Duration
	// RenewInterval is how often a library that holds while it says so
	// (Holding) renews by itself: the bound of the property renew-rate,
	// which counts its background renewals within every TTL and reports
	// more than that interval allows (TTL/RenewInterval, plus one due at a
	// resume and one for the window's edge) with the rate it measured —
	// a renewal loop that never settles. 0: not judged.
	RenewInterval time.Duration
}

// Check returns an error naming every declaration of i that was left
// undeclared, and what to declare; nil when there is none.
func (i Info) Check() error {
	var missing []string
	if i.Fences == FencesUndeclared {
		missing = append(missing, "Fences is not declared: set backend.NoFences if grants carry no fencing token, "+
			"backend.SequentialFences if they are numbered 1, 2, 3, ..., or backend.IncreasingFences if they only grow, with gaps "+
			"(it decides whether the fence properties are checked)")
	}
	if i.Writes == WritesUndeclared {
		missing = append(missing, "Writes is not declared: set backend.CheckedWrites if the service checks every write against the holder, "+
			"its deadline and fence in the same atomic step and refuses the rest, or backend.UncheckedWrites if a write goes to the resource "+
			"unchecked, as a plain SET after taking the lock does (it decides whether WriteAfterExpiry and the refused-write checks run)")
	}
	if len(missing) == 0 {
		return nil
	}
	name := i.Name
	if name == "" {
		name = "(no Name)"
	}
	return fmt.Errorf("backend.Info of %s: %s", name, strings.Join(missing, "; "))
}

// Writes says whether a backend's service checks writes against the lease.
type Writes uint8

const (
	// WritesUndeclared is the zero value: the adapter did not say. Check
	// refuses it.
	WritesUndeclared Writes = iota
	// CheckedWrites: the service checks every write (Info.Writes).
	CheckedWrites
	// UncheckedWrites: writes reach the resource unchecked (Info.Writes).
	UncheckedWrites
)

func (w Writes) String() string {
	switch w {
	case CheckedWrites:
		return "checked"
	case UncheckedWrites:
		return "unchecked"
	}
	return "undeclared"
}

// Fences says what fencing token a backend's grants carry.
type Fences uint8

const (
	// FencesUndeclared is the zero value: the adapter did not say. Check
	// refuses it.
	FencesUndeclared Fences = iota
	// NoFences: grants carry no token (Response.Fence is 0); renew,
	// release and write present none.
	NoFences
	// SequentialFences: grants are numbered 1, 2, 3, ... per key.
	SequentialFences
	// IncreasingFences: every grant's fence is larger than the one before
	// it on the key, with gaps.
	IncreasingFences
)

// Order is the history's fence order (its header's "fences" field).
func (f Fences) Order() model.FenceOrder {
	switch f {
	case SequentialFences:
		return model.Sequential
	case IncreasingFences:
		return model.Increasing
	}
	return model.NoFences
}

func (f Fences) String() string {
	if f == FencesUndeclared {
		return "undeclared"
	}
	return f.Order().String()
}

// Clock is an optional capability: a backend that reports its server's
// time, so the runner can map At onto the client's timeline (offset =
// server time − the midpoint of the request) before and after a run.
type Clock interface {
	ServerNow(ctx context.Context) (time.Time, error)
}

// Cleaner is an optional capability: remove everything the backend stored
// under its prefix. The runner calls it at the end of a run.
type Cleaner interface {
	Cleanup(ctx context.Context) error
}
