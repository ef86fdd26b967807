package scenario

import (
	"slices"

	"github.com/leasecheck/leasecheck/faults"
)

// ShrinkTest runs a candidate scenario: fails reports whether it still shows
// the failure being shrunk, size how big its run was (e.g. its operations;
// smaller is better).
type ShrinkTest func(s *Scenario) (fails bool, size int)

// Shrink returns a scenario no bigger than s that still fails test: greedy
// and deterministic (the same s and test give the same result). It tries, in
// passes until none helps or maxTests candidates were run: removing holders
// (with the faults aimed at them), faults, the reader, work items and
// writes; zeroing or halving start times, work, fault times and parameters,
// network delays, loss and duplication; halving the TTL and the horizon. A
// candidate is kept when it is valid, still fails and its size is not
// larger. s itself must fail; it is not modified.
//
// Where none of those one-step candidates helps, it tries realigning ones
// (realignCandidates): a run whose failure hangs on a fault hitting one
// event (a 1 ms heartbeat drop on a renewal) sits in a local minimum of
// plain deletion, since every deletion moves that event away from the fault;
// these delete and move the faults along, or cut quiet time off.
//
// Only where none of those helps either, it tries the workload candidates
// (workloadCandidates): writes, reads, client requests, renew intervals,
// timeouts, backoff and delays taken partway toward their defaults or
// zero. Tried last, they leave the search's path to that point unchanged:
// the result is never bigger than the shrink without them.
func Shrink(s *Scenario, test ShrinkTest, maxTests int) *Scenario {
	return shrink(s, test, maxTests, withWorkload(plain(shrinkCandidates, realignCandidates, nil))...)
}

// withWorkload appends the workload candidates to lists, as their last
// phase.
func withWorkload(lists []candidates) []candidates {
	return append(lists, candidates{list: workloadCandidates})
}

// candidates is one list of shrink candidates; strict ones are kept only
// when they make the scenario smaller, not merely as small (a move that a
// plain candidate can undo at the same size would otherwise go back and
// forth until the budget ran out).
type candidates struct {
	list   func(*Scenario) []*Scenario
	strict bool
}

// plain lists the candidate lists, the last (when not nil) strict.
func plain(lists ...func(*Scenario) []*Scenario) []candidates {
	out := make([]candidates, 0, len(lists)+1)
	for _, l := range lists {
		if l != nil {
			out = append(out, candidates{list: l})
		}
	}
	if lists[len(lists)-1] == nil {
		out = append(out, candidates{list: laterCandidates, strict: true})
	}
	return out
}

// shrink is Shrink with its candidate lists, each tried only where none of
// the ones before it helps.
func shrink(s *Scenario, test ShrinkTest, maxTests int, lists ...candidates) *Scenario {
	cur := s.Clone()
	_, size := test(cur)
	tests := 0
	try := func(c *Scenario, strict bool) bool {
		if tests >= maxTests || c.Validate() != nil {
			return false
		}
		tests++
		fails, n := test(c)
		if !fails || n > size || strict && n == size {
			return false
		}
		cur, size = c, n
		return true
	}
	for progress := true; progress && tests < maxTests; {
		progress = false
		// The realigning candidates are tried only where no plain one
		// helps: the plain path is walked first, unchanged, to its local
		// minimum, and a realigning step only ever leaves one — so the
		// result is never bigger than the plain shrink's alone.
		for _, list := range lists {
			for _, cand := range list.list(cur) {
				if try(cand, list.strict) {
					progress = true
					break // restart from the smaller scenario: its candidates differ
				}
			}
			if progress {
				break
			}
		}
	}
	return cur
}

// Clone returns a deep copy of s.
func (s *Scenario) Clone() *Scenario {
	c := *s
	c.Holders = slices.Clone(s.Holders)
	for i := range c.Holders {
		c.Holders[i].Work = slices.Clone(s.Holders[i].Work)
		if r := s.Holders[i].RhoPPM; r != nil {
			v := *r
			c.Holders[i].RhoPPM = &v
		}
	}
	c.Faults = slices.Clone(s.Faults)
	c.Clients = slices.Clone(s.Clients)
	for i := range c.Clients {
		c.Clients[i].Requests = slices.Clone(s.Clients[i].Requests)
	}
	c.FaultKinds = slices.Clone(s.FaultKinds)
	c.Expect = slices.Clone(s.Expect)
	if s.Space != nil {
		sp := *s.Space
		sp.Faults = slices.Clone(s.Space.Faults)
		c.Space = &sp
	}
	if s.Schedule != nil {
		sc := *s.Schedule
		sc.Choices = slices.Clone(s.Schedule.Choices)
		c.Schedule = &sc
	}
	return &c
}

