package scenario

import (
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/holder"
)

// Bounds describe a space for package explore to search: the world (Holders holders, each
// acquiring, writing once after a short piece of work and releasing) and
// the choices it may take at each step.
type Bounds struct {
	Holders int // default 2
	// Faults are the kinds that may strike at any step, at most MaxFaults
	// of them on one path, each with the fixed parameters of
	// faults.Candidates.
	Faults    []faults.Kind
	MaxFaults int
	// Adversary bounds the adversarial client's requests on one path
	// (AdversaryMenu).
	Adversary int
	// Deviations bounds the messages on one path that take a longer delay
	// than the shortest, or are lost (when Loss).
	Deviations int
	Loss       bool
	// Semantics is "seed" (default) or "fenced-storage".
	Semantics string
	// Work is the holders' programs: holder i runs Work[i], or the last
	// one (nil: explore.DefaultWork).
	Work [][]holder.Item
	// The world's protocol parameters, when not the defaults: the drift
	// bound (0: 4%; negative: none), each holder's deadline margin (holder.NoMargin for
	// none) and renew interval, and the drift applied to the holders' and
	// the coordinator's clocks.
	RhoPPM, Margin, RenewEvery    int64
	DriftPPM, CoordinatorDriftPPM int64
	// Stagger is how long after one another the holders start (0: 2ms;
	// negative: together).
	Stagger int64
	// TTL, when > 0, replaces the 30ms TTL (and the horizon, ten TTLs);
	// MaxDelay, when > 0, the longest message delay (2ms).
	TTL, MaxDelay int64
	// NoDelay makes every message arrive the instant it is sent (the
	// shortest delay 0, and the longest unless MaxDelay says otherwise).
	NoDelay bool
	// ReadEvery, when > 0, adds the reader, reading every ReadEvery ms.
	ReadEvery int64
}
