// Package runprop judges the run properties: what a lease run must do that
// its history alone cannot show, judged on the simulator's result (its trace
// of beliefs, crashes and grants, and its liveness measurements).
//
//   - exclusive-belief: no two holders believe they hold the lease at once
//     (a holder-side bug that only stretches a belief is invisible in the
//     history when the storage re-checks writes);
//   - liveness-recovery: after the lease's holder crashes, another acquires
//     within TTL + the clock bound + its retry interval;
//   - liveness-handoff: after a release, the next waiter acquires within a
//     retry interval and a round trip, without waiting out the TTL;
//   - liveness-renewal: on a quiet network whose round trip is well below the
//     renew timeout, renewals keep the lease (no flapping).
//
// Each property applies only to the scenarios where a correct implementation
// must keep it (see each one's doc); Judge returns a Finding per violation,
// with a story in plain words, like the checker's properties.
//
// Index: runprop.go (the names, Finding, Judge).
package runprop
