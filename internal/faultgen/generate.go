package faultgen

import "github.com/leasecheck/leasecheck/faults"

// Chooser is the one source of nondeterminism (package sim's Chooser has the
// same method): a value in [lo, hi], named by label so rapid can show it.
type Chooser interface {
	Int64(lo, hi int64, label string) int64
}

// Env is what a generator needs to know about the scenario.
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
func Generate(c Chooser, env Env, kinds []faults.Kind, maxPer int, force bool) faults.Plan {
	var p faults.Plan
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
func One(c Chooser, env Env, k faults.Kind) faults.Fault { return one(c, env, k) }

// one draws a single fault of kind k.
func one(c Chooser, env Env, k faults.Kind) faults.Fault {
	ttl := max(env.TTL, 1)
	holder := env.Holders[c.Int64(0, int64(len(env.Holders)-1), "target")]
	// Faults start in the first three quarters so their effect shows.
	at := c.Int64(0, max(env.Horizon*3/4, 1), "at")
	f := faults.Fault{Kind: k, Target: holder, At: at}
	switch k {
	case faults.Pause:
		f.Duration = c.Int64(1, 2*ttl, "pause")
	case faults.Overrun:
		f.Duration = c.Int64(ttl/2, 3*ttl, "overrun")
	case faults.ClockOffset:
		f.At = 0
		if c.Int64(0, 3, "coord?") == 0 {
			f.Target = faults.Coordinator
		}
		f.Amount = c.Int64(-5*ttl, 5*ttl, "offset")
	case faults.ClockDrift:
		if c.Int64(0, 3, "coord?") == 0 {
			f.Target = faults.Coordinator
		}
		f.Amount = c.Int64(-env.RhoPPM, env.RhoPPM, "ppm")
	case faults.ClockStep:
		if c.Int64(0, 3, "coord?") == 0 {
			f.Target = faults.Coordinator // harmless to code that leases on the monotonic clock
		}
		f.Amount = c.Int64(-3*ttl, 3*ttl, "step")
	case faults.Freeze:
		if env.Fenced && c.Int64(0, 4, "resource?") == 0 {
			f.Target = faults.Resource
		}
		f.Duration = c.Int64(1, 2*ttl, "freeze")
	case faults.DropHeartbeats:
		f.Duration = c.Int64(ttl/3, 2*ttl, "window")
	case faults.RenewDeath:
	case faults.Delay:
		f.Duration = c.Int64(1, 2*ttl, "window")
		f.Amount = c.Int64(1, ttl, "extra")
	case faults.Partition:
		f.Peer = faults.Coordinator
		if env.Fenced && c.Int64(0, 1, "peer") == 1 {
			f.Peer = faults.Resource
		}
		f.Duration = c.Int64(1, 2*ttl, "window")
	case faults.Crash:
		if c.Int64(0, 2, "restart?") > 0 {
			f.Duration = c.Int64(1, 2*ttl, "restart")
		}
	case faults.CoordinatorCrash:
		f.Target = faults.Coordinator
		f.Duration = c.Int64(1, ttl, "down")
	case faults.DoubleRelease:
		f.Amount = c.Int64(0, ttl, "late")
	case faults.OwnerReuse:
		f.Duration = c.Int64(1, 2*ttl, "restart")
	case faults.Blackhole, faults.RequestLoss, faults.ReplyLoss:
		f.Duration = c.Int64(1, 2*ttl, "window")
	case faults.RequestDelay, faults.ReplyDelay, faults.Reorder:
		f.Duration = c.Int64(1, 2*ttl, "window")
		f.Amount = c.Int64(1, ttl, "extra")
	case faults.Duplicate:
		f.Duration = c.Int64(1, 2*ttl, "window")
		f.Amount = c.Int64(0, ttl, "late")
	}
	return f
}
