package vclient

import (
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// A candidate's program is the house's (internal/scenario), which a module
// outside leasecheck cannot import; a Client reads it (Candidate.Process:
// its timing parameters and its work), so its two types are named here,
// each an alias, the same type, not a copy.

// Process is a candidate's part of the scenario (Candidate.Process): its
// name, when it starts, its work program (Work, a list of WorkItem) and
// the timing parameters a client maps onto its own (Timeout, RenewEvery,
// RetryMax, in milliseconds).
type Process = scenario.Process

// WorkItem is one unit of a Process's work: Work milliseconds of local
// computation, then Writes writes (Candidate.Write).
type WorkItem = holder.Item

// Scenario is one run, complete: the candidates and their work, the TTL,
// the network, the fault plan and the seed.
//
// Deprecated: scenarios are drawn, shrunk and replayed by leasecheck's own
// sweeps (vclient/k8slease's Sweep and ReplayFile); Scenario leaves this
// package in v0.16.0.
type Scenario = scenario.Scenario

// Network is a Scenario's ambient network: each message's delay range and
// its chances of being lost or duplicated.
//
// Deprecated: leasecheck's own (its sweeps draw the network); Network
// leaves this package in v0.16.0.
type Network = scenario.Network

// Result is what a run produced: the scenario, the history, the trace, the
// measurements, the candidates' beliefs and their pauses.
//
// Deprecated: leasecheck's own: a sweep judges it (k8slease.Outcome's
// Sim); Result leaves this package in v0.16.0.
type Result = sim.Result

// Belief is one span of a Result during which a candidate believed it held
// the lease under one fence.
//
// Deprecated: leasecheck's own; Belief leaves this package in v0.16.0.
type Belief = sim.Belief

// Stop is one span of a Result during which a candidate could not act.
//
// Deprecated: leasecheck's own; Stop leaves this package in v0.16.0.
type Stop = sim.Stop

// TraceEvent is one line of a Result's trace.
//
// Deprecated: leasecheck's own; TraceEvent leaves this package in v0.16.0.
type TraceEvent = sim.TraceEvent

// Stats are a Result's measurements.
//
// Deprecated: leasecheck's own; Stats leaves this package in v0.16.0.
type Stats = sim.Stats

// Execution is what Target.Run returns, as leasecheck's judge takes it.
//
// Deprecated: leasecheck's own: a sweep runs a Target, never a user;
// Execution leaves this package in v0.16.0.
type Execution = campaign.Execution
