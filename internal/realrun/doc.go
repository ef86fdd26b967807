// Package realrun is the real runner (docs/design.md §5, "Runner, real"): a
// scenario run against a real backend by goroutines on the monotonic clock,
// with its faults applied for real, recorded as a history for the checker.
//
// # One protocol, two drivers
//
// The processes of a real run are the machines the simulator runs
// (internal/impl/holder's Holder and Reader, or a planted-bug switch on them); the
// runner is a second driver of them, as internal/sim/world.go is the first (proc.go).
// Each process is a goroutine that ticks its machine when the machine's own
// clock reaches the WakeAt it asked for, hands it every reply, and sends its
// requests through the Backend one at a time — each call in a goroutine of
// its own, so the machine is still ticked (and gives up on the call, by its
// own timeout) while it waits. The machine's Ready().Believes is recorded as
// belief intervals (Result.Beliefs). Its clock is faultsupport.Clock over
// the run's true time in µs, the same code that gives simulated nodes their
// clocks.
//
// A scenario (scenario.Scenario) is the only input: RunScenario scales its
// ms onto real time so that its TTL becomes a real TTL the backend can keep
// (AutoTTL: at least MinTTL, the backend's minimum — etcd: whole seconds,
// at least 2 s — and ten times its clock uncertainty, so that a write late by
// a fraction of a TTL is provably late), and maps its fault plan onto real
// faults. Run, the generated workload `leasecheck verify` uses by default,
// is Workload(cfg) run through RunScenario with Retarget set: each holder
// fault strikes whichever holder holds the lease when it falls due (at its
// next write for a pause and a freeze). So a shrunk
// simulator counterexample replays against etcd, Redis or PostgreSQL
// (`leasecheck verify --scenario FILE`), and a failing real run saves the
// scenario as run.
//
// The scenario's network is the real network: its minimum delay is added
// to every request and reply; its jitter, loss and duplication are not
// reproduced (TCP retransmits and duplicates nothing). Under fenced-storage
// semantics the backend is both coordinator and store, so the history's
// semantics are seed.
//
// # The faults, what each does and to whom
//
// Every injection is a model.FaultRecord in the history (History.Faults, µs
// on the history's timeline). A fault that cannot be applied in full is
// recorded Partial, says what was skipped, and is counted in
// Result.Partial, never in Result.Faults.
//
//   - pause (holder): a process pause, a GC stop-the-world. It strikes at
//     the holder's next write, after its re-check and before its send: the
//     write is held and the holder's proxy frozen (a stopped process sends
//     nothing, a background keepalive would stop too), its clocks run on;
//     without Target.Addr there is no proxy, and what was in flight goes on
//     (the fault's record says which).
//     A client that is a process of its own (internal/procclient) is
//     stopped by SIGSTOP instead, its proxy left alone (its sockets go on as
//     the kernel's do), and the pause's record spans the kernel's reports of
//     it stopped and running; such a client's crash is SIGKILL.
//     When it resumes, the held write leaves first — the zombie write only
//     a fenced write can refuse (the article's GC pause; Kleppmann's first
//     argument for fencing tokens). If it writes nothing within a TTL, it is
//     paused at its next step.
//   - freeze (holder): a suspended machine. The process stops and its
//     monotonic clock stops with it — as Linux's CLOCK_MONOTONIC, which Go's
//     monotonic readings use, does not count a suspension (CLOCK_BOOTTIME
//     does). What was in flight travels on. On resume its clock is behind
//     by the freeze, so even the reference holder believes its lease that
//     much longer and writes after it lapsed: caught against an unfenced
//     backend (etcd-mutex), refused by a fenced one. This is the dangerous
//     direction of a holder's clock: slow or stopped.
//     freeze (resource): the backend is the store, so its server is stopped
//     (SIGSTOP) for the duration, where the harness controls it.
//   - clock-drift (holder): its clocks run Amount ppm fast or slow from then
//     on, within the scenario's declared bound ρ (the scenario format allows
//     no more). The holder's deadline, TTL·(1−2ρ) minus a margin from the
//     send of the request that granted the lease, absorbs it: a fast clock
//     only ends its belief sooner, a slow one within ρ is covered. It tests
//     that claim; it makes no holder write late. (The runner's old drift of
//     40% speed did not either: the holder renewed every TTL/3 by that clock,
//     still before the lease ran out. A clock slower than ρ can bite a
//     correct holder only past a third of its speed; its limit is the freeze.)
//   - clock-step (holder): its wall clock jumps by Amount; the monotonic
//     clock does not. Harmless to the reference, which never reads the wall
//     clock (docs/design.md §5, Clocks). A holder that measures its lease on the
//     wall clock (holder.BugTrustWallClock, `verify --mutant
//     trust-local-clock`) believes |Amount| longer after a step back and
//     writes after its lease lapsed: caught against an unfenced backend,
//     refused by fenced ones. The article's remedy is not to trust any one
//     party's local clock; Kleppmann's: fencing tokens.
//   - clock-step, clock-offset (coordinator): the coordinator's lease clock
//     moves, which expires a live lease early when it jumps forward
//     (Kleppmann's Redlock case: a lock node's clock jumps, two clients both
//     hold the lock). Applied only where the harness owns that clock
//     (Target.Clock: an in-process coordinator on a SteppableClock). A real
//     server's clock belongs to its host and is not stepped; the fault is
//     recorded as not applied. (Redis's TIME and PostgreSQL's
//     clock_timestamp() read the host's wall clock, so their adapters would
//     feel a real step; etcd's lessor runs on the monotonic clock.)
//   - clock-offset (holder): its clocks are Amount off from the start:
//     harmless to a holder that measures its lease relatively.
//   - drop-heartbeats: its renewals are lost before they leave for the
//     window; the holder times them out (the iron rule: it stops writing).
//   - renew-death, overrun, double-release: through the machine's optional
//     interfaces (machine.RenewKiller, Overrunner, DoubleReleaser); a
//     machine without one gets the fault recorded as not applied.
//   - delay, partition: through the holder's TCP proxy (tcpproxy: every chunk
//     delivered that much late, both legs; blackholed, then its connections
//     reset). They need
//     Target.Addr. A partition from the resource cuts the whole connection.
//   - the network faults (faults.NetworkKinds: blackhole, request-loss,
//     reply-loss, request-delay, reply-delay, reorder, duplicate): on the
//     holder's proxies, per leg (netfault.go; tcpproxy's Lose, SetLegDelay,
//     SetJitter, Duplicate). Faults of one kind may overlap: what the
//     proxies do is recomputed from all those in force. When one is lifted
//     its record is rewritten from the proxies' own record: start and end
//     are when the sockets took and let go of it (later than planned when
//     the holder's loop was held up), and the detail what was dropped,
//     delayed or sent again, on which leg. A duplicate on a protocol the
//     proxy does not frame (anything but RESP) is recorded as not applied.
//     They need Target.Addr.
//   - crash, owner-reuse: the incarnation vanishes without releasing (its
//     call in flight abandoned, its proxy blackholed) and, after Duration, a
//     new one starts with a new connection as process h1#2 — under a new
//     owner name for a crash, the dead one's for owner-reuse.
//   - coordinator-crash: the server is killed (SIGKILL) and restarted on its
//     data after Duration where the harness started it and it is a
//     Restarter. A server it can only stop is SIGSTOPped and resumed:
//     requests are delayed, not lost, so that is recorded Partial. Without
//     a controlled server the fault is not applicable. A backend whose
//     server restores leases with a fresh TTL after a restart
//     (Info.LeasesRestart: ZooKeeper, etcd) gets the run's clock
//     uncertainty widened by the outage, a TTL and its RestartGrace, and
//     the log says so.
//   - the cluster faults (faults.ClusterKinds: member-isolate,
//     member-bridge, peer-delay, member-pause, member-crash), on a
//     Target.Cluster the harness started: applied one at a time at the
//     member named, or the leader or a follower as the servers' own status
//     says when the fault falls due (cluster.go); the next waits until the
//     cluster is whole again (Rejoiner: every member synced and serving),
//     for a member still syncing is a fault still in progress. Each record names the
//     member hit and who led before and after; LeaderRecord records say who
//     led when. A leader change on a backend that refreshes leases
//     (Info.LeasesRestart) widens the run's expiry lateness — one-sided:
//     late freeing is allowed, an early grant is not — by the span from
//     when the trouble began (the last fault that hit the leader, else
//     when the old leader was last seen), a TTL and RestartGrace. On a target that is
//     not a cluster they are recorded as not applied. Target.Addr lists the
//     members' addresses; each client gets a proxy in front of each.
//
// # A backend that dies
//
// A watchdog ends the run when no client has had an answer for max(5 s,
// TTL) during the workload, outside the server faults the harness injects
// itself: RunScenario then returns an error that says so (ErrStopped) and,
// with it, the partial history recorded so far. Clients are closed in
// parallel, and the cleanup gets a short deadline, so a dead backend ends
// the run within seconds.
//
// # Time and the history
//
// Recorder (recorder.go) turns requests into history lines: call and
// return on the client's monotonic clock in µs, no return when the outcome
// is unknown, and — for backends that report their clock in the same atomic
// step — `at` mapped onto the client's timeline by an offset calibrated at
// the start and re-measured at the end; the header's clock_uncertainty is
// the calibration error plus the offset's movement plus 1 ms (or the
// backend's declared Uncertainty, e.g. etcd's late expiry).
//
// Index: run.go (Target, Config, Result, Run, Applicable), workload.go
// (Workload), replay.go (Options, RunScenario, AutoTTL, the server faults),
// proc.go (the driver of one process), recorder.go, proxygroup.go (a
// client's proxies: internal/tcpproxy, one per address of the target),
// netfault.go (the network faults on them, and their records),
// server.go (Server, Restarter: what a controlled server offers), cluster.go
// (Cluster, the cluster faults, the leader records). It records and does
// not judge: campaign's judge, verify and serverstest.RunAndCheck check
// what it recorded. testdata/ holds the clock scenarios that bite;
// internal/servers starts real servers for verify and the tests.
package realrun
