// Package leasetest is a conformance suite for lease backends, in the
// manner of testing/fstest.TestFS and golang.org/x/net/nettest.TestConn:
// give it a Factory that returns a fresh backend (and a stop function), and
// it checks that the backend behaves as a lease with fenced writes should
// (DESIGN.md §1: acquire, renew, release, write, read).
//
//	func TestMyLease(t *testing.T) {
//		leasetest.Run(t, func() (backend.Backend, func(), error) {
//			b, err := mylease.Dial(addr)
//			return b, func() { b.Close() }, err
//		}, leasetest.Options{Info: mylease.Info()})
//	}
//
// Run runs every property as a named subtest (t.Run("Expiry", ...)), in
// parallel, each on its own backend from the factory and its own key.
// Check does the same outside `go test` and returns an error listing every
// failure. Each property drives a short, scripted sequence — a holder that
// pauses past its TTL, a stale fence, a renewal after expiry — asserts the
// answers it must get, and records the whole exchange as a history that
// the checker (package checker) judges for linearizability and the fencing
// invariants; a failure prints the call, what it returned and what it must
// have returned, and the checker's story.
//
// The suite is honest in one direction: it raises no false alarm on a
// backend that meets the contract within the uncertainty the backend
// declares (Info.Uncertainty: how late its leases may expire), but it may
// miss bugs — a handful of scripted sequences and one short randomized
// workload cannot try every interleaving; `leasecheck verify` and the
// simulator search further. Timing: every property waits a few TTLs, so a
// short TTL (Options.TTL) keeps the suite fast.
//
// The properties: Acquire, MutualExclusion, NoEarlyExpiry, Expiry, Renew,
// RenewAfterExpiry, Release, FenceIncreases, StaleFence, WriteAfterExpiry,
// Zombie, Linearizable.
package leasetest
