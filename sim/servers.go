package sim

import (
	"errors"

	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// Coordinator is the lease service as the simulator drives it. Planted-bug
// mutants implement it too (Options.NewCoordinator).
type Coordinator interface {
	// Apply applies req with the coordinator's lease clock reading now and
	// answers it (Reply.At is filled in by the simulator).
	Apply(req *holder.Request, now int64) holder.Reply
	// Crash drops whatever state is not durable; the node restarts later.
	Crash()
}

// Resource is the fenced storage node (fenced-storage semantics).
type Resource interface {
	Apply(req *holder.Request) holder.Reply
}

// Machine is a holder as the simulator drives it; *holder.Holder is the
// reference and mutants plug in through Options.NewHolder.
type Machine interface {
	Tick(now int64)
	Receive(now int64, r holder.Reply) bool
	Ready() holder.Ready
	KillRenewLoop()
	Overrun(now, d int64)
	DoubleRelease(late int64)
}

// WallClockUser is an optional interface of a Machine or Coordinator that
// reads the wall clock (which faults step forward and back). Correct code
// measures leases on the monotonic clock only (DESIGN.md §5, Clocks); the
// hook exists so planted-bug mutants that trust the wall clock can be run.
// SetWall is called with the node's wall-clock reading before every step.
type WallClockUser interface {
	SetWall(wall int64)
}

// RefCoordinator is the reference coordinator: memstore.Store, whose whole
// state is durable (a crash loses nothing but the requests in flight).
type RefCoordinator struct{ S *memstore.Store }

// NewRefCoordinator returns a fresh reference coordinator.
func NewRefCoordinator() Coordinator { return &RefCoordinator{S: memstore.New()} }

// Crash keeps the durable lease table.
func (c *RefCoordinator) Crash() {}

// Apply implements Coordinator.
func (c *RefCoordinator) Apply(r *holder.Request, now int64) holder.Reply {
	s := c.S
	rep := holder.Reply{ID: r.ID}
	switch r.Kind {
	case model.Acquire:
		rep.Fence, rep.OK = s.Acquire(r.Key, r.Owner, r.TTL, now)
		if !rep.OK {
			rep.Err = "held"
		}
	case model.Renew:
		if rep.OK = s.Renew(r.Key, r.Owner, r.TTL, r.Fence, now); !rep.OK {
			rep.Err = c.why(r, now)
		}
	case model.Release:
		if rep.OK = s.Release(r.Key, r.Owner, r.Fence); !rep.OK {
			rep.Err = c.why(r, -1)
		}
	case model.Write:
		err := s.Write(r.Key, r.Owner, r.Fence, r.Value, now)
		rep.OK = err == nil
		var lost *memstore.LeaseLostError
		if errors.As(err, &lost) {
			rep.Err = lost.Reason
		}
	case model.Read:
		rep.Value, rep.HasValue = s.Read(r.Key)
		rep.OK = true
	}
	return rep
}

func (c *RefCoordinator) why(r *holder.Request, now int64) string {
	owner, expiry, held := c.S.Holder(r.Key)
	switch {
	case !held || owner != r.Owner:
		return memstore.ReasonNotHolder
	case now >= 0 && now >= expiry:
		return memstore.ReasonExpired
	}
	return memstore.ReasonStaleFence
}

// RefResource is the reference fenced storage, memstore.Resource.
type RefResource struct{ R *memstore.Resource }

// NewRefResource returns a fresh reference resource.
func NewRefResource() Resource { return &RefResource{R: memstore.NewResource()} }

// Apply implements Resource.
func (r *RefResource) Apply(q *holder.Request) holder.Reply {
	rep := holder.Reply{ID: q.ID}
	switch q.Kind {
	case model.Write:
		rep.OK = r.R.Write(q.Key, q.Fence, q.Value) == nil
		if !rep.OK {
			rep.Err = memstore.ReasonStaleFence
		}
	case model.Read:
		rep.Value, rep.HasValue = r.R.Read(q.Key)
		rep.OK = true
	default:
		rep.Err = "unsupported"
	}
	return rep
}
