package sim

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/internal/scenario"
)

// Chooser is where every nondeterministic choice of a run comes from: which
// delay a message gets, whether it is lost or duplicated, which of several
// events due at one instant runs first (with Network.ShuffleTies; else the
// order they were scheduled in). A seeded PRNG and rapid draws implement it;
// the explorer's choosers (breadth-first, depth-first, PCT) are Pickers,
// which enumerate every choice point. A choice is a bounded integer with a
// label.
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

// Picker is a Chooser whose choices are enumerable: Pick returns one of n
// alternatives, 0..n-1, alternative 0 being the default. A run whose chooser
// is a Picker is enumerable (scenario.Space): every choice point is a Pick
// with a label — "next" (which move runs, World.Moves), "delay", "drop",
// "dup" — and there are no draws from wide ranges. The explorer's choosers
// and a Schedule's replay are Pickers.
type Picker interface {
	Chooser
	Pick(n int, label string) int
}

// replay is the Picker of a scenario with a Space or a Schedule: it returns
// the schedule's recorded choices in order, then the defaults. A choice
// whose label or range does not fit the run is an error: the schedule was
// recorded for another run.
type replay struct {
	cs  []scenario.Choice
	pos int
	err error
}

func (r *replay) Pick(n int, label string) int {
	if r.pos >= len(r.cs) || r.err != nil {
		return 0
	}
	c := r.cs[r.pos]
	r.pos++
	if c.Label != label || c.Value >= n {
		r.err = fmt.Errorf("scenario: schedule choice %d is %s, but the run asks for %q among %d alternatives: the schedule does not fit this scenario", r.pos-1, c, label, n)
		return 0
	}
	return c.Value
}

func (r *replay) Int64(lo, hi int64, label string) int64 {
	if hi <= lo {
		return lo
	}
	return lo + int64(r.Pick(int(hi-lo+1), label))
}
