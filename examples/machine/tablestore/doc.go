// Package tablestore is a third party's in-process lease coordinator,
// written as anyone outside leasecheck would write one: against the small
// machine.Clocked interface (acquire, renew, release, write and read, with
// the coordinator's clock passed in), with its own data layout, no
// refusal reasons (machine.Explainer) and no digest of its own
// (machine.StateHasher). It implements one optional interface,
// machine.ClockedCloner, so that the explorer copies its states instead of
// re-running paths.
//
// Its test shows the three ways to check such a machine with leasecheck,
// all in-process and deterministic: the conformance suite
// (leasetest.RunMachines: a seeded sweep like leasecheck run, and a
// bounded exploration), a sweep of your own (campaign.Run with a Target),
// and the explorer directly (explore.Explore). Flawed turns on a planted
// flaw each of them must catch.
package tablestore
