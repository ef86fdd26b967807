// Package checker decides whether a lease history is correct.
//
// Check judges six properties, under stable names (docs/specification.md
// §2), each on its own so one failure never hides another:
//
//   - linearizable: some order of the operations, respecting real time and
//     each process's own order, explains every outcome under the timed
//     lease model (docs/specification.md §3);
//   - single-writer-per-fence: a fence's accepted writes come from the one
//     owner it was granted to — the coordinator's numbering, judged where
//     the history says writes present the grants' fences (the default;
//     not with "tokens":"ordered", model.OrderedTokens); in a fence-less
//     history: every accepted write comes from the owner holding the lease;
//   - stale-write: the fencing safety verdict, whatever token a write
//     presents: no write of a deposed holder's is accepted after a later
//     holder's was, "later" by the grants' fences, never by the tokens;
//   - fence-monotonic: later grants get larger fences, and a later accepted
//     write never carries an older fence;
//   - stop-on-renew-failure: after a renew fails or goes unanswered, its
//     owner writes nothing under that fence until it acquires again;
//   - expiry-lateness: judged when the header declares expiry_lateness (a
//     coordinator that frees expired leases late): no answer that a lease is
//     still held comes later after its expiry than declared (lateness.go).
//
// Everything is decided from each key's events in time order (events.go),
// so a history held in memory (Check) and one streamed from a file too big
// to hold (CheckFile, CheckReader) are judged by the same code. The three
// invariants and stale-write are state machines over those events. In memory, a key's
// linearizability is first tried by a greedy pass (greedy.go): one order
// of its ops, built op by op with local repairs, judged by the timed model
// apart from the pass (an independent replay of the order) — a correct history is
// decided at about the cost of reading it. Where the pass gets stuck, cheap
// projections of the model (the data as a register, the fences, the
// holder: projections.go, register.go) may refute. Otherwise linearizability
// is a frontier sweep, exact and relaxed (sweep.go argues why each is
// sound), with the depth-first search (search.go) beside them: a key the exact
// sweep cannot decide within an allowance of work linear in its ops gets a
// depth-first try for a witness within a node allowance as linear, then the
// relaxed sweep's refutation, then the search with the rest of the budget
// (keycheck.go: no phase may burn the budget on a shape another
// decides at once). The class of histories these are judged on, and the
// benchmark matrix over it: docs/benchmarks.md. Every
// phase spends one budget, time and memory (Options); when it runs out the
// verdict is Unknown with the reason, never a guess and never an
// out-of-memory kill. The timed model written for porcupine is the test
// oracle and draws the HTML report (WriteHTML).
//
// A Violation names the property, the history lines involved and, in plain
// words, what happened — and the faults recorded in the history that
// overlapped it.
//
// Index:
//   - check.go: Check, Options, Result, Violation, the property names.
//   - stream.go: CheckFile, CheckReader: checking without holding the history.
//   - events.go: a key's ops as events in time order.
//   - keycheck.go: one key's check: invariants, the fast paths, sweeps, the
//     fallback search.
//   - greedy.go: the greedy witness, the fast path for correct histories.
//   - projections.go, register.go: the cheap refutations (fences, holder,
//     data).
//   - sweep.go: the frontier sweeps, exact and relaxed.
//   - search.go: the depth-first search.
//   - invariants.go: the three fast properties.
//   - stale.go: stale-write.
//   - explain.go: the stories told about non-linearizable keys.
//   - faults.go: the faults a violation's story names.
//   - budget.go: the time and memory budget.
//   - html.go: WriteHTML.
package checker
