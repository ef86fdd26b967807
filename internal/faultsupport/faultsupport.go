// Package faultsupport says where each fault kind can strike — the
// simulator, the real runner behind verify, a user's client in virtual
// time — and what a target must offer for it: one table that every driver
// reads, so that what each injects, and what it refuses and why, is
// written once. The kinds themselves are package faults'.
//
// It also holds what a fault does wherever the drivers decide it alike,
// so that a kind means one thing under each of them: what a process's
// clock reads under the clock faults and a freeze (Clock), when a fault
// with a duration is in force (During), where a pause strikes
// (ArmedPause), which requests a drop-heartbeats loses, and what a process
// restarted after a crash is called and under which owner (Incarnation,
// KeepsOwner). How each driver makes it happen — an event queue, a TCP
// proxy, a signal to a server, goroutines held in a synctest bubble —
// stays in the driver.
package faultsupport

import "github.com/leasecheck/leasecheck/faults"

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
var applies = map[faults.Kind][3]Need{
	faults.Pause:            {Always, Always, Always},
	faults.Overrun:          {Always, Always, Never},
	faults.ClockOffset:      {Always, Always, Always},
	faults.ClockDrift:       {Always, Always, Always},
	faults.ClockStep:        {Always, Always, Never},
	faults.Freeze:           {Always, Always, Never},
	faults.DropHeartbeats:   {Always, Always, Never},
	faults.RenewDeath:       {Always, Always, Never},
	faults.Delay:            {Always, NeedsProxy, Always},
	faults.Partition:        {Always, NeedsProxy, Always},
	faults.Crash:            {Always, Always, Always},
	faults.CoordinatorCrash: {Always, NeedsOwnServer, Always},
	faults.DoubleRelease:    {Always, Always, Never},
	faults.OwnerReuse:       {Always, Always, Always},
	faults.MemberIsolate:    {Never, NeedsCluster, Never},
	faults.MemberBridge:     {Never, NeedsCluster, Never},
	faults.PeerDelay:        {Never, NeedsCluster, Never},
	faults.MemberPause:      {Never, NeedsCluster, Never},
	faults.MemberCrash:      {Never, NeedsCluster, Never},
	faults.Blackhole:        {Never, NeedsProxy, Never},
	faults.RequestLoss:      {Never, NeedsProxy, Never},
	faults.ReplyLoss:        {Never, NeedsProxy, Never},
	faults.RequestDelay:     {Never, NeedsProxy, Never},
	faults.ReplyDelay:       {Never, NeedsProxy, Never},
	faults.Reorder:          {Never, NeedsProxy, Never},
	faults.Duplicate:        {Never, NeedsProxy, Never},
	faults.Shutdown:         {Never, Never, Always},
	faults.Conflict:         {Never, Never, Always},
}

// Needs says what driver d's target must offer for k to strike it (Never
// for a kind d does not inject, or an unknown kind or driver).
func Needs(k faults.Kind, d Driver) Need {
	if d < Simulator || d > VirtualTime {
		return Never
	}
	return applies[k][d-1]
}

// Kinds lists the kinds driver d can inject into some target, in the
// order summaries print them (faults.AllKinds, then ClusterKinds,
// NetworkKinds, ClientKinds).
func Kinds(d Driver) []faults.Kind {
	var out []faults.Kind
	for _, list := range [][]faults.Kind{faults.AllKinds, faults.ClusterKinds, faults.NetworkKinds, faults.ClientKinds} {
		for _, k := range list {
			if Needs(k, d) != Never {
				out = append(out, k)
			}
		}
	}
	return out
}
