// Package machine is the contract between leasecheck's drivers and the lease
// protocol's roles (docs/design.md §5, "One protocol, three drivers").
//
// The coordinator, the fenced resource and the holder are pure state
// machines in the style of etcd-io/raft: no I/O, no clock, no goroutines.
// A driver — the deterministic simulator (package sim), the explorer, the
// real runner (package realrun) — feeds them what happens and carries out
// what they ask:
//
//   - A Holder gets Tick(now) (its own monotonic clock reads now) and
//     Receive(now, reply); Ready() then says which Requests to send, when to
//     wake it next, and whether it believes it holds the lease.
//   - A Coordinator gets Apply(request, now) with its lease clock's reading
//     and answers with a Reply; Crash() tells it that it went down (it keeps
//     what is durable). A Resource is the fenced storage: Apply(request).
//
// Time is an integer in the driver's unit (the simulator: ms; the real
// runner: µs); a machine only compares and adds readings.
//
// Faults that act inside a holder (its renewal loop dying, a task overrun, a
// second late release) are optional interfaces — RenewKiller, Overrunner,
// DoubleReleaser — that a machine may implement; a driver reports a fault it
// cannot apply to a machine instead of counting it. WallClockUser is the hook
// for code that reads the wall clock (which faults step): correct code never
// needs it, planted bugs do.
//
// Clocked is the in-process backend tier (the method set of leasecheck's
// reference coordinator): ClockedCoordinator turns any Clocked implementation
// into a Coordinator, with refusal reasons worked out in one place, so a
// third party's in-process coordinator runs in the simulator as it is.
//
// leasecheck's explorer copies and digests world states; a machine
// that implements the optional HolderCloner, CoordinatorCloner,
// ResourceCloner or ClockedCloner and StateHasher makes that fast. Without
// them any machine still works (re-run paths, reflection digests), slower.
//
// To check your own machines: leasetest.RunMachines (an in-process
// conformance suite over the simulator and the explorer), or
// leasetest.CheckMachines for its sweep or its exploration alone;
// examples/machine/tablestore shows each.
//
// Index: wire.go (Request, Reply, Dest, the refusal reasons), machine.go
// (Holder, Coordinator, Resource, Ready, the fault interfaces), clocked.go
// (Clocked, ClockedCoordinator), explore.go (the cloning and digesting
// interfaces, Hasher).
package machine
