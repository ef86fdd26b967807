// Package mutants holds leasecheck's planted bugs: small, named variants of
// the reference coordinator, fenced resource and holder, each breaking one
// rule of the lease article (docs/specification.md §1).
//
//   - A Mutant names its failure mode, quotes the article's sentence it
//     breaks (with an English rendering), says which component it replaces
//     and which property must catch it: one of the checker's four, or a run
//     property judged on the simulator's result (package runprop: the
//     liveness bounds after a crash or a release, renewals keeping the lease
//     on a quiet network, and no two holders believing at once). Machines
//     are the factories that plug it in (sim.Planted makes them the
//     simulator's options); ScenarioOptions, Adapt and Scenario shape the
//     scenarios of its detection search.
//   - A mutant is one named bug switch on the one implementation:
//     memstore.Bug for the coordinator and the fenced resource, holder.Bug
//     for the holder protocol, each at a line marked BUG in that code. There
//     are no copies of the protocol (TestEachMutantIsOneSwitch).
//
// Judging, detecting, shrinking and explaining live in package campaign,
// which treats a mutant as one more target (campaign.Mutant): its
// TestMutantsCaught is the mutation test, and the shrunk counterexamples in
// testdata/scenarios/mutants/ (NAME.scenario.json and NAME.md, replayed by
// its TestMutantCounterexamples) record "implementation": "mutant:NAME", so
// `leasecheck repro FILE` replays them alone.
//
// Some bugs were planted for a blind spot of the harness before it drew
// adversarial clients and the protocol's parameters (Mutant.BlindSpot): checks behind the fence check that only an
// adversarial client reaches, errors a fixed margin and renew interval
// hide, bugs whose only trace is in the run properties, and an order of
// simultaneous events only exploration meets. TestBlindSpots runs the old
// harness and the new one on each.
//
// ExploreBounds are the bounds `leasecheck explore --mutant NAME` searches
// by default (package explore: MutantSpace).
//
// Index: mutants.go (Mutant, All, ByName, Names, OptionsFor, ExploreBounds,
// the table of switches).
package mutants
