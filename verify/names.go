package verify

import "github.com/leasecheck/leasecheck/internal/realrun"

// What a backend is to the real runner (internal/realrun) is the house's,
// which a module outside leasecheck cannot import; a Backend's Open fills
// it in (Opened.Target, and the server, cluster and clock it hands the
// harness), so those types are named here, each an alias, the same type,
// not a copy.

// RunTarget is a backend to run against (Opened.Target): Info (the
// backend's declarations), Addr (its host:port, or a cluster's members'
// client addresses separated by commas), Open (how to connect one client
// to an address: the server's own, or a per-client proxy's, through which
// the delay and partition faults strike), and, for a server or cluster
// that Open started, the Server, the Cluster and the Clock through which
// the harness strikes the server, cluster and coordinator-clock faults.
// Connect fills in the first three.
type RunTarget = realrun.Target

// Server is a coordinator process the harness started and controls
// (RunTarget.Server): Stop freezes it (SIGSTOP), Cont resumes it, for the
// coordinator-crash fault; one that can also Restart(ctx, down) is
// crashed and restarted.
type Server = realrun.Server

// Cluster is a replicated lease service whose servers the harness started
// (RunTarget.Cluster): the cluster faults (faults.ClusterKinds) isolate,
// bridge, delay, pause and restart its members, and every round starts
// from a settled cluster.
type Cluster = realrun.Cluster

// ClockStepper is a coordinator clock the harness can step
// (RunTarget.Clock: StepClock), for the clock faults on the coordinator.
type ClockStepper = realrun.ClockStepper
