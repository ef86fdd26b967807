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
// Its test checks it as a module outside leasecheck does, through
// leasetest alone and all in-process and deterministic: the conformance
// suite (leasetest.RunMachines: a seeded sweep like leasecheck run, and a
// bounded exploration), the sweep alone over 300 seeds, and the
// exploration alone proving the store in a bounded space
// (leasetest.CheckMachines with Skip). It plants two flaws in the store —
// a renew honoured for anyone presenting the current token, a lease that
// lives one tick past its TTL — and each way catches both.
package tablestore
