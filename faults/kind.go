package faults

import (
	"fmt"
	"slices"
	"strings"
)

// Kind names one failure mode. Its string is stable: it appears in scenario
// files, summaries and JSON output.
type Kind string

// The fault vocabulary. Targets are holder names unless noted.
const (
	// Pause is a process pause (a GC stop-the-world): the holder handles
	// nothing for Duration; its clocks keep running; messages it produced just
	// before the pause leave only when it resumes. It strikes at the holder's
	// next write, between the re-check and the send.
	Pause Kind = "pause"
	// Overrun is a task overrun: the holder's next work item started at or
	// after At takes Duration longer (Duration is usually above the TTL).
	Overrun Kind = "overrun"
	// ClockOffset sets the target node's clocks Amount ms ahead (or behind)
	// true time from the start. The target may be "coordinator".
	ClockOffset Kind = "clock-offset"
	// ClockDrift makes the target's clocks run Amount parts per million fast
	// (negative: slow) from At on; |Amount| is at most the scenario's rho.
	// The target may be "coordinator".
	ClockDrift Kind = "clock-drift"
	// ClockStep steps the target's wall clock by Amount ms (forward or back)
	// at At. Correct code measures leases on the monotonic clock, so the step
	// must not matter to it (docs/design.md §5, Clocks).
	ClockStep Kind = "clock-step"
	// Freeze is a container freeze: the holder is stopped and its monotonic
	// clock does not advance for Duration, then both resume.
	Freeze Kind = "freeze"
	// DropHeartbeats loses every renewal the holder sends in [At, At+Duration).
	DropHeartbeats Kind = "drop-heartbeats"
	// RenewDeath kills the holder's renewal loop at At, quietly, until it
	// notices and re-acquires.
	RenewDeath Kind = "renew-death"
	// Delay adds Amount ms to every message to or from the holder in
	// [At, At+Duration).
	Delay Kind = "delay"
	// Partition cuts the holder off from Peer ("coordinator" or "resource")
	// in [At, At+Duration): messages either way are lost. On a cluster,
	// Peer may name one member ("leader", "follower", m1, ...): the holder
	// is cut off from it and keeps the others.
	Partition Kind = "partition"
	// Crash kills the holder at At without releasing; it loses its volatile
	// state. Duration > 0 restarts it (a new incarnation under a new owner
	// name) Duration ms later.
	Crash Kind = "crash"
	// CoordinatorCrash stops the coordinator at At for Duration ms; requests
	// reaching it meanwhile are lost. Its lease table is durable.
	CoordinatorCrash Kind = "coordinator-crash"
	// DoubleRelease makes the holder send its next release (at or after At)
	// twice, the second one late by Amount ms.
	DoubleRelease Kind = "double-release"
	// OwnerReuse crashes the holder at At and restarts it Duration ms later
	// under the same owner name as the dead incarnation.
	OwnerReuse Kind = "owner-reuse"
)

// The cluster faults (docs/design.md §12) strike between the servers of a
// replicated lease service — a 3-member etcd cluster, a ZooKeeper
// ensemble — and only there: the simulator has one coordinator, so they are
// not in AllKinds and "all" does not include them; `verify` adds them for a
// cluster backend. Their target is a member: "leader" or "follower" (found
// from the servers' own status when the fault strikes; the record names
// the member hit), or a member's name (m1, m2, ...).
const (
	// MemberIsolate cuts the target member off from every other member for
	// Duration (a minority of one; the others, a majority). Clients
	// connected to it stay connected.
	MemberIsolate Kind = "member-isolate"
	// MemberBridge cuts the other members into two halves that cannot hear
	// each other for Duration; the target hears both sides (Jepsen's
	// bridge).
	MemberBridge Kind = "member-bridge"
	// PeerDelay adds Amount ms to every message on the target member's
	// links to the other members for Duration.
	PeerDelay Kind = "peer-delay"
	// MemberPause stops the target member's process (SIGSTOP) for Duration.
	MemberPause Kind = "member-pause"
	// MemberCrash kills the target member (SIGKILL) and restarts it on its
	// data Duration ms later: it comes back with a log that lags the
	// others'.
	MemberCrash Kind = "member-crash"
)

// The client faults strike a user's own client code, run in virtual time
// (package vclient): they need the client's code path (its context, its
// callbacks), which the simulator's reference holder and a real backend
// behind `verify` do not expose. Like the cluster faults they are not in
// AllKinds, so "all" does not include them; the simulator reports one as
// not applied.
const (
	// Shutdown is a graceful shutdown (a SIGTERM, a step-down): the
	// holder's context is cancelled at At and its own code runs on to its
	// end — unlike Crash, what it sends on its way out (a release) reaches
	// the server. Duration > 0 restarts it Duration ms later under the same
	// owner name, once the old incarnation has returned (a pod restarted in
	// place keeps its name); 0 leaves it down.
	Shutdown Kind = "shutdown"
	// Conflict makes the lease server answer every update the holder sends
	// in [At, At+Duration) with 409 Conflict, applying none (the answer to
	// a stale resourceVersion: as if another writer had got there first).
	Conflict Kind = "conflict"
)

