package campaign

import (
	"github.com/leasecheck/leasecheck/internal/report"
	"github.com/leasecheck/leasecheck/internal/runprop"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// The scenario, the run properties' findings and the belief intervals are
// the house's types (internal/scenario, internal/runprop,
// internal/report), which a module outside leasecheck cannot import; a
// Target runs a Scenario and fills Execution.Beliefs, and an Outcome
// carries Findings, so they are named here. Each is an alias, the same
// type, not a copy. A Scenario's own parts (its processes, network and
// schedule) and the simulator's result (Execution.Sim) are named in
// package vclient.

// Scenario is one run, complete: the holders and their work, the TTL, the
// network, the fault plan and the seed. A Target runs one; a saved
// failure's .scenario.json is one.
type Scenario = scenario.Scenario

// Belief is one interval in which a holder believed it held the lease
// under one fence (Execution.Beliefs, recorded by a runner that saw it
// itself).
type Belief = report.Belief

// Finding is one violation of a run property (Outcome.Findings,
// Outcome.Warnings).
type Finding = runprop.Finding
