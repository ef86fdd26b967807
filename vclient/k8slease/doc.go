// Package k8slease runs Kubernetes leader election — client-go's
// LeaderElector from k8s.io/client-go, unmodified, with
// resourcelock.LeaseLock — in virtual time (package vclient), against an
// in-process API server that enforces resourceVersion optimistic
// concurrency on every update (Server: Leases, ConfigMaps and Events, in
// protobuf or JSON as the client asks, with patches, deletes and watches;
// AcceptStale plants the fake clientset's missing check, JSONOnly a server
// a default clientset cannot write to), and sweeps seeds over the three timing
// parameters (Timings: client-go's 15 s / 10 s / 2 s, OpenShift's
// 137 s / 107 s / 26 s, 60 s / 15 s / 5 s, tight ones) and fault
// profiles (Profiles: none, latency within RenewDeadline, pauses at a
// write, pauses at any request, partitions, 409 conflicts, contention,
// clock, all), two to four candidates or up to seven.
//
// Elector is the user's program: the leader's work writes to a separate
// store, each write guarded by IsLeader(). Unfenced (Unfenced), a leader
// paused between that check and its write writes after the Lease moved
// on — the zombie write client-go's documentation warns of; the sweep
// finds it, shrinks and saves it, and the saved story tells it in
// LeaseDuration / RenewDeadline / OnStoppedLeading terms. Fenced
// (Fenced), every write carries the resourceVersion of the Lease update
// that made its writer leader, and the store refuses a lower one: clean
// under every fault, but for client-go's own belief outliving a slow
// renewal's answer by up to RetryPeriod + RenewDeadline, which no token
// changes — a warning where the writes are fenced (every target declares
// the belief advisory), a violation where they are not. Naive (Naive,
// Elector.WriteWithTermContext) writes under the context OnStartedLeading
// gave it, as most controllers do: client-go cancels it as a paused leader
// resumes, the client gives up on the held write, the API server applies
// it — only the stores' log shows it, and the sweep judges that too.
// UseJitter is the door to deterministic jitter for a client of your own,
// UseClock to its clock faults.
//
// Your own controller. Sweep is the one sweep entry: it takes your
// candidate program (SweepConfig.Client, a vclient.Client) and reads the
// go test flags this package registers — -seeds, -profile, -save, and
// -scenario to replay one saved file — so your module runs
// go test -run TestMyElection -seeds 10000 -profile pause-any.
// SweepConfig.Timing declares the parameters your controller runs with
// when it reads none of the scenario's: no seed and no shrinker's edit
// changes them. Regressions replays your package's testdata/regressions.
// A saved failure's story is told from what ran. user_test.go is the
// worked example, in package k8slease_test; this package's own sweeps and
// package ctrlruntime's are users of the same entry.
//
// With ReleaseOnCancel (Release, ReleaseFenced; their sweeps add a
// graceful step-down, faults.Shutdown, to every seed) the elector clears
// the Lease when its renew loop ends. Under pauses client-go v0.34–v0.37
// then clears a new leader's Lease: tryRelease's Lock.Get refreshes the
// resourceVersion the Update sends while IsLeader() reads the stale
// observedRecord (docs/findings/client-go-release-clears-new-leader.md).
// The saved story tells it; the patched variants
// (ReleasePatched, ReleaseFencedPatched) run a copy of the package with
// that one check fixed, linked into this package's tests only
// (internal/clientgopatched, patched_test.go).
//
// Sweeps run as go test (a synctest bubble needs a *testing.T):
//
//	go test ./vclient/k8slease -run TestNoFaultsClean -seeds 10000
//	go test ./vclient/k8slease -run TestLatencyClean -seeds 10000
//	go test ./vclient/k8slease -run TestFencedClean -seeds 10000
//	go test ./vclient/k8slease -run TestZombieWrite -save DIR
//	go test ./vclient/k8slease -run TestNaiveWriteCaught -seeds 1000
//	go test ./vclient/k8slease -run 'TestReplay$' -scenario DIR/seed-N.scenario.json
//	go test ./vclient/k8slease -run TestReplayRate -failures 100
//	go test ./vclient/k8slease -run '^$' -bench BenchmarkElection
//	go test ./vclient/k8slease -run TestReleaseClearsNewLeader -v
//	go test ./vclient/k8slease -run TestReleaseSweep -seeds 10000
//	go test ./vclient/k8slease -run TestStepDownClean -seeds 10000
//	go test ./vclient/k8slease -run 'TestPauseAnywhere|TestPartitionsProfile|TestConflictsProfile|TestReplicas'
//	go test ./vclient/k8slease -run TestMyController -v
//
// Index: server.go (the Lease API server), elector.go (Elector, the
// fenced token), tokens.go (Tokens: the tokens users make), work.go (Work,
// the leader's work loop, shared with package ctrlruntime),
// tokentransport.go (TokenTransport, the fenced token read at a client's
// transport), jitter.go (UseJitter: client-go's jitter pointed at the run's
// seeded source), sweep.go (Target, Timings, Profiles, Generator),
// story.go (FindZombieWrite, and the account of a failure in Kubernetes
// terms that the saved story tells: electorNotes, userNotes), user.go (Sweep, SweepConfig, Regressions,
// ReplayFile, the go test flags), names.go (Outcome, SweepTarget,
// CampaignConfig: internal/campaign's types a sweep of your own names).
package k8slease
