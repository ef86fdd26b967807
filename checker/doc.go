// Package checker decides whether a lease history is correct.
//
// Check judges four properties, under stable names (DESIGN.md §2), each on
// its own so one failure never hides another:
//
//   - linearizable: some order of the operations, respecting real time,
//     explains every outcome under the timed lease model (internal/timed);
//   - single-writer-per-fence: a fence's accepted writes come from the one
//     owner it was granted to;
//   - fence-monotonic: later grants get larger fences, and a later accepted
//     write never carries an older fence;
//   - stop-on-renew-failure: after a renew fails or goes unanswered, its
//     owner writes nothing under that fence until it acquires again.
//
// The last three are sorts and sweeps; linearizability is a search with a
// time budget, and when the budget runs out the verdict is Unknown, never a
// guess. The search is leasecheck's own (search.go explains why: plain
// porcupine's cost doubles with every operation that never returned); the
// porcupine model in internal/timed is its test oracle and draws the HTML
// report (WriteHTML).
//
// A Violation names the property, the history lines involved and, in plain
// words, what happened.
//
// Index:
//   - check.go: Check, Options, Result, Violation, the property names.
//   - search.go: the linearizability search.
//   - invariants.go: the three fast properties.
//   - explain.go: the stories told about non-linearizable keys.
//   - html.go: WriteHTML.
package checker
