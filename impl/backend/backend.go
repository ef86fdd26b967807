package backend

import (
	"context"
	"time"

	"github.com/leasecheck/leasecheck/model"
)

// Request is one lease operation (DESIGN.md §1). Key is the lease name;
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

// Refusal reasons, as the history's "error" field spells them.
const (
	ReasonHeld       = "held"        // acquire: someone holds a live lease
	ReasonExpired    = "expired"     // renew, write: the lease ran out
	ReasonNotHolder  = "not-holder"  // renew, release, write: owner is not the holder
	ReasonStaleFence = "stale-fence" // write: fence is not the current grant
)

// Response is a definite answer from the coordinator.
type Response struct {
	OK     bool
	Reason string // why not OK: one of the Reason constants or a backend's own word
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

// Info describes a backend to the runner and to the report.
type Info struct {
	Name        string // e.g. "redis", "etcd"
	FenceSource string // e.g. "INCR on <prefix>fence:<key>"
	FencedWrite string // e.g. "Lua: check holder, deadline, fence, then SET"
	// Fences says how fences are numbered: model.Sequential (1, 2, 3: a
	// counter) or model.Increasing (only grows, with gaps: revisions, sequences).
	Fences model.FenceOrder
	// ServerTime: responses carry At, so the history is in exact mode once
	// the server's clock is mapped onto the client's (see Clock).
	ServerTime bool
	// Uncertainty is how far the coordinator's lease clock may be from the
	// client's timeline beyond what the runner measures itself: e.g. how late
	// etcd may expire a lease. The runner adds its own calibration error.
	Uncertainty time.Duration
	// TTLGranularity: TTLs are rounded up to a multiple of it (etcd: 1s).
	TTLGranularity time.Duration
	// LeasesRestart: after a crash and restart the server restores every
	// lease with a fresh TTL counted from its recovery, plus RestartGrace
	// (ZooKeeper sessions; etcd leases, which the new leader also extends
	// by an election timeout). A lease whose holder could not renew during
	// the outage then outlives its deadline by up to the outage, a TTL and
	// RestartGrace: by design, since nobody could renew while the server
	// was down. The lease clock lagged true time that much, so a run that
	// restarts such a server declares that much more clock uncertainty
	// (DESIGN.md §5: a run is never flagged for the clock it was given).
	// False: deadlines survive a restart (Redis and PostgreSQL keep an
	// absolute expiry on the server's clock).
	LeasesRestart bool
	RestartGrace  time.Duration
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
