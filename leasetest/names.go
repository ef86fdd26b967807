package leasetest

import (
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// Machines.Holder takes the reference holder's configuration and
// SimOptions.Explore takes explored spaces; their packages are the house's
// (internal/impl/holder, internal/scenario), which a module outside
// leasecheck cannot import, so they are named here. Each is an alias, the
// same type, not a copy. The configuration's parts (its work items, its
// planted bugs) are read through its fields.

// HolderConfig is one holder incarnation's configuration, which
// Machines.Holder builds a holder from: its key, owner and name, the TTL,
// the declared clock-drift bound, whether it presents fences, its protocol
// timings, its work program and planted bugs. Zero durations mean the
// defaults (HolderConfig.WithDefaults).
type HolderConfig = holder.Config

// HolderBug is a set of planted holder bugs (HolderConfig.Bugs); the zero
// value is the correct protocol.
//
// Deprecated: a holder of your own reads HolderConfig.Bugs without naming
// its type (the bugs are leasecheck's, planted in its reference holder); it
// leaves the package in v0.16.0.
type HolderBug = holder.Bug

// WorkItem is one unit of a holder's work (HolderConfig.Work): Work
// milliseconds of local computation, then Writes writes.
//
// Deprecated: a holder of your own reads HolderConfig.Work's items
// without naming their type; it leaves the package in v0.16.0.
type WorkItem = holder.Item

// ExploreBounds describe one bounded space the exploration searches
// (SimOptions.Explore): how many holders, which faults may strike and how
// many on one path, the adversarial client's requests, the messages'
// deviations.
type ExploreBounds = scenario.Bounds
