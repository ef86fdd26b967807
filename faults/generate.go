package faults

// Chooser is the one source of nondeterminism (package sim's Chooser has the
// same method): a value in [lo, hi], named by label so rapid can show it.
//
// Deprecated: leasecheck's own (its scenario generator and explorer draw
// faults with it); it moves under internal/ in v0.16.0, with the fault
// kinds below this package that it needs.
type Chooser interface {
	Int64(lo, hi int64, label string) int64
}

// Env is what a generator needs to know about the scenario.
//
// Deprecated: leasecheck's own (its scenario generator and explorer draw
// faults with it); it moves under internal/ in v0.16.0, with the fault
// kinds below this package that it needs.
type Env struct {
	Horizon int64    // the run's length in ms
	TTL     int64    // the lease TTL in ms
	RhoPPM  int64    // the clock-drift bound
	Holders []string // the holder names faults may target
	// Fenced reports fenced-storage semantics (a resource node exists).
	Fenced bool
}

// Generate draws a plan over kinds: each kind appears 0 to maxPer times
// (at least once when force is true), with every parameter drawn from c.
// The plan is ordered by At.
//
// Deprecated: leasecheck's own (its scenario generator and explorer draw
// faults with it); it moves under internal/ in v0.16.0, with the fault
// kinds below this package that it needs.
func Generate(c Chooser, env Env, kinds []Kind, maxPer int, force bool) Plan {
	var p Plan
	if len(env.Holders) == 0 || env.Horizon <= 0 {
		return p
	}
	lo := int64(0)
	if force {
		lo = 1
	}
	for _, k := range kinds {
		n := c.Int64(lo, int64(maxPer), "n-"+string(k))
		for i := int64(0); i < n; i++ {
			p = append(p, one(c, env, k))
		}
	}
	return p.Sorted()
}

// One draws a single fault of kind k.
//
// Deprecated: leasecheck's own (its scenario generator and explorer draw
// faults with it); it moves under internal/ in v0.16.0, with the fault
// kinds below this package that it needs.
func One(c Chooser, env Env, k Kind) Fault { return one(c, env, k) }

// one draws a single fault of kind k.
func one(c Chooser, env Env, k Kind) Fault {
	ttl := max(env.TTL, 1)
	holder := env.Holders[c.Int64(0, int64(len(env.Holders)-1), "target")]
	// Faults start in the first three quarters so their effect shows.
	at := c.Int64(0, max(env.Horizon*3/4, 1), "at")
	f := Fault{Kind: k, Target: holder, At: at}
	switch k {
	case Pause:
		f.Duration = c.Int64(1, 2*ttl, "pause")
	case Overrun:
		f.Duration = c.Int64(ttl/2, 3*ttl, "overrun")
	case ClockOffset:
		f.At = 0
		if c.Int64(0, 3, "coord?") == 0 {
			f.Target = Coordinator
		}
		f.Amount = c.Int64(-5*ttl, 5*ttl, "offset")
	case ClockDrift:
		if c.Int64(0, 3, "coord?") == 0 {
			f.Target = Coordinator
		}
		f.Amount = c.Int64(-env.RhoPPM, env.RhoPPM, "ppm")
	case ClockStep:
		if c.Int64(0, 3, "coord?") == 0 {
			f.Target = Coordinator // harmless to code that leases on the monotonic clock
		}
		f.Amount = c.Int64(-3*ttl, 3*ttl, "step")
	case Freeze:
		if env.Fenced && c.Int64(0, 4, "resource?") == 0 {
			f.Target = Resource
		}
		f.Duration = c.Int64(1, 2*ttl, "freeze")
	case DropHeartbeats:
		f.Duration = c.Int64(ttl/3, 2*ttl, "window")
	case RenewDeath:
	case Delay:
		f.Duration = c.Int64(1, 2*ttl, "window")
		f.Amount = c.Int64(1, ttl, "extra")
	case Partition:
		f.Peer = Coordinator
		if env.Fenced && c.Int64(0, 1, "peer") == 1 {
			f.Peer = Resource
		}
		f.Duration = c.Int64(1, 2*ttl, "window")
	case Crash:
		if c.Int64(0, 2, "restart?") > 0 {
			f.Duration = c.Int64(1, 2*ttl, "restart")
		}
	case CoordinatorCrash:
		f.Target = Coordinator
		f.Duration = c.Int64(1, ttl, "down")
	case DoubleRelease:
		f.Amount = c.Int64(0, ttl, "late")
	case OwnerReuse:
		f.Duration = c.Int64(1, 2*ttl, "restart")
	case Blackhole, RequestLoss, ReplyLoss:
		f.Duration = c.Int64(1, 2*ttl, "window")
	case RequestDelay, ReplyDelay, Reorder:
		f.Duration = c.Int64(1, 2*ttl, "window")
		f.Amount = c.Int64(1, ttl, "extra")
	case Duplicate:
		f.Duration = c.Int64(1, 2*ttl, "window")
		f.Amount = c.Int64(0, ttl, "late")
	}
	return f
}
