package scenario

import (
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
)

// Bounds describe a space for package explore to search: the world (Holders holders, each
// acquiring, writing once after a short piece of work and releasing) and
// the choices it may take at each step.
type Bounds struct {
	Holders int `json:"holders,omitempty"` // default 2
	// Faults are the kinds that may strike at any step, at most MaxFaults
	// of them on one path, each with the fixed parameters of
	// faultgen.Candidates.
	Faults    []faults.Kind `json:"faults,omitempty"`
	MaxFaults int           `json:"max_faults,omitempty"`
	// Adversary bounds the adversarial client's requests on one path
	// (AdversaryMenu).
	Adversary int `json:"adversary,omitempty"`
	// Deviations bounds the messages on one path that take a longer delay
	// than the shortest, or are lost (when Loss).
	Deviations int  `json:"deviations,omitempty"`
	Loss       bool `json:"loss,omitempty"`
	// Semantics is "seed" (default) or "fenced-storage".
	Semantics string `json:"semantics,omitempty"`
	// Work is the holders' programs: holder i runs Work[i], or the last
	// one (nil: explore.DefaultWork).
	Work [][]holder.Item `json:"work,omitempty"`
	// The world's protocol parameters, when not the defaults: the drift
	// bound (0: 4%; negative: none), each holder's deadline margin (holder.NoMargin for
	// none) and renew interval, and the drift applied to the holders' and
	// the coordinator's clocks.
	RhoPPM              int64 `json:"rho_ppm,omitempty"`
	Margin              int64 `json:"margin,omitempty"`
	RenewEvery          int64 `json:"renew_every,omitempty"`
	DriftPPM            int64 `json:"drift_ppm,omitempty"`
	CoordinatorDriftPPM int64 `json:"coordinator_drift_ppm,omitempty"`
	// Stagger is how long after one another the holders start (0: 2ms;
	// negative: together).
	Stagger int64 `json:"stagger,omitempty"`
	// TTL, when > 0, replaces the 30ms TTL (and the horizon, ten TTLs);
	// MaxDelay, when > 0, the longest message delay (2ms).
	TTL      int64 `json:"ttl,omitempty"`
	MaxDelay int64 `json:"max_delay,omitempty"`
	// NoDelay makes every message arrive the instant it is sent (the
	// shortest delay 0, and the longest unless MaxDelay says otherwise).
	NoDelay bool `json:"no_delay,omitempty"`
	// ReadEvery, when > 0, adds the reader, reading every ReadEvery ms.
	ReadEvery int64 `json:"read_every,omitempty"`
}
