// Package k8slease sweeps a Kubernetes controller's leader election —
// client-go's LeaderElector from k8s.io/client-go, unmodified, or a
// controller of your own built on it — in virtual time (package vclient),
// against an in-process API server that enforces resourceVersion
// optimistic concurrency on every update (Leases, LeaseCandidates,
// ConfigMaps and Events,
// in protobuf or JSON as the client asks, with patches, deletes and
// watches). A sweep draws seeds over the three timing parameters
// (Timings: client-go's 15 s / 10 s / 2 s, OpenShift's 137 s / 107 s /
// 26 s, 60 s / 15 s / 5 s, tight ones; or your controller's own Timing)
// and a fault Profile ("none", "latency", "pause", "pause-any",
// "partition", "conflict", "contention", "clock", "all"), two to four
// candidates or up to seven.
//
// Sweep is the one entry: it takes your candidate program
// (SweepConfig.Client, a vclient.Client) and reads the go test flags this
// package registers under the prefix "k8slease." — -k8slease.seeds,
// -k8slease.profile, -k8slease.save, and -k8slease.scenario to replay one
// saved file — so your module runs
// go test -run TestMyElection -k8slease.seeds 10000 -k8slease.profile pause-any
// and may define a -seeds of its own. SweepConfig.OnSeed sees every
// seed's judged run (Outcome: its verdicts, the clients' view and the
// store's record, its trace on demand), FirstSeed starts later, and what
// a sweep returns (SweepResult: Summary, Failure, Saved) is in names your
// module can write.
// SweepConfig.Timing declares the parameters your controller runs with
// when it reads none of the scenario's (Parameters reads them from a
// Candidate): no seed and no shrinker's edit changes them. A failure is
// shrunk and saved with a story told in LeaseDuration / RenewDeadline /
// OnStoppedLeading terms (a zombie write: a leader paused between
// IsLeader() and its write, writing after the Lease moved on).
// Regressions replays your package's testdata/regressions;
// ReplayScenario replays one file and says what it showed.
//
// UseJitter points client-go's jitter at the run's seeded source, so a run
// replays exactly; SeedUUIDs seeds the UUID in an identity a client makes
// itself (controller-runtime's hostname_uuid), and the API server a sweep
// runs against takes whatever holder string a candidate writes for that
// candidate; UseClock hands a candidate's skewed clock to its elector (the
// "clock" profile). A controller that fences its writes takes
// its token from the Leases it is answered with: Tokens, wrapping the
// typed client given to its LeaseLock (TokenAcquired, TokenHeld,
// TokenTransitions), or TokenTransport, wrapping the client's transport
// where the lock is built out of reach (controller-runtime's manager).
// user_test.go is the worked example, in package k8slease_test.
//
// A controller that holds several Leases at once (shards) names them in
// SweepConfig.Leases and writes and believes under each through
// vclient.Candidate.Lease: each Lease is judged on its own key
// (shards_test.go). The API server serves LeaseCandidates and runs
// coordinated leader election's controller, so client-go's NewCandidate
// and a coordinated LeaderElector run unmodified (coordinated_test.go).
//
// A lease client that is not Kubernetes' is swept through the same door:
// SweepConfig.Client adapts it (a vclient.Client), SweepConfig.Server — or
// Options, with Fenced and Fences as its server grants them — is its own
// lease server, Timing its own parameters (LeaseDuration its TTL),
// Kinds the fault kinds to mix (pause, delay, crash, ...) where no
// Profile fits, and Want what the sweep must show. A sweep whose server
// is your own tells its failures' stories in lease terms (TTL, renewal,
// takeover, fence), not Kubernetes'; ReplayScenario and Regressions
// replay its saved files. examples/httplease is that template.
//
// leasecheck's own sweeps of client-go's LeaderElector (its program,
// elector, in this package; its implementations, profiles' draws, API server and
// work loop are leasecheck's own) find the zombie write unfenced,
// and clean runs fenced — but for client-go's own belief outliving a slow
// renewal's answer by up to RetryPeriod + RenewDeadline, a warning where
// the writes are fenced. With ReleaseOnCancel under pauses, client-go
// v0.34–v0.37 clears a new leader's Lease: tryRelease's Lock.Get
// refreshes the resourceVersion the Update sends while IsLeader() reads
// the stale observedRecord
// (docs/findings/client-go-release-clears-new-leader.md); the patched
// variants run client-go's own package with that one check changed at
// build time (make test-clientgo-patched: an overlay of the module
// cache's file and the clientgopatched tag), in this package's tests
// only. They run as go test (a synctest bubble needs a *testing.T):
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
//	go test ./vclient/k8slease -run TestReleaseOverlapToEnd -v
//	go test ./vclient/k8slease -run TestReleaseRealProcesses -realruns 30 -v
//	make test-clientgo-patched
//	go test ./vclient/k8slease -run TestReleaseSweep -seeds 10000
//	go test ./vclient/k8slease -run TestStepDownClean -seeds 10000
//	go test ./vclient/k8slease -run 'TestPauseAnywhere|TestPartitionsProfile|TestConflictsProfile|TestReplicas'
//	go test ./vclient/k8slease -run TestMyController -v
//	go test ./vclient/k8slease -run 'TestShards|TestCoordinated' -v
//
// Index: user.go (Sweep, SweepConfig, SweepResult, Regressions,
// ReplayScenario, the go test flags), sweep.go (Timing, Timings, Profile,
// Profiles; the targets of leasecheck's own sweeps), tokens.go (Tokens:
// the tokens users make), tokentransport.go (TokenTransport), jitter.go
// (UseJitter), uuids.go (SeedUUIDs), clock.go (UseClock), elector.go (elector, leasecheck's own
// program around client-go's elector), story.go (the account of a failure
// in Kubernetes terms that the saved story tells: electorNotes,
// userNotes), results.go (Outcome, Failure, Saved, Summary: what a sweep
// gives back, each seed to SweepConfig.OnSeed).
package k8slease
