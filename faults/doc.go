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
//
// The package only describes faults; the drivers inject them, and
// internal/faultsupport's one table says which driver takes which kind.
package faults
