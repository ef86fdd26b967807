// Package faults is leasecheck's fault vocabulary (docs/specification.md §1,
// docs/design.md §5): the failure modes the article names, as plain,
// serializable, composable values.
//
// A Fault is one injection (a Kind, a target, a start time and parameters);
// a Plan is a list of them, ordered by start time (Sorted), which Validate
// checks against a scenario's holders and clock-drift bound.
//
// Index:
//   - kind.go: Kind and the stable kind names (AllKinds, ParseKinds; the
//     lists of kinds outside "all": ClusterKinds, NetworkKinds — the
//     faults at a client's socket, per leg — and ClientKinds).
//   - fault.go: Fault, Plan, Validate (and the deprecated combinators).
//   - generate.go, candidates.go: leasecheck's own fault generator
//     (Generate draws a plan from a Chooser, Candidates lists the faults
//     the explorer may strike with), deprecated here: it moves under
//     internal/ in v0.16.0.
//
// The package only describes faults; the drivers inject them, each the
// kinds it can (docs/design.md says which driver takes which kind).
package faults
