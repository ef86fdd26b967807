// Package vclient runs users' real client code — goroutines, timers,
// retries, callbacks, unmodified — in virtual time, and judges it with
// leasecheck's checker and run properties (docs/design.md §11).
//
// A run is one testing/synctest bubble holding the candidates (each an
// incarnation of the user's Client), an in-process lease Server the
// clients reach through their own library over HTTP (Candidate.Transport
// is the http.RoundTripper to point it at), a resource the leader writes
// to (Candidate.Write), and the fault injector. The bubble's clock jumps
// ahead whenever every goroutine is blocked, so an hour of leases takes
// milliseconds. A bubble needs a *testing.T: sweeps run as go test.
//
// Replay. Requests are not served when their goroutine happens to run:
// the harness serves them one at a time, at whole milliseconds, once the
// bubble is idle (synctest.Wait), in an order drawn from the scenario's
// seed among those due, and delivers each answer the same way; a
// client's goroutines therefore run one answer at a time, and a client
// that draws random numbers (a retry jitter) draws them from the run's
// seeded source (RandUser); a client giving up on a request (its context
// ended) does so as a harness step too. Where a client's own timers fire
// at one instant — a poll's ticker and its deadline RenewDeadline apart,
// a context's deadline and the goroutine that sends under it — which runs
// first is the scheduler's choice; the harness decides the ties that reach
// it the one way: a request whose context had ended when the bubble went
// idle is never sent (it takes no number and draws nothing). Every random
// choice is keyed by the request it belongs to (its candidate, store and
// number), never by the order the goroutines ran in, and nothing is
// recorded after the horizon's shutdown. The same scenario gives the same
// history, trace and beliefs, byte for byte, under every fault (k8slease's
// TestDeterministic and TestReplayRate). What the harness cannot order is
// a tie between two of the client's own timers that does not go through
// it: a client whose work loop wakes on the very millisecond its term ends
// races itself (k8slease's work loop wakes half a millisecond off).
//
// Faults, from the scenario's plan (package faults), as virtual time
// passes: pause (strikes at the candidate's next write after At, between
// its leadership check and the write going out, or, with Peer
// "coordinator", at its next request to the lease server — in its renew
// loop, between a read of the lease and its update; everything it sends or
// is answered is held until it resumes, and it cannot notice its
// contexts ending meanwhile), delay (its round trips longer by Amount),
// partition from the coordinator (each request lost, or applied with its
// answer lost), coordinator-crash (the lease server answers 503), crash
// (its context cancelled; a restart after Duration under a new identity),
// owner-reuse (restarted under the same identity) and shutdown (a graceful
// shutdown: its context cancelled, and unlike a crash it stays the live
// incarnation until its Start returns, so what it sends on its way out —
// a release — is served and answered; restarted after Duration under the
// same identity once it has returned).
//
// A pause here is not a frozen process. It holds what crosses the harness
// — the candidate's requests and the answers to them — while the
// candidate's own goroutines and timers go on in virtual time: a renew
// loop whose deadline passes during the pause gives up then, and the
// release it sends on the way out is queued mid-pause and leaves at
// resume, before or after the next holder's grant as the plan's times
// fall. A process stopped by SIGSTOP runs none of that until it resumes,
// when everything due fires at once in whatever order its runtime picks;
// so a finding that rests on a paused candidate's timer firing during the
// pause is a property of this harness until a run with real processes
// confirms it (leasetest.RegisterClient runs a client as a process, with
// SIGSTOP for a pause: docs/holding-libraries.md).
//
// Recording. The lease server says what each request did to the lease
// (an acquire, renew or release, with its outcome), the harness adds who
// sent it when, when it was applied and when the answer arrived (none: the
// client gave up, or crashed); writes are recorded at the resource. Beside
// that view of the clients', the stores keep their own log (a sweep's
// Outcome.Store): every op applied, in the order applied, with
// the outcome the store gave, answered at the instant it was applied —
// so a write the store applied counts as applied, whatever became of its
// client's context. Target has both judged; a violation says which record
// it comes from. The lease server's first error answer (with the request's
// content type) goes with them: a sweep that exercised nothing says
// it (the summary's Unexercised). The
// history is history format v1 in exact mode with fault records, fence-less
// where the client grants no token (Options.Fences). The candidates'
// beliefs (Candidate.Leading and Stopped, from the client's own callbacks)
// and the pauses go into a simulator-shaped result, so the
// run properties judge them: exclusive-belief, liveness. A client whose
// library promises no end of its belief before the lease can move
// (client-go's) declares it Options.AdvisoryBelief: with fenced writes, an
// overlap of two beliefs that no accepted stale write came of is then a
// warning, not a violation (package runprop). Options.FenceUnchecked plants
// a bug in the fenced resource (it compares no fences), for the tests
// that show what the fence is for.
//
// Judging, shrinking and saving are leasecheck's own: Target is a
// target of its campaigns, so the house's seed loop sweeps seeds over it, shrinks
// its failures with the scenario shrinker and saves them (scenario,
// history, timeline, story, trace, replay command). The scenarios, the
// result and the judge are the house's; what a user writes is a Client
// (and, for a lease service of its own, a Server and the Options), and
// vclient/k8slease's Sweep and ReplayFile run it.
//
// Index: world.go (Server, Client, RandUser, Options, the harness loop and
// the faults), candidate.go (Candidate: Transport, Write, Leading,
// Stopped; Response), clock.go (Clock: a candidate's clock faults),
// record.go (the history, the stores' log, the result, and the feed of
// the recovery and handoff measurements), target.go
// (Target), names.go (Process and WorkItem: a candidate's part of the
// scenario; the deprecated aliases). Kinds lists
// the fault kinds injected; a scenario with another is refused. The
// harness's own tests (harness_test.go) drive a tiny HTTP lease client and
// server of their own (toy_test.go), independent of client-go: ordering,
// each fault's effect, the history, shrinking a planted failure.
// Package k8slease is the first client, client-go's LeaderElector;
// examples/httplease shows the entry point for one of your own.
package vclient
