package scenario

import "slices"

// ShrinkCoarse is Shrink for a test that is expensive — a real run of
// seconds per candidate, under a time budget that affords a handful — where
// Shrink's one-step candidates (one work item, one write at a time) would
// spend the whole budget to cut a few operations: a 10 s round, 60 s, 5
// candidates, 200 operations to 188. It first tries coarse candidates, in
// the manner of delta debugging: a whole holder, the faults (all, then
// each half), the run before the first fault halved, the horizon halved (which also halves what each later
// candidate costs), the reader, every item's writes down to one, then each
// holder's work cut to its first half, then to its second; the same chunks
// of a half again while they help.
// Only where none does, it goes on as Shrink.
func ShrinkCoarse(s *Scenario, test ShrinkTest, maxTests int) *Scenario {
	return shrink(s, test, maxTests, withWorkload(plain(coarseCandidates, shrinkCandidates, realignCandidates, nil))...)
}

// coarseCandidates lists the chunk-sized simplifications of s, biggest
// first.
func coarseCandidates(s *Scenario) []*Scenario {
	var out []*Scenario
	edit := func(f func(c *Scenario) bool) {
		c := s.Clone()
		if f(c) {
			c.Faults = c.Faults.Sorted()
			out = append(out, c)
		}
	}
	// Whole holders, with the faults aimed at them (Shrink's first
	// candidates: a holder is the biggest chunk there is).
	dropHolders(s, edit)
	// Then the faults in chunks: a fault is a candidate's biggest cost after
	// a holder (it forces recoveries, retries and a longer story), and a
	// real failure usually needs one or two of the many drawn.
	if n := len(s.Faults); n > 1 {
		edit(func(c *Scenario) bool { c.Faults = nil; return true })
		edit(func(c *Scenario) bool { c.Faults = slices.Clone(c.Faults[:n/2]); return true })
		edit(func(c *Scenario) bool { c.Faults = slices.Clone(c.Faults[n/2:]); return true })
	}
	// The run before the first fault, halved: the faults strike earlier by
	// half the first one's time, and the run ends that much earlier, so
	// what follows the faults keeps its length (the horizon halved cuts
	// that instead).
	edit(earlierFaults)
	edit(func(c *Scenario) bool { return halve(&c.Horizon) })
	// The workload's biggest chunks: the reader (a read every few
	// milliseconds of a run's seconds), and every item's writes down to one.
	edit(func(c *Scenario) bool { ok := c.ReadEvery > 0; c.ReadEvery = 0; return ok })
	edit(oneWriteEach)
	for i := range s.Holders {
		n := len(s.Holders[i].Work)
		if n < 2 {
			continue
		}
		edit(func(c *Scenario) bool { c.Holders[i].Work = c.Holders[i].Work[:n/2]; return true })
		edit(func(c *Scenario) bool { c.Holders[i].Work = c.Holders[i].Work[n/2:]; return true })
	}
	return out
}

// CutAt lists the candidates of a failing run cut at horizon h (the
// instant its violation was over, as its caller knows it): first the cut
// with the reader gone and every item down to one write as well (one real
// run that, when it still fails, saves three), then the cut alone. Each is
// valid; none when h does not shorten s.
func CutAt(s *Scenario, h int64) []*Scenario {
	if h <= 0 || h >= s.Horizon {
		return nil
	}
	var out []*Scenario
	cut := s.Clone()
	cut.Horizon = h
	thin := cut.Clone()
	if ok := thin.ReadEvery > 0; oneWriteEach(thin) || ok {
		thin.ReadEvery = 0
		if thin.Validate() == nil {
			out = append(out, thin)
		}
	}
	if cut.Validate() == nil {
		out = append(out, cut)
	}
	return out
}

// earlierFaults moves c's shiftable faults earlier by half the first one's
// time and ends the run as much earlier; false when nothing moves.
func earlierFaults(c *Scenario) bool {
	first := int64(-1)
	for _, f := range c.Faults {
		if shiftable(f) && (first < 0 || f.At < first) {
			first = f.At
		}
	}
	d := first / 2
	if d <= 0 || d >= c.Horizon {
		return false
	}
	for i := range c.Faults {
		if shiftable(c.Faults[i]) {
			c.Faults[i].At -= d
		}
	}
	c.Horizon -= d
	return true
}