// shrinkCandidates lists the one-step simplifications of s, biggest first.
func shrinkCandidates(s *Scenario) []*Scenario {
	var out []*Scenario
	edit := func(f func(c *Scenario) bool) {
		c := s.Clone()
		if f(c) {
			out = append(out, c)
		}
	}
	// Whole holders, with the faults aimed at them.
	dropHolders(s, edit)
	// Whole faults.
	for i := range s.Faults {
		edit(func(c *Scenario) bool { c.Faults = slices.Delete(c.Faults, i, i+1); return true })
	}
	// An explored space's choices (explore.go): a fault kind fewer, a fault,
	// an adversarial request or a network deviation fewer on a path. A
	// seeded scenario has no Space, and none of these.
	spaceCandidates(s, edit)
	edit(func(c *Scenario) bool { ok := c.ReadEvery > 0; c.ReadEvery = 0; return ok })
	// Adversarial clients and their requests.
	if s.Schedule == nil { // a schedule is one path of this very world: leave its clients
		for i := range s.Clients {
			edit(func(c *Scenario) bool { c.Clients = slices.Delete(c.Clients, i, i+1); return true })
		}
		for i := range s.Clients {
			for j := range s.Clients[i].Requests {
				edit(func(c *Scenario) bool {
					c.Clients[i].Requests = slices.Delete(c.Clients[i].Requests, j, j+1)
					return true
				})
			}
		}
	}
	// Drawn protocol parameters back to the defaults.
	for i := range s.Holders {
		edit(func(c *Scenario) bool { return zero64(&c.Holders[i].RenewEvery) })
		edit(func(c *Scenario) bool { return zero64(&c.Holders[i].Margin) })
		edit(func(c *Scenario) bool { return zero64(&c.Holders[i].DriftPPM) })
		edit(func(c *Scenario) bool { ok := c.Holders[i].RhoPPM != nil; c.Holders[i].RhoPPM = nil; return ok })
	}
	edit(func(c *Scenario) bool { return zero64(&c.CoordinatorDriftPPM) })
	edit(func(c *Scenario) bool { ok := c.Network.ShuffleTies; c.Network.ShuffleTies = false; return ok })
	// Work items and writes: every item down to one write at once (a
	// program of many multi-write items reaches it one write at a time only
	// after as many tests), then item by item.
	edit(oneWriteEach)
	for i := range s.Holders {
		for j := range s.Holders[i].Work {
			edit(func(c *Scenario) bool { c.Holders[i].Work = slices.Delete(c.Holders[i].Work, j, j+1); return true })
		}
	}
	for i := range s.Holders {
		for j := range s.Holders[i].Work {
			edit(func(c *Scenario) bool { return lower(&c.Holders[i].Work[j].Writes) })
			edit(func(c *Scenario) bool { return zero64(&c.Holders[i].Work[j].Work) })
			edit(func(c *Scenario) bool { return halve(&c.Holders[i].Work[j].Work) })
			edit(func(c *Scenario) bool { return shave(&c.Holders[i].Work[j].Work) })
		}
		edit(func(c *Scenario) bool { return zero64(&c.Holders[i].Start) })
		edit(func(c *Scenario) bool { return halve(&c.Holders[i].Start) })
		edit(func(c *Scenario) bool { return shave(&c.Holders[i].Start) })
	}
	// The network.
	edit(func(c *Scenario) bool { return zero64(&c.Network.DropPPM) })
	edit(func(c *Scenario) bool { return zero64(&c.Network.DupPPM) })
	edit(func(c *Scenario) bool {
		ok := c.Network.MaxDelay > c.Network.MinDelay
		c.Network.MaxDelay = c.Network.MinDelay
		return ok
	})
	edit(func(c *Scenario) bool {
		// Halfway to the shortest delay: a bug that needs a delay past the
		// renew timeout keeps one, without the spread that reorders the rest.
		d := c.Network.MaxDelay - c.Network.MinDelay
		c.Network.MaxDelay -= d / 2
		return d >= 2
	})
	edit(func(c *Scenario) bool { return zero64(&c.Network.MinDelay) })
	// Fault parameters and times.
	for i := range s.Faults {
		edit(func(c *Scenario) bool { return halve(&c.Faults[i].Duration) })
		edit(func(c *Scenario) bool { return halve(&c.Faults[i].Amount) })
		edit(func(c *Scenario) bool { return zero64(&c.Faults[i].At) })
		edit(func(c *Scenario) bool { return c.Faults[i].Kind != faults.ClockOffset && halve(&c.Faults[i].At) })
		edit(func(c *Scenario) bool { return c.Faults[i].Kind != faults.ClockOffset && shave(&c.Faults[i].At) })
		edit(func(c *Scenario) bool { return shave(&c.Faults[i].Duration) })
	}
	// The clock bound, the horizon, the TTL.
	edit(func(c *Scenario) bool { return zero64(&c.RhoPPM) })
	edit(func(c *Scenario) bool { return halve(&c.Horizon) })
	edit(func(c *Scenario) bool { return shave(&c.Horizon) })
	edit(func(c *Scenario) bool { return halve(&c.TTL) })
	edit(func(c *Scenario) bool { return shave(&c.TTL) })
	for _, c := range out {
		c.Faults = c.Faults.Sorted()
	}
	return out
}

