package k8slease

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/raceflag"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/model"
)

// digest is everything a run shows: the history (with fault records), the
// trace, the beliefs and the pauses.
func digest(t *testing.T, r *sim.Result) []byte {
	var b bytes.Buffer
	if err := model.WriteHistory(&b, r.History); err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Trace {
		fmt.Fprintln(&b, e)
	}
	fmt.Fprintln(&b, r.Beliefs, r.Stops)
	return b.Bytes()
}

// TestDeterministic: the same scenario gives the same history, trace and
// beliefs, byte for byte, for the implementations under every profile —
// All included (client-side timeouts, lost requests, the API server down
// together), and for the ReleaseOnCancel elector its step-downs and
// releases — over 40 seeds each (-seeds N for more): the harness's
// ordering, not the goroutines', decides. Under the race detector one seed
// each, run twice: what is raced is the harness and client-go under every
// profile, which one seed exercises as forty do, at several times the
// cost (the plain run compares all of them).
func TestDeterministic(t *testing.T) {
	n, runs := seeds(40), 3
	if raceflag.Enabled && testing.Short() {
		n, runs = 1, 2
	}
	for _, impl := range []string{k8ssweep.Unfenced, k8ssweep.Fenced, k8ssweep.Release} {
		for _, p := range Profiles {
			tg, err := target(t, impl)
			if err != nil {
				t.Fatal(err)
			}
			gen := testGenerator(impl, p, nil)
			for seed := uint64(1); seed <= uint64(n); seed++ {
				sc := gen(seed)
				var first []byte
				for i := range runs {
					e, err := tg.Run(context.Background(), sc)
					if err != nil {
						t.Fatal(err)
					}
					d := digest(t, e.Sim)
					if i == 0 {
						first = d
						continue
					}
					if !bytes.Equal(first, d) {
						t.Errorf("%s %s seed %d: run %d differs from run 0:\n%s", impl, p, seed, i, firstDiff(first, d))
					}
				}
			}
		}
	}
}
