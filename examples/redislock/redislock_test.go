package redislock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/examples/redislock"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
	"github.com/leasecheck/leasecheck/leasetest"
)

const ttl = 500 * time.Millisecond

// factory opens a fresh adapter on its own prefix for every property, and
// checks on stop that nothing is left under it.
func factory(t *testing.T, url string) leasetest.Factory {
	return func() (backend.Backend, func(), error) {
		ctx := context.Background()
		b, err := redislock.Open(ctx, url, "", "leasecheck:"+serverstest.Prefix()+":")
		if err != nil {
			return nil, nil, err
		}
		return b, func() {
			if err := b.Cleanup(ctx); err != nil {
				t.Errorf("cleanup: %v", err)
			}
			if keys, err := b.Keys(ctx); err != nil || len(keys) > 0 {
				t.Errorf("left under the prefix after cleanup: %q (err %v)", keys, err)
			}
			b.Close()
		}, nil
	}
}

// TestRedislock is what a user of bsm/redislock writes: the whole suite,
// with the one finding they know of listed in Expect. It fails if that
// finding is absent (the expectation would be stale) or if anything else
// fails: every property that applies passes, the ones that presuppose
// fences or fenced writes are skipped with the reason.
func TestRedislock(t *testing.T) {
	url, _ := serverstest.Redis(t)
	leasetest.Run(t, factory(t, url), leasetest.Options{
		Info:   redislock.Info(),
		TTL:    ttl,
		Expect: []string{"Zombie"}, // writes are not fenced: the library cannot stop a zombie
	})
}

// TestRedislockOneFinding pins down what Expect allows: exactly one
// finding, Zombie's, naming the missing protection — no broken contract
// rule anywhere — and exactly the properties that presuppose fences or
// fenced writes skipped.
func TestRedislockOneFinding(t *testing.T) {
	url, _ := serverstest.Redis(t)
	var skipped, findings []string
	for _, r := range leasetest.Evaluate(context.Background(), factory(t, url), leasetest.Options{Info: redislock.Info(), TTL: ttl}) {
		switch {
		case r.Skipped != "":
			skipped = append(skipped, r.Property)
		case r.Finding != "":
			findings = append(findings, r.Property)
			if r.Property != "Zombie" || r.Finding != "writes are not fenced: a holder paused past its TTL wrote after the lease moved on" || len(r.Failures) > 0 {
				t.Errorf("finding %q with failures %q, want Zombie's unfenced-writes finding alone:\n%s", r.Finding, r.Failures, r.Report())
			} else {
				t.Logf("the one finding:\n%s", r.Report())
			}
		case r.Failed():
			t.Errorf("%s failed:\n%s", r.Property, r.Report())
		}
	}
	if !slices.Equal(findings, []string{"Zombie"}) {
		t.Errorf("findings in %q, want exactly Zombie", findings)
	}
	if want := []string{"FenceIncreases", "StaleFence", "WriteAfterExpiry"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
}
