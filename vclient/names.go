package vclient

import (
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// The scenario, the simulator's result and a target's execution are the
// house's types (internal/scenario, internal/sim, internal/campaign), which
// a module outside leasecheck cannot import. vclient's API takes and
// returns them (Run, RunRecord, Record, Candidate, Target), and
// vclient/k8slease's generators draw scenarios, so they are named here:
// each is an alias, the same type, not a copy.

// Scenario is one run, complete: the candidates (Holders) and their work,
// the TTL, the network, the fault plan and the seed, in simulated
// milliseconds. Run and RunRecord run one; a saved failure's
// .scenario.json is one; replaying it gives the same history byte for
// byte.
type Scenario = scenario.Scenario

// Process is one candidate of a Scenario (Scenario.Holders): its name,
// when it starts and its work program.
type Process = scenario.Process

// WorkItem is one unit of a Process's work: Work milliseconds of local
// computation, then Writes writes.
type WorkItem = holder.Item

// AdversaryClient is an adversarial client of a Scenario
// (Scenario.Clients): a program of requests with any owner and any fence,
// sent beside the candidates.
//
// Deprecated: vclient refuses to run a scenario that has one (they are
// the simulator's and the explorer's); AdversaryClient leaves the package after
// v0.14.0.
type AdversaryClient = scenario.Client

// ClientRequest is one request of an AdversaryClient's program.
//
// Deprecated: vclient refuses to run a scenario that has one (they are
// the simulator's and the explorer's); ClientRequest leaves the package after
// v0.14.0.
type ClientRequest = scenario.ClientRequest

// Network is a Scenario's ambient network: each message's delay range and
// its chances of being lost or duplicated.
type Network = scenario.Network

// Schedule is one explored path of a Scenario (Scenario.Schedule): the
// value of every choice point in the order the run met them.
//
// Deprecated: vclient refuses to run a scenario that has one (they are
// the simulator's and the explorer's); Schedule leaves the package after
// v0.14.0.
type Schedule = scenario.Schedule

// Choice is one parsed entry of a Schedule.
//
// Deprecated: vclient refuses to run a scenario that has one (they are
// the simulator's and the explorer's); Choice leaves the package after
// v0.14.0.
type Choice = scenario.Choice

// Space makes a Scenario's run enumerable (Scenario.Space): every choice
// a labelled choice point over a few alternatives.
//
// Deprecated: vclient refuses to run a scenario that has one (they are
// the simulator's and the explorer's); Space leaves the package after
// v0.14.0.
type Space = scenario.Space

// Result is what a run produced (Run, Record.Result): the scenario, the
// history, the trace, the measurements, the fault plan as applied, the
// candidates' beliefs and their pauses and freezes.
type Result = sim.Result

// Belief is one span of a Result during which a candidate believed it held
// the lease under one fence.
type Belief = sim.Belief

// Stop is one span of a Result during which a candidate could not act (a
// pause) or its monotonic clock stood still (a freeze).
type Stop = sim.Stop

// TraceEvent is one line of a Result's trace.
type TraceEvent = sim.TraceEvent

// Stats are a Result's measurements.
type Stats = sim.Stats

// Execution is what Target.Run returns: one run's history, the stores' log,
// the simulator-shaped result and the first failed request, as the judge
// of internal/campaign takes it. It is named here so that a target of your
// own that wraps Target (refusing some scenarios, say) can write its Run.
type Execution = campaign.Execution
