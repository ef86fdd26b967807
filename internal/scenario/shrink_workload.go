package scenario

import "slices"

// workloadCandidates lists the simplifications of s's workload dimensions
// that Shrink's one-step candidates take only in one jump or not at all,
// biggest first: a holder folded into another, a holder's writes all gone,
// the reader reading half as often (or once), a client's requests moved
// earlier (toward the one before, or the whole program to t=0), a drawn
// renew interval, request timeout or acquire backoff moved halfway to the
// default, a longer acquire backoff, the message delays halved (the range,
// or its floor with the spread kept), loss and duplication halved, and a
// holder's work halved item by item at once.
//
// A failure that needs a renew interval shorter than the default, a delay
// past some timeout or a client's request after some grant survives none
// of the jumps (zeroing the interval or the delay, deleting the request),
// so plain deletion leaves the rest of the workload in place — every
// renewal and acquire retry the short interval and the long delays cause,
// every read until the late request's horizon. These take the dimension
// partway, and keep going while the failure does.
//
// They are Shrink's last phase: tried only where every other candidate
// fails, so the shrink walks the path it walked without them, unchanged,
// to the same local minimum, and only leaves it for a smaller (or as
// small) scenario — never ending bigger than without them. Tried earlier,
// they steer the greedy search into another local minimum, sometimes a
// bigger one. Each moves its dimension one way only (toward a default, a
// bound or zero), so no two of them undo each other. Their number is
// linear in the holders, work items, requests and faults; none draws
// randomly or ranges over a map.
func workloadCandidates(s *Scenario) []*Scenario {
	var out []*Scenario
	edit := func(f func(c *Scenario) bool) {
		c := s.Clone()
		if f(c) {
			c.Faults = c.Faults.Sorted()
			out = append(out, c)
		}
	}
	// A holder folded into the next one: its work appended to the other's,
	// its faults retargeted, the earlier start kept. One process fewer and
	// one acquire fewer where the two only took turns.
	for i := range s.Holders {
		if i+1 >= len(s.Holders) {
			break
		}
		edit(func(c *Scenario) bool { return foldHolder(c, i, i+1) })
	}
	// Writes: a holder's all at once (its program kept, the writes gone).
	for i := range s.Holders {
		edit(func(c *Scenario) bool {
			ok := false
			for j := range c.Holders[i].Work {
				if w := &c.Holders[i].Work[j]; w.Writes > 0 {
					w.Writes, ok = 0, true
				}
			}
			return ok
		})
	}
	// The reader: half as often, then a single read at the start.
	edit(func(c *Scenario) bool {
		if c.ReadEvery <= 0 || c.ReadEvery >= c.Horizon {
			return false
		}
		c.ReadEvery = min(2*c.ReadEvery, c.Horizon)
		return true
	})
	// Adversarial clients' requests earlier, so that the horizon can follow
	// (a request "after" a grant waits for the next one anyway).
	if s.Schedule == nil { // a schedule is one path of this very world: leave its clients
		for i := range s.Clients {
			edit(func(c *Scenario) bool { return shiftClient(&c.Clients[i]) })
		}
		for i := range s.Clients {
			for j := range s.Clients[i].Requests {
				rs := s.Clients[i].Requests
				prev := int64(0)
				if j > 0 {
					prev = rs[j-1].At
				}
				at := rs[j].At
				for _, to := range []int64{prev, prev + (at-prev)/2, at - (at-prev)/8} {
					if to >= at || to < prev {
						continue
					}
					edit(func(c *Scenario) bool { c.Clients[i].Requests[j].At = to; return true })
				}
				edit(func(c *Scenario) bool { return halve(&c.Clients[i].Requests[j].Delay) })
			}
		}
	}
	// Drawn protocol timings halfway to their defaults (holder.Config's:
	// renew every TTL/3, a request timeout of TTL/3, acquire backoff up to
	// TTL/4), then the backoff up to the TTL: fewer renewals, retries and
	// timeouts, where the jump to the default (zeroing) loses the failure.
	ttl := max(s.TTL, 1)
	for i := range s.Holders {
		edit(func(c *Scenario) bool { return towards(&c.Holders[i].RenewEvery, max(ttl/3, 1)) })
		edit(func(c *Scenario) bool { return towards(&c.Holders[i].Timeout, max(ttl/3, 1)) })
		edit(func(c *Scenario) bool { return towards(&c.Holders[i].RetryMax, max(ttl/4, 1)) })
		edit(func(c *Scenario) bool {
			p := &c.Holders[i]
			retry := p.RetryMax
			if retry == 0 {
				retry = max(ttl/4, 1)
			}
			if retry >= ttl {
				return false
			}
			p.RetryMax = ttl
			return true
		})
	}
	// Message delays: the whole range halved, then its floor halved with
	// the spread kept (a bug that needs a reordering keeps it).
	edit(func(c *Scenario) bool {
		n := &c.Network
		if n.MaxDelay < 2 {
			return false
		}
		n.MinDelay, n.MaxDelay = n.MinDelay/2, n.MaxDelay/2
		return true
	})
	edit(func(c *Scenario) bool {
		n := &c.Network
		d := n.MinDelay / 2
		n.MinDelay -= d
		n.MaxDelay -= d
		return d > 0
	})
	edit(func(c *Scenario) bool { return halve(&c.Network.DropPPM) })
	edit(func(c *Scenario) bool { return halve(&c.Network.DupPPM) })
	// A holder's work halved item by item at once, its faults moved along
	// by the time saved before them (its relative timing kept).
	for i := range s.Holders {
		edit(func(c *Scenario) bool { return halveWork(c, i) })
	}
	return out
}

