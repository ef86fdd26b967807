// Package ctrlruntime runs a controller-runtime manager
// (sigs.k8s.io/controller-runtime, unmodified) with leader election on, in
// virtual time (package vclient), against k8slease's in-process API
// server, and sweeps seeds over it with k8slease's timings and fault
// profiles: the second Kubernetes client leasecheck supports, beside
// client-go's LeaderElector (package k8slease).
//
// Manager is the user's program: manager.New with LeaderElection on and
// the rest of leader election at controller-runtime's defaults — the
// "leases" resource lock, the hostname_uuid identity, the event recorder
// (its "became leader" and "stopped leading" Events are accepted by the
// API server) — metrics and health probes off (a bubble has no listening
// port), the three timing parameters from the scenario, and one Runnable
// that needs leader election doing the leader's work (k8ssweep.Work). The
// candidate's belief is the manager's own word: the Runnable starts when
// the manager is elected (Elected() closes with it) and its context ends
// when the manager stops; a manager that lost its lease returns from Start
// and a new one is built, as a restarted pod would.
//
// Identity. controller-runtime draws its identity's UUID from
// github.com/google/uuid's source; the manager is built inside
// k8slease.SeedUUIDs, which points that source at the candidate's own
// seeded one, so a replay elects the same identities. The API server a
// sweep runs against takes the holder string a manager writes for its
// candidate (k8ssweep.Holders, k8slease's default), so the history speaks
// of h1, h2 while every manager sees the Lease it wrote; the hostname part
// is the machine's, as controller-runtime takes it, and reaches no
// history.
//
// Unfenced (Unfenced), under pauses, a manager writes after its Lease went
// to another: the zombie write. Fenced (Fenced), each write presents the
// resourceVersion of the Lease write that made its manager the holder,
// learned from the API server's answers through the manager's rest.Config
// (k8slease.TokenTransport), and the resource refuses a lower one: clean.
//
//	go test ./internal/ctrlruntime -run TestNoFaultsClean -seeds 1000
//	go test ./internal/ctrlruntime -run TestZombieWrite -v -save DIR
//	go test ./internal/ctrlruntime -run TestFencedClean -seeds 10000
//	go test ./internal/ctrlruntime -run 'TestReplay$' -scenario DIR/seed-N.scenario.json
//	go test ./internal/ctrlruntime -run TestDeterministic -seeds 40
//	go test ./internal/ctrlruntime -run TestPauseSweep -seeds 10000 [-fenced]
//
// Its sweeps go through k8slease.Sweep, the entry a user's module calls,
// and so take its flags (-seeds, -save, -scenario).
//
// Index: manager.go (Manager, the leader's Runnable), sweep.go (Target,
// Generator).
package ctrlruntime