func zero64(v *int64) bool {
	if *v == 0 {
		return false
	}
	*v = 0
	return true
}

// halve halves a positive value (a negative one moves halfway to zero).
func halve(v *int64) bool {
	if *v == 0 || *v == 1 || *v == -1 {
		return false
	}
	*v /= 2
	return true
}

// shave takes an eighth off a value (when that is at least 1).
func shave(v *int64) bool {
	d := *v / 8
	*v -= d
	return d != 0
}

func lower(v *int) bool {
	if *v == 0 {
		return false
	}
	*v--
	return true
}

// realignCandidates lists the simplifications of s that move its faults
// along with what they hit, biggest first: a deletion or shortening moves the
// events after it earlier, and a fault aligned with one of them (a heartbeat
// drop on a renewal, a freeze on a write) must move too or miss. Each comes
// in at most two forms — the faults shifted by the time the deletion saves by
// static estimate (cutFaults), or a windowed fault widened back so that it
// still covers its event wherever that moved (widenWindows; trimFront and
// halving narrow it again). Then quiet time is cut off the start, each fault
// moved back to just after the previous thing scheduled on its target, and
// windows narrowed from the front. Their number is linear in the holders,
// work items and faults; none draws randomly or ranges over a map.
func realignCandidates(s *Scenario) []*Scenario {
	var out []*Scenario
	edit := func(f func(c *Scenario) bool) {
		c := s.Clone()
		if f(c) {
			out = append(out, c)
		}
	}
	// Whole holders: one that held the lease delayed the others, so its
	// removal moves everything they did after its start earlier.
	for i := range s.Holders {
		if len(s.Holders) == 1 {
			break
		}
		p := s.Holders[i]
		del := func(c *Scenario) {
			c.Holders = slices.Delete(c.Holders, i, i+1)
			c.Faults = slices.DeleteFunc(c.Faults, func(f faults.Fault) bool { return f.Target == p.Name })
		}
		edit(func(c *Scenario) bool { del(c); return widenWindows(c, "", p.Start) })
		edit(func(c *Scenario) bool { del(c); return cutFaults(c, "", p.Start, totalWork(p)) })
	}
	// Work items: what their holder did after one happens earlier without
	// it, by at least its work.
	for i := range s.Holders {
		for j := range s.Holders[i].Work {
			p := s.Holders[i]
			from, w := itemStart(p, j), p.Work[j].Work
			del := func(c *Scenario) { c.Holders[i].Work = slices.Delete(c.Holders[i].Work, j, j+1) }
			edit(func(c *Scenario) bool { del(c); return cutFaults(c, p.Name, from, w) })
			edit(func(c *Scenario) bool { del(c); return widenWindows(c, p.Name, from) })
		}
	}
	// Shorter work items, the holder's later faults moved by as much.
	for i := range s.Holders {
		for j := range s.Holders[i].Work {
			p := s.Holders[i]
			from, w := itemStart(p, j), p.Work[j].Work
			for _, nw := range []int64{0, w / 2, w - w/8} {
				if nw >= w {
					continue
				}
				edit(func(c *Scenario) bool {
					c.Holders[i].Work[j].Work = nw
					return cutFaults(c, p.Name, from+nw, w-nw)
				})
			}
		}
	}
	// The quiet start: nothing is scheduled before the first start, fault
	// or request, so cutting that span off shifts the run earlier
	// unchanged (a reader, reading from t=0, reads less).
	edit(cutStart)
	for i := range s.Faults {
		if t, ok := previousEvent(s, i); ok {
			edit(func(c *Scenario) bool { c.Faults[i].At = t; return true })
		}
	}
	// Windows narrowed from the front, so that halving the duration (the
	// back) and this meet on the event the fault must hit.
	for i := range s.Faults {
		if windowed(s.Faults[i].Kind) {
			d := s.Faults[i].Duration
			edit(func(c *Scenario) bool { return trimFront(&c.Faults[i], d/2) })
			edit(func(c *Scenario) bool { return trimFront(&c.Faults[i], d/8) })
		}
	}
	for _, c := range out {
		c.Faults = c.Faults.Sorted()
	}
	return out
}

