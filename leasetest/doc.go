// Package leasetest is a conformance suite for lease backends, in the
// manner of testing/fstest.TestFS and golang.org/x/net/nettest.TestConn:
// give it a Factory that returns a fresh backend (and a stop function), and
// it checks that the backend keeps impl/backend's adapter contract — every
// op in every lease state answered as docs/specification.md §1 says.
//
//	func TestMyLease(t *testing.T) {
//		leasetest.Run(t, func() (backend.Backend, func(), error) {
//			b, err := mylease.Dial(addr)
//			return b, func() { b.Close() }, err
//		}, leasetest.Options{Info: mylease.Info()})
//	}
//
// Run runs every property as a named subtest (t.Run("Expiry", ...)), in
// parallel, each on its own backend from the factory and its own key;
// Evaluate returns the same as a Result per property, and Check as one
// error, outside `go test`. Each property walks a key through the states of
// the contract, with the requests a well-behaved holder sends and those it
// never would — renews, releases and writes by non-holders with no fence, a
// stale, the current and a future one; the live holder's second acquire;
// repeated requests; a holder paused past its TTL — and checks every
// answer; it measures when each kind of grant and renewal really expires;
// and it records the whole exchange as a history that the checker (package
// checker) validates and judges for linearizability and the fencing
// invariants.
//
// What applies. Options.Info says what the backend has. Most lock libraries
// have no fencing token and write to a plain key: their Info says so
// (backend.NoFences, backend.UncheckedWrites; neither has a default, and an
// Info that leaves one undeclared is refused). The properties that presuppose
// fences or fenced writes (FenceIncreases, StaleFence, WriteAfterExpiry) are
// then skipped with the reason, the fence and write parts of the others are
// noted as not checked, and the missing protection is reported once, by
// Zombie: "writes are not fenced: a holder paused past its TTL wrote after
// the lease moved on", with that history. A caller who knows lists it in
// Options.Expect.
//
// Explaining itself. A failure line reads `Renew(B, fence 3) = ok, want
// refused (not-holder): A holds the lease (fence 3); B never did
// [renew-not-holder]`, the bracket naming the contract's rule. Each
// subtest's report is one block — failures, the checker's violations,
// injected faults, checks that could not be judged and why — so parallel
// subtests never interleave. Options.Out (or LEASETEST_OUT=DIR) saves every
// property's history (format v1, ready for `leasecheck check`) and report
// as files; without it a failure prints its history. A history that is not
// valid v1 is reported as such and never judged or printed.
//
// The suite is honest in one direction: it raises no false alarm on a
// backend that keeps the contract within the uncertainty it declares. Its
// timing checks use the checker's own windows — the coordinator's clock at
// `at`, or anywhere in [call − u, return + u] with u = Info.Uncertainty,
// applied on both sides of every op — so a scripted check never fails a
// history the checker accepts; where the windows cannot decide, the check
// is noted as not judged. It may miss bugs: a handful of scripted sequences
// and one short randomized workload cannot try every interleaving;
// `leasecheck verify` and the simulator search further. Timing: every
// property waits a few TTLs, so a short TTL (Options.TTL) keeps the suite
// fast, and a TTL well above twice Info.Uncertainty keeps it sharp.
//
// The properties: Acquire, MutualExclusion, NoEarlyExpiry, Expiry, Renew,
// RenewAfterExpiry, Release, NotHolder, FenceIncreases, StaleFence,
// WriteAfterExpiry, Zombie, Linearizable, LossSignal.
//
// A library that renews by itself and signals a loss (backend.Holding,
// backend.Stopper) has its whole client stopped between its owner's
// scripted requests, its background renewals recorded, and its promise
// judged by LossSignal (loss-signal, within Info.LossLateness, under a
// pause and a partition; renew-rate, against Info.RenewInterval); a
// request of its rounds that gets no answer (its outcome unknown) is
// noted as not judged, never failed; docs/holding-libraries.md.
//
// Each owner's client can be a process of its own (RegisterClient,
// Processes, OpenClient): the program re-executed, a pause SIGSTOP, a
// crash SIGKILL, and what the judges excuse the time the kernel reported
// the process stopped. Run cannot make that the default for a Factory: a
// closure cannot be sent to another process, so a client runs as a
// process once its adapter is registered by name (RegisterClient) and the
// Factory opens it through OpenClient (or Processes) — verify does so for
// every backend it knows by name.
//
// Index: leasetest.go (Factory, Options, Run, Check, Evaluate, which
// properties apply), properties.go (the scripted properties),
// linearizable.go (the randomized workload with adversaries and duplicated
// requests), timing.go (the checker's windows, applied by the scripts),
// env.go (requests, expectations, failure lines), report.go (Result, the
// report, validation and judging, saved files), losssignal.go
// (LossSignal, renew-rate), process.go (clients as processes).
package leasetest
