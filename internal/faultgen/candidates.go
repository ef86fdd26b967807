package faultgen

import "github.com/leasecheck/leasecheck/faults"

// Candidates lists the faults an explorer may strike with at any step
// (docs/design.md §7: "where each of at most K faults strikes"): for each kind in
// kinds and each target it may hit, one fault with fixed parameters scaled
// by the TTL, so the choice is only *where* it strikes. At is left 0 (the
// explorer sets it to the step's instant). The parameters are the smallest
// that let a fault matter: a pause, freeze or partition outlasts a lease; a
// clock step moves the wall clock two TTLs either way; a drift is ±rho; a
// coordinator outage is short (a tenth of a TTL), so the holders outlive it
// and meet what the restart did to the lease table.
// Clock offsets are left out: they hold from the start (clock-offset's At
// must be 0), and leases are measured on the monotonic clock, which an
// offset does not change.
func Candidates(env Env, kinds []faults.Kind) []faults.Fault {
	ttl := max(env.TTL, 1)
	var out []faults.Fault
	add := func(f faults.Fault, targets ...string) {
		for _, t := range targets {
			g := f
			g.Target = t
			out = append(out, g)
		}
	}
	clocks := append(append([]string(nil), env.Holders...), faults.Coordinator)
	freezable := env.Holders
	if env.Fenced {
		freezable = append(append([]string(nil), env.Holders...), faults.Resource)
	}
	for _, k := range kinds {
		switch k {
		case faults.Pause, faults.Overrun, faults.DropHeartbeats:
			add(faults.Fault{Kind: k, Duration: ttl}, env.Holders...)
		case faults.ClockDrift:
			if env.RhoPPM > 0 {
				add(faults.Fault{Kind: k, Amount: env.RhoPPM}, clocks...)
				add(faults.Fault{Kind: k, Amount: -env.RhoPPM}, clocks...)
			}
		case faults.ClockStep:
			add(faults.Fault{Kind: k, Amount: 2 * ttl}, clocks...)
			add(faults.Fault{Kind: k, Amount: -2 * ttl}, clocks...)
		case faults.Freeze:
			add(faults.Fault{Kind: k, Duration: ttl}, freezable...)
		case faults.RenewDeath:
			add(faults.Fault{Kind: k}, env.Holders...)
		case faults.Delay:
			add(faults.Fault{Kind: k, Duration: ttl, Amount: max(ttl/2, 1)}, env.Holders...)
		case faults.Partition:
			add(faults.Fault{Kind: k, Duration: ttl, Peer: faults.Coordinator}, env.Holders...)
			if env.Fenced {
				add(faults.Fault{Kind: k, Duration: ttl, Peer: faults.Resource}, env.Holders...)
			}
		case faults.Crash:
			add(faults.Fault{Kind: k, Duration: ttl}, env.Holders...)
		case faults.CoordinatorCrash:
			add(faults.Fault{Kind: k, Duration: max(ttl/10, 1)}, faults.Coordinator)
		case faults.DoubleRelease:
			add(faults.Fault{Kind: k, Amount: max(ttl/3, 1)}, env.Holders...)
		case faults.OwnerReuse:
			add(faults.Fault{Kind: k, Duration: max(ttl/2, 1)}, env.Holders...)
		}
	}
	return out
}
