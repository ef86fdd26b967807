package vclient

import (
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
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