// The network faults strike one client's connections at the socket, in the
// proxy the real runner puts between each client and the server (package
// faultproxy is the same proxy for a user's own test): each leg of the
// connection — the request leg, client to server, and the reply leg — is
// faulted apart. They need the server's address (a proxy) and the
// simulator, which has no sockets, reports one as not applied; like the
// cluster faults they are not in AllKinds, and `verify` adds them (but
// Duplicate) to "all" for a backend that gives its address. What each can and cannot do to a
// TCP byte stream is in docs/specification.md (fault kinds).
const (
	// Blackhole drops every byte either way on the holder's connections
	// for Duration; they stay open and nobody is told. When it ends, each
	// connection that lost bytes is reset (a stream with a hole cannot go
	// on); the others go on.
	Blackhole Kind = "blackhole"
	// RequestLoss is Blackhole on the request leg only: the server never
	// sees what the holder sent meanwhile; its replies to what it had
	// still arrive.
	RequestLoss Kind = "request-loss"
	// ReplyLoss is Blackhole on the reply leg only: the server gets and
	// applies the holder's requests, and the answers never arrive.
	ReplyLoss Kind = "reply-loss"
	// RequestDelay delivers each chunk the holder sends Amount ms late for
	// Duration (a latency; the order of a connection's bytes is kept).
	RequestDelay Kind = "request-delay"
	// ReplyDelay is RequestDelay on the reply leg.
	ReplyDelay Kind = "reply-delay"
	// Reorder delays each chunk either way by a fresh draw in [0, Amount]
	// ms for Duration: within a connection the order is kept (TCP), across
	// the holder's connections what was sent later may arrive first.
	Reorder Kind = "reorder"
	// Duplicate sends each request the holder makes during Duration again,
	// Amount ms later, on a connection of its own, as a retry would; the
	// holder sees only its own reply. Only where the proxy can frame
	// requests (RESP: Redis); elsewhere it copies nothing and is recorded
	// so. A copy is in the fault's record, not in the history as an
	// operation, so a checker cannot explain what a copied acquire did to
	// the lease: it is a fault to run by name, not in verify's "all".
	Duplicate Kind = "duplicate"
)

// NetworkKinds lists the network faults, in the order summaries print them.
var NetworkKinds = []Kind{Blackhole, RequestLoss, ReplyLoss, RequestDelay, ReplyDelay, Reorder, Duplicate}

// ClientKinds lists the client faults, in the order summaries print them.
var ClientKinds = []Kind{Shutdown, Conflict}

// ClusterKinds lists the cluster faults, in the order summaries print them.
var ClusterKinds = []Kind{MemberIsolate, MemberBridge, PeerDelay, MemberPause, MemberCrash}

// AllKinds lists every kind, in the order summaries print them.
var AllKinds = []Kind{
	Pause, Overrun, ClockOffset, ClockDrift, ClockStep, Freeze,
	DropHeartbeats, RenewDeath, Delay, Partition, Crash, CoordinatorCrash,
	DoubleRelease, OwnerReuse,
}

func (k Kind) valid() bool {
	for _, a := range AllKinds {
		if a == k {
			return true
		}
	}
	return slices.Contains(ClusterKinds, k) || slices.Contains(NetworkKinds, k) || slices.Contains(ClientKinds, k)
}

// ParseKinds parses a comma-separated list of kind names; "all" or "" means
// AllKinds and "none" means no faults. The result follows AllKinds' order,
// then ClusterKinds', NetworkKinds' and ClientKinds', and has no
// duplicates.
func ParseKinds(s string) ([]Kind, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "", "all":
		return append([]Kind(nil), AllKinds...), nil
	case "none":
		return []Kind{}, nil
	}
	want := map[Kind]bool{}
	for _, f := range strings.Split(s, ",") {
		k := Kind(strings.TrimSpace(f))
		if !k.valid() {
			return nil, fmt.Errorf("unknown fault kind %q (known: %s; on clusters: %s; at a client's socket: %s; in a client's own code: %s)", k, joinKinds(AllKinds), joinKinds(ClusterKinds), joinKinds(NetworkKinds), joinKinds(ClientKinds))
		}
		want[k] = true
	}
	var out []Kind
	for _, k := range slices.Concat(AllKinds, ClusterKinds, NetworkKinds, ClientKinds) {
		if want[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

func joinKinds(ks []Kind) string {
	ss := make([]string, len(ks))
	for i, k := range ks {
		ss[i] = string(k)
	}
	return strings.Join(ss, ",")
}
