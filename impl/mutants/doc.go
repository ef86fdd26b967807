// Package mutants holds leasecheck's planted bugs: small, named variants of
// the reference coordinator, fenced resource and holder, each breaking one
// rule of the lease article (shared/reference/lease-article.zh.txt,
// DESIGN.md §1), and the machinery that proves the checker catches them.
//
//   - A Mutant names its failure mode, quotes the article's sentence it
//     breaks (with an English rendering), says which component it replaces
//     and which property must catch it: one of the checker's four, or a run
//     property judged on the simulator's result (RunProperties: the liveness
//     bounds after a crash or a release, renewals keeping the lease on a
//     quiet network, and no two holders believing at once). Options plugs it
//     into sim.Run.
//   - A mutant is one named bug switch on the one implementation:
//     memstore.Bug for the coordinator and the fenced resource, holder.Bug
//     for the holder protocol, each at a line marked BUG in that code. There
//     are no copies of the protocol (TestEachMutantIsOneSwitch).
//   - Judge runs a scenario and judges every property; Detect iterates seeds
//     from a base with the mutant's fault kinds (and, for a few, a described
//     environment) until the expected property fails; Shrink and
//     Counterexample minimize a failing scenario with scenario.Shrink,
//     keeping "the mutant still fails the same property and the reference
//     passes"; Explain tells the story of a counterexample.
//
// The shrunk counterexamples live in testdata/scenarios/mutants/, one
// NAME.scenario.json and NAME.md each; TestMutantCounterexamples replays
// them (-update regenerates them). TestMutantReport -report prints the
// detection table (make bench).
//
// The run properties themselves are package runprop's.
//
// Index: mutants.go (Mutant, All, ByName, the list), detect.go (Judge,
// Detect, the run properties), shrink.go (Shrink, Counterexample, Size, Explain).
package mutants
