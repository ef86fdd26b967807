// Package sim is leasecheck's deterministic world (docs/design.md §5–6): a
// single-threaded discrete-event loop over virtual integer time (1 tick =
// 1 ms) that runs a scenario against the lease implementation and records
// its history.
//
//   - Nodes are pure state machines: the coordinator and the resource
//     (machine.Coordinator, machine.Resource: requests in, replies out) and
//     the holders (machine.Holder: replies and timer ticks in, requests and
//     wake-up times out).
//     The reference ones are memstore and internal/impl/holder; Options plugs in
//     others (planted-bug mutants) without touching the loop.
//   - The network delays, loses, duplicates (answered from an at-most-once
//     cache), reorders and partitions messages.
//   - Every node has a clock (internal/faultsupport's Clock): an offset, a drift rate within the scenario's
//     rho, wall-clock steps forward and back, freeze and resume. A pause
//     stops a holder right after its next step that sends a write (between
//     its re-check and its send, the article's GC pause; after a TTL without
//     a write, at any step); a crash drops its volatile state; a restart starts a new
//     incarnation ("h1#2").
//   - Every nondeterministic choice goes through one Chooser: a seeded PCG
//     (the default, from the scenario's seed), rapid draws (NewRapid), or a
//     Picker that enumerates (the explorer's, a schedule's replay).
//     There are no goroutines, no wall clock and no map-order decisions;
//     every run is bounded by the scenario's horizon and event budget.
//
// Run returns a Result: the history v1 in exact mode (call and return in
// true time, at from the coordinator's lease clock, clock uncertainty from
// the fault plan), a trace of faults, grants and each holder's belief that
// it holds the lease, the liveness measurements, and a hash of everything
// for determinism checks.
//
// A World is a run in progress: Run drives it to the end; the explorer
// (package explore) steps it move by move (Moves, Do), copies it (Clone)
// and digests it (StateHash). With a Picker chooser a run is enumerable:
// every choice is a labelled choice point, the moves of a step included,
// and a scenario's Schedule replays one explored path exactly.
//
// Index, one file per concern: world.go (Run, NewWorld, Options, the world's
// state and setup), loop.go (the event loop, moves, a holder's step),
// network.go (loss, delay, duplication, partitions, at-most-once servers),
// inject.go (fault injection, crashes, restarts, faults struck by moves),
// clients.go (the adversarial clients), history.go (history and trace
// recording, Result), liveness.go (beliefs, stops and the liveness
// measurements), hash.go (the trace hash), state.go (Clone, StateHash,
// HashValue), monitor.go (the explorer's hook), servers.go (the reference
// machines), chooser.go (Chooser, Picker, the schedule's replay),
// queue.go, result.go (Result, Stats, Belief, Stop).
package sim