// towards moves a set value halfway to def (0 stands for def); once the
// step is under 1 it sets 0. It reports whether v changed.
func towards(v *int64, def int64) bool {
	if *v == 0 {
		return false
	}
	d := (def - *v) / 2
	if d == 0 {
		*v = 0
		return true
	}
	*v += d
	return true
}

// foldHolder moves holder i's work to the end of holder j's program and
// its faults to j, j starting at the earlier of the two starts, and
// removes i.
func foldHolder(c *Scenario, i, j int) bool {
	from, to := c.Holders[i], &c.Holders[j]
	to.Work = append(to.Work, from.Work...)
	to.Start = min(to.Start, from.Start)
	for k := range c.Faults {
		if c.Faults[k].Target == from.Name {
			c.Faults[k].Target = to.Name
		}
	}
	c.Holders = slices.Delete(c.Holders, i, i+1)
	return true
}

// shiftClient moves a client's whole program earlier by its first
// request's time (the spacing kept). It reports whether it moved.
func shiftClient(cl *Client) bool {
	if len(cl.Requests) == 0 || cl.Requests[0].At == 0 {
		return false
	}
	d := cl.Requests[0].At
	for k := range cl.Requests {
		cl.Requests[k].At -= d
	}
	return true
}

// halveWork halves every work item of holder i, and moves the faults
// aimed at it that strike after one of its items by the work saved up to
// there (by static estimate, as realignCandidates do). It reports whether
// some item had work to halve.
func halveWork(c *Scenario, i int) bool {
	p := &c.Holders[i]
	ok := false
	type cut struct{ from, d int64 }
	var cuts []cut
	t := p.Start // where item j starts, before any cut
	for j := range p.Work {
		w := &p.Work[j]
		n := w.Work
		if n >= 2 {
			cuts = append(cuts, cut{t + n/2, n - n/2})
			w.Work = n / 2
			ok = true
		}
		t += n
	}
	// Later cuts first: each is at its place on the uncut timeline, which
	// the earlier cuts, not yet made, have not moved.
	for k := len(cuts) - 1; k >= 0; k-- {
		cutFaults(c, p.Name, cuts[k].from, cuts[k].d)
	}
	return ok
}
