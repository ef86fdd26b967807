// Package tablestore is a third party's in-process lease coordinator,
// written as anyone outside leasecheck would write one: against the small
// machine.Clocked interface (acquire, renew, release, write and read, with
// the coordinator's clock passed in), with its own data layout, no
// refusal reasons (machine.Explainer) and no digest of its own
// (machine.StateHasher). It implements one optional interface,
// machine.ClockedCloner, so that the explorer copies its states instead of
// re-running paths. New hands the store out as a machine.Clocked, which is
// all a coordinator of the simulator needs to be.
//
// Its test shows three ways to check such a machine, all in-process and
// deterministic: the conformance suite (leasetest.RunMachines: a seeded
// sweep like leasecheck run, and a bounded exploration), a sweep of its
// own (campaign.Run with a Target) and the explorer directly
// (explore.Explore). It plants two flaws in the store — a renew honoured
// for anyone presenting the current token, a lease that lives one tick
// past its TTL — and each of the three catches both. Only the first is
// open to a module outside leasecheck: the other two build on the
// simulator and the explorer (internal/sim, internal/explore), which this
// example, inside the module, may import.
package tablestore
