package faultsupport

// Clock is one process's clocks as functions of true time: what the
// clock faults (clock-offset, clock-drift, clock-step, freeze) make a
// process read, written once for every driver — the simulator's nodes (in
// ms), the real runner's processes (in µs over the run's real time) and a
// user's client in virtual time (vclient's Clock) read it, so a skew
// means the same reading wherever it strikes. It is a value of a few
// words: the simulator copies it with every clone of its world.
//
// The monotonic clock only drifts (within the scenario's rho) and may be
// frozen and resumed (a container freeze); it never goes back. The wall clock
// is the monotonic clock plus an offset that steps forward and back. Leases
// are measured on the monotonic clock (docs/design.md §5, Clocks).
type Clock struct {
	base   int64 // monotonic reading at true time anchor
	anchor int64
	ppm    int64 // drift, parts per million (> -1e6)
	// frac is the drift's fraction of a tick carried over at the last
	// rebase, in millionths: readings stay exact across drift changes, so
	// the error never exceeds |ppm|·elapsed + 1 (the history's clock
	// uncertainty counts on it).
	frac   int64
	frozen int   // freeze depth
	wall   int64 // wall = mono + wall
}

// NewClock returns a clock reading offset at true time 0.
func NewClock(offset int64) Clock { return Clock{base: offset} }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Mono reads the monotonic clock at true time t (t >= the last change).
func (c *Clock) Mono(t int64) int64 {
	if c.frozen > 0 {
		return c.base
	}
	d := t - c.anchor
	return c.base + d + floorDiv(d*c.ppm+c.frac, 1_000_000)
}

// Phase is the drift's fraction of a tick carried at true time t, in
// millionths: with Mono(t) and the drift it fixes every later reading (two
// clocks that read alike now but carry different fractions part ways at
// the next tick), so a state's digest needs it.
func (c *Clock) Phase(t int64) int64 {
	if c.frozen > 0 {
		return c.frac
	}
	x := (t-c.anchor)*c.ppm + c.frac
	return x - floorDiv(x, 1_000_000)*1_000_000
}

// Wall reads the wall clock at true time t.
func (c *Clock) Wall(t int64) int64 { return c.Mono(t) + c.wall }

func (c *Clock) rebase(t int64) {
	if c.frozen > 0 {
		c.anchor = t
		return
	}
	d := t - c.anchor
	x := d*c.ppm + c.frac
	c.base += d + floorDiv(x, 1_000_000)
	c.frac = x - floorDiv(x, 1_000_000)*1_000_000
	c.anchor = t
}

// Offset moves every reading of both clocks by d: a clock-offset, which
// holds from the start (a node's clock is set before its first reading).
func (c *Clock) Offset(d int64) { c.base += d }

// Drift is the rate the clock runs at now, parts per million fast.
func (c *Clock) Drift() int64 { return c.ppm }

// WallOffset is how far the wall clock is from the monotonic one: the sum
// of the steps.
func (c *Clock) WallOffset() int64 { return c.wall }

// Frozen is the freeze depth: how many freezes stop the monotonic clock.
func (c *Clock) Frozen() int { return c.frozen }

// SetDrift makes the clock run ppm parts per million fast from t on.
func (c *Clock) SetDrift(t, ppm int64) { c.rebase(t); c.ppm = ppm }

// Freeze stops the monotonic clock at t.
func (c *Clock) Freeze(t int64) { c.rebase(t); c.frozen++ }

// Unfreeze resumes it at t (from the reading it was frozen at).
func (c *Clock) Unfreeze(t int64) {
	if c.frozen == 0 {
		return
	}
	c.frozen--
	if c.frozen == 0 {
		c.anchor = t
	}
}

// Thaw ends every freeze at t: a process that dies frozen takes its
// freeze with it, and the next incarnation's clock runs (else it would
// start on a stopped clock and lose the wake-up it asked for).
func (c *Clock) Thaw(t int64) {
	for c.frozen > 0 {
		c.Unfreeze(t)
	}
}

// Step moves the wall clock by d.
func (c *Clock) Step(d int64) { c.wall += d }

// When returns the earliest true time >= t at which Mono reads >= local, or
// -1 while the clock is frozen (the time is unknown until it resumes).
func (c *Clock) When(local, t int64) int64 {
	if c.Mono(t) >= local {
		return t
	}
	if c.frozen > 0 {
		return -1
	}
	d := local - c.base
	est := c.anchor + (d*1_000_000+(1_000_000+c.ppm)-1)/(1_000_000+c.ppm)
	est = max(est, t)
	for i := 0; i < 64 && c.Mono(est) < local; i++ {
		est++
	}
	for i := 0; i < 64 && est > t && c.Mono(est-1) >= local; i++ {
		est--
	}
	return est
}
