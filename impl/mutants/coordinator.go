package mutants

import (
	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// coordBug selects the one planted bug of a coordinator mutant.
type coordBug uint8

const (
	coordOK               coordBug = iota // the reference, unchanged
	coordGreedy                           // greedy-grant
	coordFenceNotBumped                   // fence-not-bumped
	coordRenewAfterExpiry                 // renew-after-expiry
	coordOffByOne                         // expiry-off-by-one
	coordNoExpiry                         // no-expiry
	coordForgetOnRestart                  // forget-on-restart
	coordReleaseAnyone                    // release-twice-frees-next
	coordWriteNoExpiry                    // write-skips-expiry
	coordWallClock                        // wall-clock-coordinator
)

// entry is one key's state, as in memstore (and lease.py's LeaseStore).
type entry struct {
	holder  string
	held    bool
	expiry  int64
	fence   int64
	data    string
	written bool
}

// coordinator is a copy of the reference coordinator (memstore.Store behind
// sim.RefCoordinator) with one planted bug switched in at the lines marked
// BUG. With coordOK it behaves exactly as the reference.
type coordinator struct {
	bug  coordBug
	keys map[string]*entry
	wall int64
}

func newCoordinator(bug coordBug) *coordinator {
	return &coordinator{bug: bug, keys: map[string]*entry{}}
}

// SetWall receives the coordinator's wall clock before every request.
func (c *coordinator) SetWall(w int64) { c.wall = w }

// Crash keeps the durable lease table, as the reference does.
func (c *coordinator) Crash() {
	if c.bug == coordForgetOnRestart {
		// BUG: the lease table lives in memory only. After a restart the
		// coordinator knows of no holder and grants at once, while the old
		// holder still (rightly) believes its lease runs for up to a TTL.
		// (The fence counter is kept, so fencing alone does not reveal it.)
		for _, e := range c.keys {
			e.holder, e.held, e.expiry = "", false, 0
		}
	}
}

func (c *coordinator) get(key string) *entry {
	e := c.keys[key]
	if e == nil {
		e = &entry{}
		c.keys[key] = e
	}
	return e
}

// live reports whether a lease with this expiry is still live at now.
func (c *coordinator) live(now, expiry int64) bool {
	if c.bug == coordOffByOne {
		// BUG: "now <= expiry" where the article's store says "now <
		// expiry": the lease lives one tick too long. At exactly the expiry
		// a write or renew is accepted and an acquire refused.
		return now <= expiry
	}
	return now < expiry
}

// Apply implements sim.Coordinator.
func (c *coordinator) Apply(r *holder.Request, now int64) holder.Reply {
	if c.bug == coordWallClock {
		// BUG: leases measured on the wall clock, which a clock step moves
		// forward or back; the article: never trust one party's local clock.
		now = c.wall
	}
	rep := holder.Reply{ID: r.ID}
	e := c.get(r.Key)
	switch r.Kind {
	case model.Acquire:
		free := !e.held || !c.live(now, e.expiry)
		switch c.bug {
		case coordGreedy:
			// BUG: every acquire is granted, live lease or not: two holders.
			free = true
		case coordNoExpiry:
			// BUG: a lock, not a lease. Only a release frees it, so a holder
			// that crashed without releasing blocks everyone forever.
			free = !e.held
		}
		if !free {
			rep.Err = "held"
			break
		}
		takeover := e.held
		e.holder, e.held = r.Owner, true
		e.expiry = now + r.TTL
		if !(c.bug == coordFenceNotBumped && takeover) {
			e.fence++
		}
		// BUG (fence-not-bumped): taking over an expired lease keeps the
		// old fence, so the new holder and the stale one share a token and
		// the storage cannot tell them apart.
		rep.Fence, rep.OK = e.fence, true
	case model.Renew:
		ok := e.held && e.holder == r.Owner && c.live(now, e.expiry)
		if c.bug == coordRenewAfterExpiry {
			// BUG: renew checks the owner only, not the deadline: a holder
			// that paused past its expiry revives a lease the article says
			// is already gone (nobody else took it yet, so no alarm rings).
			ok = e.held && e.holder == r.Owner
		}
		if ok && r.Fence != 0 && r.Fence != e.fence {
			ok = false
		}
		if rep.OK = ok; ok {
			e.expiry = now + r.TTL
		} else {
			rep.Err = c.why(e, r, now)
		}
	case model.Release:
		ok := e.held && e.holder == r.Owner && (r.Fence == 0 || r.Fence == e.fence)
		switch c.bug {
		case coordReleaseAnyone:
			// BUG: release does not check who is releasing. A holder that
			// releases twice frees, the second time, a lease that is no
			// longer its own: the next holder's.
			ok = e.held
		}
		if rep.OK = ok; ok {
			e.holder, e.held = "", false
		} else {
			rep.Err = c.why(e, r, -1)
		}
	case model.Write:
		switch {
		case !e.held || e.holder != r.Owner:
			rep.Err = memstore.ReasonNotHolder
		case !c.live(now, e.expiry) && c.bug != coordWriteNoExpiry:
			// BUG (write-skips-expiry): the expiry check is skipped, so a
			// holder back from a pause writes after its lease expired.
			rep.Err = memstore.ReasonExpired
		case r.Fence != e.fence:
			rep.Err = memstore.ReasonStaleFence
		default:
			e.data, e.written = r.Value, true
			rep.OK = true
		}
	case model.Read:
		rep.Value, rep.HasValue = e.data, e.written
		rep.OK = true
	}
	return rep
}

// why is sim.RefCoordinator's reason for a refused renew or release.
func (c *coordinator) why(e *entry, r *holder.Request, now int64) string {
	switch {
	case !e.held || e.holder != r.Owner:
		return memstore.ReasonNotHolder
	case now >= 0 && !c.live(now, e.expiry):
		return memstore.ReasonExpired
	}
	return memstore.ReasonStaleFence
}

// resource is a copy of the reference fenced storage (memstore.Resource
// behind sim.RefResource) with one planted bug.
type resource struct {
	noFence bool
	highest map[string]int64
	data    map[string]string
}

func newResource(noFence bool) *resource {
	return &resource{noFence: noFence, highest: map[string]int64{}, data: map[string]string{}}
}

// Apply implements sim.Resource.
func (s *resource) Apply(q *holder.Request) holder.Reply {
	rep := holder.Reply{ID: q.ID}
	switch q.Kind {
	case model.Write:
		ok := q.Fence >= 1 && q.Fence >= s.highest[q.Key]
		if s.noFence {
			// BUG: the write is not checked against the highest fence seen:
			// a writer back from a pause overwrites its successor's data
			// with a stale token, the article's silent last-writer-wins.
			ok = q.Fence >= 1
		}
		if rep.OK = ok; ok {
			s.highest[q.Key] = max(s.highest[q.Key], q.Fence)
			s.data[q.Key] = q.Value
		} else {
			rep.Err = memstore.ReasonStaleFence
		}
	case model.Read:
		rep.Value, rep.HasValue = s.data[q.Key]
		rep.OK = true
	default:
		rep.Err = "unsupported"
	}
	return rep
}
