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

// ExploreBounds describe one bounded space the exploration searches
// (SimOptions.Explore): how many holders, which faults may strike and how
// many on one path, the adversarial client's requests, the messages'
// deviations.
type ExploreBounds = scenario.Bounds
