// Package timed is the timed lease model that package checker decides
// histories against (docs/specification.md §3): the lease semantics of
// reference/lease.py (docs/specification.md §1), for the coordinator alone ("seed") or
// with a separate fenced resource ("fenced-storage"), extended with time:
// the coordinator's clock at an operation is either known ("exact" mode,
// the op's `at`) or only bounded by the history's clock uncertainty
// ("interval" mode).
//
// State and Step are that model. It over-approximates inside the
// uncertainty window, so it may accept a history that is wrong only there,
// but never rejects a right one. It is internal: its shape follows the
// checker's search, and third parties hold on to package checker instead.
//
// Index:
//   - model.go: State, Input, Step, StepApplied, StepAnyOutcome.
//   - compile.go: Compile interns a history and splits it by key.
//   - verify.go: VerifyLinearization, the judge of a proposed order (the
//     checker's fast path is never its own judge).
//   - porcupine.go: the same model for porcupine (the HTML report, and the
//     independent oracle the checker is tested against).
package timed
