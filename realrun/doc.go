// Package realrun is the real runner (DESIGN.md §5, "Runner, real"): the
// lease workload against a real backend, driven by goroutines on the
// monotonic clock, with faults applied for real, recorded as a history for
// the checker.
//
// A run has three holders and a reader, each a sequential process of the
// history with its own client connection (through its own TCP proxy when
// the target has an address). The holders follow the article's protocol
// (holder.go). Faults (plan.go), one injection per requested kind at a
// time drawn from the seed in the first half of the run:
//
//   - pause: the lease holder stops between its deadline check and its
//     write for 2.5–3 TTLs; its connection is frozen too (a stopped
//     process), so a background keepalive would stop as well;
//   - crash: the holder vanishes without releasing for 1.5 TTL and comes
//     back under a new owner name;
//   - clock-offset: a holder's clock is 1–2 TTLs off (harmless to a holder
//     that measures its lease relatively, as this one does);
//   - clock-drift: a holder's clock runs at 40% speed for 2 TTLs, so its
//     local deadline is wrong and it writes after its lease ran out;
//   - drop-heartbeats: a holder's renewals are lost for a TTL;
//   - delay: TTL/10 added to every chunk on a holder's connection for a TTL;
//   - partition: a holder's connection blackholed for a TTL, then reset;
//   - coordinator-crash: the server SIGSTOPped for 0.75 TTL and resumed,
//     then, two TTLs later, killed (SIGKILL) and restarted on its data
//     after 0.5 TTL — only when the harness started it (Target.Server).
//     A backend whose server restores leases with a fresh TTL after a
//     restart (Info.LeasesRestart: ZooKeeper, etcd) gets the run's clock
//     uncertainty widened by the outage, a TTL and its RestartGrace.
//
// Recorder (recorder.go) turns requests into history lines: call and
// return on the client's monotonic clock, no return when the outcome is
// unknown, and — for backends that report their clock in the same atomic
// step — `at` mapped onto the client's timeline by an offset calibrated at
// the start and re-measured at the end; the header's clock_uncertainty is
// the calibration error plus the offset's movement plus 1 ms (or the
// backend's declared Uncertainty, e.g. etcd's late expiry).
//
// Index: run.go (Target, Config, Run), holder.go, plan.go, recorder.go,
// proxy.go (Proxy), server.go (Server, Restarter: what a controlled server offers),
// check.go (RunAndCheck). internal/servers starts real servers for tests.
package realrun
