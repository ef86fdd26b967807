package k8slease

import (
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
)

// TestNaiveWriteCaught: a controller that writes under the context
// OnStartedLeading gave it (elector.WriteWithTermContext, what most
// controllers do), under pauses. client-go cancels that context as the
// paused leader resumes, so the client gives up on the write a pause held
// while the API server applies it: the client's view records it unanswered
// (it may never have happened), the store's log applied. Every seed whose
// store's log shows a write accepted after the Lease went to another
// candidate must fail; the test counts how many of them the client's view
// alone would have passed (-seeds 1000 for the figures).
func TestNaiveWriteCaught(t *testing.T) {
	var stale, caught, clientOnly, missedByClient int
	r := sweep(t, k8ssweep.Naive, "pause", Timings[:1], seeds(100), func(c *campaign.Config) {
		c.Save = campaign.SaveOptions{}
		c.OnOutcome = func(seed uint64, o *campaign.Outcome) error {
			if o.Store == nil {
				t.Fatalf("seed %d: no store's log", seed)
			}
			client := o.Check.Verdict(checker.SingleWriterPerFence) == checker.Violated || o.Check.Verdict(checker.Linearizable) == checker.Violated
			if client {
				clientOnly++
			}
			if o.Violated() {
				caught++
			}
			if w := k8ssweep.StoreZombieWrite(o.Store); w != nil {
				stale++
				if !client {
					missedByClient++
				}
				if !o.Violated() {
					var b strings.Builder
					campaign.WriteOutcome(&b, o)
					t.Errorf("seed %d: the store accepted %s's write %q at t=%d (line %d) after the Lease moved on, and the seed passed:\n%s",
						seed, w.Owner, w.Value, w.At, w.Line, b.String())
				}
			}
			return nil
		}
	})
	t.Logf("pause profile, %d seeds: %d with a stale write in the store's log; %d failed (%d on the client's view); "+
		"%d of the stale-write seeds the client's view alone would have passed", r.sum.Seeds, stale, caught, clientOnly, missedByClient)
	if stale == 0 {
		t.Fatalf("no stale write in %d seeds of pauses: the sweep exercised nothing", r.sum.Seeds)
	}
	if caught < stale {
		t.Errorf("caught in %d seeds, the store recorded a stale write in %d", caught, stale)
	}
}
