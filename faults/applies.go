package faults

// Where each kind can strike: one table that every driver reads, so that
// what the simulator, the real runner behind verify and the virtual-time
// client runner inject — and what they refuse, and why — is written once.

// A Driver is a way leasecheck runs holders against a lease.
type Driver uint8

const (
	// Simulator is the deterministic simulator (run, explore, the
	// property tests) with the reference holder or a planted bug.
	Simulator Driver = iota + 1
	// RealBackend is the real runner behind verify: real processes
	// against a real lease service.
	RealBackend
	// VirtualTime is a user's own client run in virtual time (vclient).
	VirtualTime
)

// A Need is what a driver's target must offer for a kind to strike it.
type Need uint8

const (
	// Never: the driver does not inject the kind; a scenario carrying it is
	// reported as not applied (the simulator) or refused (the others).
	Never Need = iota
	// Always: every target of the driver takes it.
	Always
	// NeedsProxy: a proxy between the clients and the server, which needs
	// the server's address.
	NeedsProxy
	// NeedsOwnServer: a server the harness starts, kills and restarts
	// itself (a server of the user's own is not one to crash).
	NeedsOwnServer
	// NeedsCluster: a replicated service whose members the harness started.
	NeedsCluster
)

// applies is the table: a kind's need under each driver, in Driver order.
var applies = map[Kind][3]Need{
	Pause:            {Always, Always, Always},
	Overrun:          {Always, Always, Never},
	ClockOffset:      {Always, Always, Always},
	ClockDrift:       {Always, Always, Always},
	ClockStep:        {Always, Always, Never},
	Freeze:           {Always, Always, Never},
	DropHeartbeats:   {Always, Always, Never},
	RenewDeath:       {Always, Always, Never},
	Delay:            {Always, NeedsProxy, Always},
	Partition:        {Always, NeedsProxy, Always},
	Crash:            {Always, Always, Always},
	CoordinatorCrash: {Always, NeedsOwnServer, Always},
	DoubleRelease:    {Always, Always, Never},
	OwnerReuse:       {Always, Always, Always},
	MemberIsolate:    {Never, NeedsCluster, Never},
	MemberBridge:     {Never, NeedsCluster, Never},
	PeerDelay:        {Never, NeedsCluster, Never},
	MemberPause:      {Never, NeedsCluster, Never},
	MemberCrash:      {Never, NeedsCluster, Never},
	Shutdown:         {Never, Never, Always},
	Conflict:         {Never, Never, Always},
}

// Needs says what driver d's target must offer for k to strike it (Never
// for a kind d does not inject, or an unknown kind or driver).
func (k Kind) Needs(d Driver) Need {
	if d < Simulator || d > VirtualTime {
		return Never
	}
	return applies[k][d-1]
}

// KindsFor lists the kinds driver d can inject into some target, in the
// order summaries print them (AllKinds, then ClusterKinds, then
// ClientKinds).
func KindsFor(d Driver) []Kind {
	var out []Kind
	for _, list := range [][]Kind{AllKinds, ClusterKinds, ClientKinds} {
		for _, k := range list {
			if k.Needs(d) != Never {
				out = append(out, k)
			}
		}
	}
	return out
}
