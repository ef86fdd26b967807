package k8slease

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TestUseJitter: with UseJitter, client-go's wait.Jitter draws from the
// source given — the same seed, the same waits; another seed, others —
// and undo puts the process-wide source back. elector.Use is the same.
func TestUseJitter(t *testing.T) {
	draw := func(use func(*rand.Rand) func(), seed uint64) []time.Duration {
		undo := use(rand.New(rand.NewPCG(seed, 1)))
		defer undo()
		var out []time.Duration
		for range 8 {
			out = append(out, wait.Jitter(time.Second, 1.2))
		}
		return out
	}
	a, b := draw(UseJitter, 1), draw(UseJitter, 1)
	if !slices.Equal(a, b) {
		t.Errorf("the same seed drew %v, then %v", a, b)
	}
	if c := draw(UseJitter, 2); slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 drew the same %v", a)
	}
	if e := draw((&elector{}).Use, 1); !slices.Equal(a, e) {
		t.Errorf("elector.Use drew %v, UseJitter %v", e, a)
	}
	// Undone: the process-wide source again, which does not repeat seed 1.
	var after []time.Duration
	for range 8 {
		after = append(after, wait.Jitter(time.Second, 1.2))
	}
	if slices.Equal(a, after) {
		t.Errorf("after undo, wait.Jitter still draws seed 1's %v", a)
	}
}
