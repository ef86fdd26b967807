// Package verify is `leasecheck verify` for anyone's backend: the whole
// command — its flags, the real faults, the progress bar, the text and
// JSON summary, failing rounds shrunk and saved with their timeline pages
// and stories, the replay line, the exit statuses — behind one entry
// point, so that a user's own main (or test) that passes its backend gets
// exactly what `leasecheck verify` does, by the same code path
// (docs/design.md §5: cmd/ holds flags and printing only; here, a table of
// backends).
//
//	func main() {
//		verify.Main(verify.Backend{Name: "mylock", Schemes: []string{"redis"},
//			Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
//				addr := strings.TrimPrefix(spec, "redis://")
//				return verify.Connect(mylock.Info(), addr, func(ctx context.Context, addr string) (backend.Backend, error) {
//					return mylock.Open(ctx, addr, prefix)
//				}), nil
//			}})
//	}
//
// and `mylock-verify --backend redis://127.0.0.1:6379 --seeds 20` runs it.
// cmd/leasecheck/verify.go is the same call with the built-in table
// (etcd, etcd-mutex, redis, postgres, zookeeper, etcd34, the clusters
// etcd-cluster, etcd-cluster-mutex and zookeeper-ensemble, and their URL
// forms; on a cluster target, "--faults all" adds faults.ClusterKinds, and
// on any target that gives the server's address faults.NetworkKinds but
// duplicate, the faults at each client's socket); examples/redislock/cmd/redislock-verify is a third-party lock
// library's.
//
// # What a run is
//
// Each round is a scenario — the generated workload of its seed (three
// holders and a reader, one fault of each kind), or the --scenario file
// replayed — run for real against the backend by leasecheck's real runner,
// on a key of its own under the run's unique prefix (removed after every
// round). Rounds run one at a time and are judged, counted and summed as
// `leasecheck run`'s seeds are, by the same code: the six history
// properties (a real run has no simulator result, so no run properties;
// a library that signals its own loss has its beliefs judged apart:
// BeliefVerdict), the summary with verify's own fields beside it
// (Summary), the exit status computed one way.
//
// A failing round is shrunk for --shrink-for — every candidate is a real
// run, so the budget is time, and the smallest scenario that still failed
// the same way when it ran out is kept — and saved: the scenario as run,
// with "implementation": "backend:SPEC" (no password) and its fault kinds
// and expect; the history with its fault records; the timeline page with
// the holders' beliefs; the Markdown story; and the line that replays it
// (`leasecheck verify --backend SPEC --ttl T --scenario FILE`; for a
// program of yours, its own name, or `go run PKG` when go run built it). A
// real round does not replay byte for byte, so a failure saved again —
// the same seeds run again, or a replay failing again — is saved beside
// the first as NAME-2, NAME-3, never refused.
//
// A backend that stops answering mid-round ends the run within seconds
// (five seconds more after a fault between a cluster's members) with exit
// 2, and the partial history is saved beside the failures. Credentials
// are never printed: specs are shown with their password replaced, and
// errors with it removed.
//
// # What a backend hands the harness
//
// Open returns an Opened whose Target is a RunTarget: the backend's Info,
// its address and how to connect a client (Connect fills in these three),
// and, for a server or cluster Open started itself, the Server, Cluster
// and ClockStepper through which the harness strikes the server faults,
// the faults between members and the coordinator's clock faults
// (cmd/leasecheck/verify.go does so for the built-in backends). --json
// prints a Summary.
//
// # Where the clients run
//
// Each owner's client runs in a child process of the program by default
// (--clients process): the program re-executed, which Main and
// Command.Run serve before they parse a flag (ServeClients; a test binary
// calls it from init or TestMain). There the backend's Open is called
// again, with InClientProcess reporting the parent's server address, to
// build the one client — it must start nothing there. A pause is then
// SIGSTOP and SIGCONT, a crash SIGKILL, and the kernel's record of the
// stops is what the judges excuse; --clients in-process runs every client
// in the program's own process. The summary says which ran
// (ClientsSummary).
//
// # One round from your own test
//
// RunRound is one round without the command: a test of your own runs its
// backend (an Opened, e.g. from Connect) and gets the recorded history and
// each property's verdict back, to assert on or to save for `leasecheck
// check`:
//
//	r, err := verify.RunRound(ctx, verify.Connect(mylock.Info(), addr, open), verify.RoundOptions{Seed: 1})
//	if r.Check.Verdict("linearizable") != checker.Holds { ... }
//
// Index: command.go (Command, Main, the flags, the run), round.go
// (RunRound: one round, judged, for a test), backend.go
// (Backend, Opened, Connect, the registry's lookup, redacting specs),
// names.go (RunTarget, Server, Cluster, ClockStepper; the deprecated
// aliases), rerun.go (the command a replay line starts with), target.go (a real backend as the target of a campaign, the
// error of a round that could not finish), summary.go (Summary), beliefs.go
// (BeliefVerdict), failure.go (saving, telling and replaying failures),
// clients.go (--clients: ServeClients, InClientProcess, ClientsSummary).
package verify
