// Package model is leasecheck's vocabulary and its specification.
//
// The vocabulary: an operation (Op) on a lease — acquire, renew, release,
// write, read — and a History of them, with the streaming Reader and the
// Writer for history format v1 (DESIGN.md §4), the public interchange
// contract that users record from their own systems.
//
// The specification: the lease semantics of reference/lease.py (DESIGN.md
// §1), for the coordinator alone ("seed") or with a separate fenced resource
// ("fenced-storage"), extended with time: the coordinator's clock at an
// operation is either known ("exact" mode, the op's `at`) or only bounded by
// the history's clock uncertainty ("interval" mode). State and Step are that
// timed model (DESIGN.md §3); it over-approximates inside the uncertainty
// window, so it may accept a history that is wrong only there, but never
// rejects a right one.
//
// Index:
//   - op.go: Op, Kind, Semantics, Header, History.
//   - history_read.go, history_write.go: format v1 in and out.
//   - timed.go: State, Input, Step, StepApplied — the timed semantics.
//   - compile.go: Compile interns a history and splits it by key.
//   - porcupine.go: the same model for porcupine (HTML reports, test oracle).
package model
