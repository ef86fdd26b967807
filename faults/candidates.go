package faults

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
//
// Deprecated: leasecheck's own (its scenario generator and explorer draw
// faults with it); it moves under internal/ in v0.16.0, with the fault
// kinds below this package that it needs.
func Candidates(env Env, kinds []Kind) []Fault {
	ttl := max(env.TTL, 1)
	var out []Fault
	add := func(f Fault, targets ...string) {
		for _, t := range targets {
			g := f
			g.Target = t
			out = append(out, g)
		}
	}
	clocks := append(append([]string(nil), env.Holders...), Coordinator)
	freezable := env.Holders
	if env.Fenced {
		freezable = append(append([]string(nil), env.Holders...), Resource)
	}
	for _, k := range kinds {
		switch k {
		case Pause, Overrun, DropHeartbeats:
			add(Fault{Kind: k, Duration: ttl}, env.Holders...)
		case ClockDrift:
			if env.RhoPPM > 0 {
				add(Fault{Kind: k, Amount: env.RhoPPM}, clocks...)
				add(Fault{Kind: k, Amount: -env.RhoPPM}, clocks...)
			}
		case ClockStep:
			add(Fault{Kind: k, Amount: 2 * ttl}, clocks...)
			add(Fault{Kind: k, Amount: -2 * ttl}, clocks...)
		case Freeze:
			add(Fault{Kind: k, Duration: ttl}, freezable...)
		case RenewDeath:
			add(Fault{Kind: k}, env.Holders...)
		case Delay:
			add(Fault{Kind: k, Duration: ttl, Amount: max(ttl/2, 1)}, env.Holders...)
		case Partition:
			add(Fault{Kind: k, Duration: ttl, Peer: Coordinator}, env.Holders...)
			if env.Fenced {
				add(Fault{Kind: k, Duration: ttl, Peer: Resource}, env.Holders...)
			}
		case Crash:
			add(Fault{Kind: k, Duration: ttl}, env.Holders...)
		case CoordinatorCrash:
			add(Fault{Kind: k, Duration: max(ttl/10, 1)}, Coordinator)
		case DoubleRelease:
			add(Fault{Kind: k, Amount: max(ttl/3, 1)}, env.Holders...)
		case OwnerReuse:
			add(Fault{Kind: k, Duration: max(ttl/2, 1)}, env.Holders...)
		}
	}
	return out
}
