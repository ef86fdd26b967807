// Package model is leasecheck's vocabulary: an operation (Op) on a lease —
// acquire, renew, release, write, read — and a History of them, with the
// streaming Reader and the Writer for history format v1 (docs/specification.md §4), the
// public interchange contract that users record from their own systems.
//
// The format's rules are enforced in one place: the Reader applies them to
// every line it decodes, and Validate applies the same rules, with the same
// messages, to a history built in memory. A rule broken is a *ParseError
// naming the line and the reason.
//
// The timed lease model that judges a history (docs/specification.md §3) is not part of
// this API: package checker is its public face.
//
// Index:
//   - op.go: Op, Kind, Semantics, FenceOrder, Header, History, FaultRecord.
//   - history_read.go: Reader, ReadHistory, ParseError.
//   - jsonfast.go: the allocation-free line decoder and its encoding/json fallback.
//   - validate.go: the value rules, shared by the Reader and Validate.
//   - history_write.go: Writer, WriteHistory.
package model
