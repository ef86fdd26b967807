package sim

import (
	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/scenario"
)

// Chooser is where every nondeterministic choice of a run comes from: which
// delay a message gets, whether it is lost or duplicated. Two implementations
// exist now (a seeded PRNG and rapid draws); PCT-style priorities and
// exhaustive depth-first enumeration fit the same method later: a choice is a
// bounded integer with a label.
type Chooser interface {
	// Int64 returns a value in [lo, hi]; label names the choice.
	Int64(lo, hi int64, label string) int64
}

// NewSeeded returns a PCG-backed Chooser for (seed, stream).
func NewSeeded(seed, stream uint64) Chooser { return scenario.NewSeeded(seed, stream) }

// Rapid draws every choice from a rapid test, so rapid can shrink it.
type Rapid struct{ t *rapid.T }

// NewRapid returns a Chooser drawing from t.
func NewRapid(t *rapid.T) *Rapid { return &Rapid{t} }

// Int64 draws a labelled value in [lo, hi].
func (r *Rapid) Int64(lo, hi int64, label string) int64 {
	if hi <= lo {
		return lo
	}
	return rapid.Int64Range(lo, hi).Draw(r.t, label)
}
