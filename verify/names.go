package verify

import (
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// The real runner's types (internal/realrun) and the scenario
// (internal/scenario) are the house's, which a module outside leasecheck
// cannot import; verify's API hands them out (Opened.Target,
// RunError.Result), so they are named here. Each is an alias, the same
// type, not a copy. A Scenario's own parts (its processes, network and
// schedule) are named in package vclient.

// RunTarget is a backend to run against (Opened.Target): its description,
// its address, how to open a client, and the server processes, cluster and
// clock the harness controls, where it started them.
type RunTarget = realrun.Target

// RunResult is a recorded real run (RunError.Result): the history, the
// faults applied, the holders' beliefs and the scenario as run, with the
// real TTL its times were scaled onto.
type RunResult = realrun.Result

// RunBelief is one interval of a RunResult in which a holder believed it
// held the lease under one fence.
type RunBelief = realrun.Belief

// Server is a coordinator process the harness controls (RunTarget.Server),
// for the coordinator-crash fault.
type Server = realrun.Server

// Cluster is a replicated lease service whose servers the harness started
// (RunTarget.Cluster), for the cluster faults.
type Cluster = realrun.Cluster

// ClockStepper is a coordinator clock the harness can step
// (RunTarget.Clock), for the clock faults on the coordinator.
type ClockStepper = realrun.ClockStepper

// Scenario is one run, complete: the holders and their work, the TTL, the
// fault plan and the seed (RunResult.Scenario; a saved failure's
// .scenario.json, replayed by --scenario).
type Scenario = scenario.Scenario