// windowed reports whether a fault of kind k acts on whatever happens in
// [At, At+Duration) (every message it sends or the coordinator receives),
// so that a wider window still does what the narrow one did, and more.
func windowed(k faults.Kind) bool {
	switch k {
	case faults.DropHeartbeats, faults.Delay, faults.Partition, faults.CoordinatorCrash:
		return true
	}
	return false
}

// shiftable reports whether fault f has a time the shrink may move (a
// clock offset applies from the start).
func shiftable(f faults.Fault) bool { return f.Kind != faults.ClockOffset }

// aimedAt reports whether f hits target ("" for any target).
func aimedAt(f faults.Fault, target string) bool { return target == "" || f.Target == target }

// totalWork is the work of p's items: a lower bound on how long it holds
// the lease, and so on how much it delays the others.
func totalWork(p Process) int64 {
	var w int64
	for _, it := range p.Work {
		w += it.Work
	}
	return w
}

// itemStart estimates when p starts its work item j: its start plus the
// work before it (a lower bound: waiting for the lease and writes add).
func itemStart(p Process, j int) int64 {
	t := p.Start
	for _, it := range p.Work[:j] {
		t += it.Work
	}
	return t
}

// cutFaults removes the span [from, from+d) from the timeline of the faults
// aimed at target ("" for all): a fault at or after from+d moves d earlier,
// one inside the span to from. It reports whether a fault moved.
func cutFaults(c *Scenario, target string, from, d int64) bool {
	if d <= 0 {
		return false
	}
	moved := false
	for k := range c.Faults {
		f := &c.Faults[k]
		if !shiftable(*f) || !aimedAt(*f, target) || f.At <= from {
			continue
		}
		f.At -= min(d, f.At-from)
		moved = true
	}
	return moved
}

// widenWindows stretches the window of every windowed fault aimed at target
// ("" for all) back to from (a holder target's own start at the latest), its
// end kept: whichever event it was aligned with, which a deletion moved
// earlier by an amount no static estimate knows, it still covers. Later
// candidates narrow it again from both ends. It reports whether one widened.
func widenWindows(c *Scenario, target string, from int64) bool {
	widened := false
	for k := range c.Faults {
		f := &c.Faults[k]
		if !windowed(f.Kind) || !aimedAt(*f, target) {
			continue
		}
		lo := from
		for _, p := range c.Holders {
			if p.Name == f.Target {
				lo = min(lo, p.Start)
			}
		}
		if lo >= f.At {
			continue
		}
		f.Duration += f.At - lo
		f.At = lo
		widened = true
	}
	return widened
}

// trimFront takes d off the front of a fault's window, its end kept.
func trimFront(f *faults.Fault, d int64) bool {
	if d <= 0 || d >= f.Duration {
		return false
	}
	f.At += d
	f.Duration -= d
	return true
}

// cutStart removes the span before the first thing scheduled (a holder's
// start, a fault, a client's request), shifting everything and the horizon
// earlier by it. It reports whether there was such a span.
func cutStart(c *Scenario) bool {
	t0 := c.Horizon
	for _, p := range c.Holders {
		t0 = min(t0, p.Start)
	}
	for _, f := range c.Faults {
		if shiftable(f) {
			t0 = min(t0, f.At)
		}
	}
	for _, cl := range c.Clients {
		for _, r := range cl.Requests {
			t0 = min(t0, r.At)
		}
	}
	if t0 <= 0 || t0 >= c.Horizon {
		return false
	}
	for i := range c.Holders {
		c.Holders[i].Start -= t0
	}
	for i := range c.Faults {
		if shiftable(c.Faults[i]) {
			c.Faults[i].At -= t0
		}
	}
	for i := range c.Clients {
		for j := range c.Clients[i].Requests {
			c.Clients[i].Requests[j].At -= t0
		}
	}
	c.Horizon -= t0
	return true
}

