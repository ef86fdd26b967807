// Package runprop judges the run properties: what a lease run must do that
// its history alone cannot show, judged on the run's record (package
// runrecord: its belief and stop spans, its trace, its liveness
// measurements, the scenario's numbers; the simulator's Result hands one
// over with sim.Record). Every run of every driver — leasecheck run
// (through package campaign), the property tests, explore — is judged for
// all of them.
//
//   - exclusive-belief: no two holders believe they hold the lease at once
//     (a holder-side bug that only stretches a belief is invisible in the
//     history when the storage re-checks writes), except where the holder of
//     the older grant could not know better: while it is paused or frozen,
//     for as long as its clock stood still, or when it was told a smaller
//     drift bound than a drift that happened — never after it was told it
//     lost the lease (a refused renew, write or release under its fence):
//     those excuses are for not knowing (belief.go, with the article's
//     sentences). Where the run declares its client's belief advisory
//     (runrecord.Run.AdvisoryBelief: vclient's client-go elector) and the
//     history is in fenced storage, an overlap is a warning, not a
//     violation, unless a write its older holder sent under its fence was
//     accepted after a newer fence's (the fence failed);
//   - liveness-recovery: after the lease's holder crashes, another acquires
//     within TTL + the clock bound + its retry interval; and a crash is
//     never left unrecovered once every fault has ended;
//   - liveness-handoff: after a release (or a holder that stops without
//     one), the next waiter acquires within a retry interval and a round
//     trip, without waiting out the TTL;
//   - liveness-renewal: where every holder's renewal is answered well
//     inside its deadline, renewals keep the lease (no flapping).
//
// Each property applies only to the runs where a correct implementation
// must keep it (Applies; LivenessApplies, RenewalApplies say exactly when);
// Judge returns a Finding per violation, with a story in plain words, its
// history lines and the 1-based trace lines that show it; JudgeWarned
// returns the warnings too, apart (package campaign counts and tells
// them: Outcome.Warnings, Summary.Warnings).
//
// Index: runprop.go (the names, Finding, Judge, the liveness properties),
// belief.go (exclusive-belief and its exception).
package runprop
