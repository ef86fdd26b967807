// Package faults is leasecheck's fault vocabulary (docs/specification.md §1,
// docs/design.md §5): the failure modes the article names, as plain,
// serializable, composable values.
//
// A Fault is one injection (a Kind, a target, a start time and parameters);
// a Plan is a list of them, ordered by start time. Plans compose with
// Sequence, Repeat and Shift, and Generate draws a plan from a Chooser (a
// seeded PRNG or rapid draws), so every parameter is drawn from the run's one
// source of randomness and printed with the scenario.
//
// Index:
//   - kind.go: Kind and the stable kind names (AllKinds, ParseKinds).
//   - fault.go: Fault, Plan, Validate and the combinators.
//   - generate.go: Chooser, Env and Generate.
//   - candidates.go: Candidates, the fixed-parameter faults the explorer
//     may strike with at any step (docs/design.md §7).
//   - applies.go: where each kind can strike (the simulator, a real
//     backend, a client in virtual time) and what a target must offer: one
//     table every driver reads (Kind.Needs, KindsFor).
//
// The package only describes faults; package sim injects them.
package faults