// previousEvent returns the latest thing scheduled on fault i's target
// before it strikes — the target's start, the estimated start of one of its
// work items, the end of an earlier fault on it — when that is before the
// fault: moving the fault there is the biggest move earlier that keeps it
// after the same scheduled things.
func previousEvent(s *Scenario, i int) (int64, bool) {
	f := s.Faults[i]
	if !shiftable(f) {
		return 0, false
	}
	best, ok := int64(0), false
	see := func(t int64) {
		if t < f.At && (!ok || t > best) {
			best, ok = t, true
		}
	}
	for _, p := range s.Holders {
		if p.Name != f.Target {
			continue
		}
		see(p.Start)
		for j := range p.Work {
			see(itemStart(p, j))
		}
	}
	for k, g := range s.Faults {
		if k != i && g.Target == f.Target && shiftable(g) && g.At < f.At {
			see(g.At + g.Duration)
		}
	}
	return best, ok && best > 0 // moving to 0 is zeroing, a candidate already
}

// spaceCandidates offers, through edit, s's Space with one choice fewer:
// a fault kind that may strike, then one fault, adversarial request or
// deviation fewer on a path. They are the explored counterpart of dropping
// a fault or a client's request: a smaller space whose search still finds
// the failure finds it among fewer moves.
func spaceCandidates(s *Scenario, edit func(func(c *Scenario) bool)) {
	if s.Space == nil {
		return
	}
	for i := range s.Space.Faults {
		edit(func(c *Scenario) bool { c.Space.Faults = slices.Delete(c.Space.Faults, i, i+1); return true })
	}
	edit(func(c *Scenario) bool { return lower(&c.Space.MaxFaults) })
	edit(func(c *Scenario) bool { return lower(&c.Space.Adversary) })
	edit(func(c *Scenario) bool { return lower(&c.Space.Deviations) })
}

// dropHolders offers, through edit, s without each one of its holders and
// the faults aimed at it (never the last holder): the biggest chunks a
// shrink can cut, first in both Shrink and ShrinkCoarse.
func dropHolders(s *Scenario, edit func(func(c *Scenario) bool)) {
	for i := range s.Holders {
		if len(s.Holders) == 1 {
			break
		}
		edit(func(c *Scenario) bool {
			name := c.Holders[i].Name
			c.Holders = slices.Delete(c.Holders, i, i+1)
			c.Faults = slices.DeleteFunc(c.Faults, func(f faults.Fault) bool { return f.Target == name })
			return true
		})
	}
}

// laterCandidates start a holder later: nearly all the way, then less and
// less of it, to the latest start that still leaves its program (and a
// quarter of a TTL to be granted) time before the horizon. A holder that
// starts while another holds the lease asks again and again until it is
// free; starting nearer the handoff, it asks once. The smallest moves (a
// sixteenth, a thirty-second of the room: about a third of a TTL in an
// explored world of ten TTLs) are for a handoff early in the run, which
// every bigger move overshoots.
// Strict: starting later does not make a scenario smaller by itself, only
// the operations it saves do.
func laterCandidates(s *Scenario) []*Scenario {
	var out []*Scenario
	for i := range s.Holders {
		room := s.Horizon - totalWork(s.Holders[i]) - s.TTL/4 - s.Holders[i].Start
		for _, d := range []int64{room * 15 / 16, room * 7 / 8, room * 3 / 4, room / 2, room / 4, room / 8, room / 16, room / 32} {
			if d < 1 {
				continue
			}
			c := s.Clone()
			c.Holders[i].Start += d
			out = append(out, c)
		}
	}
	return out
}

// oneWriteEach cuts every work item of c to one write; false when none had
// more.
func oneWriteEach(c *Scenario) bool {
	ok := false
	for i := range c.Holders {
		for j := range c.Holders[i].Work {
			if w := &c.Holders[i].Work[j]; w.Writes > 1 {
				w.Writes, ok = 1, true
			}
		}
	}
	return ok
}
