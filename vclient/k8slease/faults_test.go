package k8slease

import (
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// struck counts, over a sweep, the fault records of kind whose detail
// contains what (every one, for ""), and not partial: faults that struck.
type struck struct {
	kind, what string
	n          int
}

func (s *struck) count(c *campaign.Config) {
	c.OnOutcome = func(_ uint64, o *campaign.Outcome) error {
		for _, f := range o.History.Faults {
			if f.Kind == s.kind && !f.Partial && strings.Contains(f.Detail, s.what) {
				s.n++
			}
		}
		return nil
	}
}

// TestPauseAnywhere: pauses that strike at any request a candidate sends —
// half of them at its next request to the API server (in its renew loop,
// between a Get and an Update) — find the zombie write in the unfenced
// elector and nothing in the fenced one; and pauses do strike at Lease
// requests, not only at writes.
func TestPauseAnywhere(t *testing.T) {
	t.Run("unfenced", func(t *testing.T) {
		tg, err := target(t, k8ssweep.Unfenced)
		if err != nil {
			t.Fatal(err)
		}
		// Every pause aimed at the API server: none strikes at a write, and
		// the zombie write is still found (IsLeader() reads the record the
		// elector last observed, not the clock: the paused leader's first
		// write after it resumes goes out before its held renewal is
		// refused).
		at := &struck{kind: "pause", what: "to the lease server"}
		cfg := ownConfig(tg, "pause-any", Timings[:1], seeds(200), func(c *campaign.Config) {
			c.FailFast = true
			at.count(c)
			inner := c.Scenario
			c.Scenario = func(seed uint64) *scenario.Scenario {
				sc := inner(seed)
				for i := range sc.Faults {
					sc.Faults[i].Peer = faults.Coordinator
				}
				return sc
			}
		})
		cfg.Want = WantViolation
		Sweep(t, cfg)
		if at.n == 0 {
			t.Errorf("no pause struck at a request to the API server")
		}
	})
	t.Run("fenced", func(t *testing.T) {
		tg, err := target(t, k8ssweep.Fenced)
		if err != nil {
			t.Fatal(err)
		}
		at := &struck{kind: "pause", what: "to the lease server"}
		cfg := ownConfig(tg, "pause-any", safeTimings(), seeds(100), at.count)
		cfg.Want = WantClean
		Sweep(t, cfg)
		if at.n == 0 {
			t.Errorf("no pause struck at a request to the API server")
		}
		t.Logf("%d pauses struck at a request to the API server", at.n)
	})
}

// TestPartitionsProfile: candidates cut off from the API server. On a
// timing client-go accepts but that is not safe (2 s / 1.5 s / 1 s: a cut
// off leader believes for RetryPeriod + RenewDeadline, past LeaseDuration)
// the unfenced elector's writes outlive its Lease; on the safe timings
// the fenced one violates nothing.
func TestPartitionsProfile(t *testing.T) {
	t.Run("unsafe-timing", func(t *testing.T) {
		tg, err := target(t, k8ssweep.Unfenced)
		if err != nil {
			t.Fatal(err)
		}
		cfg := ownConfig(tg, "partition", []Timing{Timings[5]}, seeds(200), func(c *campaign.Config) { c.FailFast = true })
		cfg.Want = WantViolation
		Sweep(t, cfg)
	})
	t.Run("fenced", func(t *testing.T) {
		tg, err := target(t, k8ssweep.Fenced)
		if err != nil {
			t.Fatal(err)
		}
		cut := &struck{kind: "partition"}
		cfg := ownConfig(tg, "partition", safeTimings(), seeds(100), cut.count)
		cfg.Want = WantClean
		Sweep(t, cfg)
		if cut.n == 0 {
			t.Errorf("no partition struck")
		}
	})
}

// TestConflictsProfile: the API server answers 409 Conflict, applying
// nothing, to a candidate's updates for a while (the answer a stale
// resourceVersion gets), with a pause at a write: the fenced elector
// violates nothing and the conflicts do refuse updates; the unfenced one's
// zombie write is still found among them.
func TestConflictsProfile(t *testing.T) {
	t.Run("fenced", func(t *testing.T) {
		tg, err := target(t, k8ssweep.Fenced)
		if err != nil {
			t.Fatal(err)
		}
		refused := &struck{kind: "conflict", what: "409 Conflict"}
		cfg := ownConfig(tg, "conflict", safeTimings(), seeds(100), refused.count)
		cfg.Want = WantClean
		Sweep(t, cfg)
		if refused.n == 0 {
			t.Errorf("no conflict fault refused an update")
		}
		t.Logf("%d conflict faults refused updates", refused.n)
	})
	t.Run("unfenced", func(t *testing.T) {
		tg, err := target(t, k8ssweep.Unfenced)
		if err != nil {
			t.Fatal(err)
		}
		cfg := ownConfig(tg, "conflict", Timings[:1], seeds(200), func(c *campaign.Config) { c.FailFast = true })
		cfg.Want = WantViolation
		Sweep(t, cfg)
	})
}

// TestReplicas: a sweep draws between MinReplicas and MaxReplicas
// candidates (up to seven); with seven, the fenced elector is clean under
// pauses and the unfenced one's zombie write is found.
func TestReplicas(t *testing.T) {
	cfg := SweepConfig{Name: k8ssweep.Unfenced, Client: &elector{}, MinReplicas: 2, MaxReplicas: 7}
	seen := map[int]bool{}
	gen := cfg.generator(t, "pause")
	for seed := uint64(1); seed <= 200; seed++ {
		n := len(gen(seed).Holders)
		if n < 2 || n > 7 {
			t.Fatalf("seed %d: %d candidates", seed, n)
		}
		seen[n] = true
	}
	if len(seen) != 6 {
		t.Errorf("200 seeds drew %d distinct candidate counts, want all of 2..7", len(seen))
	}
	for _, impl := range []string{k8ssweep.Fenced, k8ssweep.Unfenced} {
		t.Run(impl, func(t *testing.T) {
			tg, err := target(t, impl)
			if err != nil {
				t.Fatal(err)
			}
			cfg := ownConfig(tg, "pause", Timings[:1], seeds(50), func(c *campaign.Config) {
				c.FailFast = impl == k8ssweep.Unfenced
				inner := c.Scenario
				c.Scenario = func(seed uint64) *scenario.Scenario {
					sc := inner(seed)
					if len(sc.Holders) < 5 {
						t.Fatalf("seed %d: %d candidates, want 5 to 7", seed, len(sc.Holders))
					}
					return sc
				}
			})
			cfg.MinReplicas, cfg.MaxReplicas = 5, 7
			cfg.Want = WantClean
			if impl == k8ssweep.Unfenced {
				cfg.Want = WantViolation
			}
			Sweep(t, cfg)
		})
	}
}
