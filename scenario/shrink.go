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
func Shrink(s *Scenario, test ShrinkTest, maxTests int) *Scenario {
	cur := s.Clone()
	_, size := test(cur)
	tests := 0
	try := func(c *Scenario) bool {
		if tests >= maxTests || c.Validate() != nil {
			return false
		}
		tests++
		fails, n := test(c)
		if !fails || n > size {
			return false
		}
		cur, size = c, n
		return true
	}
	for progress := true; progress && tests < maxTests; {
		progress = false
		for _, cand := range shrinkCandidates(cur) {
			if try(cand) {
				progress = true
				break // restart from the smaller scenario: its candidates differ
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
	// Whole faults.
	for i := range s.Faults {
		edit(func(c *Scenario) bool { c.Faults = slices.Delete(c.Faults, i, i+1); return true })
	}
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
	// Work items and writes.
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
