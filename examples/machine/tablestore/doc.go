// Package tablestore is a third party's in-process lease coordinator,
// written as anyone outside leasecheck would write one: against the small
// machine.Clocked interface (acquire, renew, release, write and read, with
// the coordinator's clock passed in), with its own data layout, no
// refusal reasons (machine.Explainer) and no digest of its own
// (machine.StateHasher). It implements one optional interface,
// machine.ClockedCloner, so that the explorer copies its states instead of
// re-running paths.
//
// Its test shows three ways to check such a machine, all in-process and
// deterministic: the conformance suite (leasetest.RunMachines: a seeded
// sweep like leasecheck run, and a bounded exploration), a sweep of its
// own (campaign.Run with a Target) and the explorer directly
// (explore.Explore). Flawed turns on a planted flaw each of them must
// catch. Only the first is open to a module outside leasecheck: the other
// two build on the simulator and the explorer (internal/sim,
// internal/explore), which this example, inside the module, may import.
package tablestore
