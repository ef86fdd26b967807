package redislock_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"slices"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"example.com/leasecheck-examples/redislock"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/leasetest/servers"
)

const ttl = 500 * time.Millisecond

// newPrefix returns a fresh key prefix: every property's keys live under one
// of their own.
func newPrefix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "lc" + hex.EncodeToString(b)
}

// factory opens a fresh adapter on its own prefix for every property, and
// checks on stop that nothing is left under it.
func factory(t *testing.T, url string) leasetest.Factory {
	return func() (backend.Backend, func(), error) {
		ctx := context.Background()
		prefix := "leasecheck:" + newPrefix() + ":"
		b, err := redislock.Open(ctx, url, "", prefix)
		if err != nil {
			return nil, nil, err
		}
		return b, func() {
			if err := b.(backend.Cleaner).Cleanup(ctx); err != nil {
				t.Errorf("cleanup: %v", err)
			}
			leftovers(t, url, prefix+"*") // Cleanup closed b: looked at afresh
			b.Close()
		}, nil
	}
}

var cleanupRuns = flag.Int("cleanup-runs", 3, "conformance runs of TestCleanupAfterLateWrites (the soak: -cleanup-runs 100)")

// TestCleanupAfterLateWrites: the whole suite against a real redis-server
// through a network that holds every few writes past their client's
// timeout, so that they land after their property ended — the late write
// that once left "…:data:leasetest/Linearizable" behind after about one run
// in three. With Cleanup (which closes the adapter and waits until the
// server has applied everything its connections carried) nothing is left
// under any property's prefix after -cleanup-runs runs; a delete that does
// not wait (as the cleanup once did) leaves the late writes' keys, so
// the check can fail and the late writes are real.
func TestCleanupAfterLateWrites(t *testing.T) {
	url := servers.ForTest(t, servers.StartRedis).URL
	opts, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	const hold = 1500 * time.Millisecond // past the op timeout (TTL/3)
	px := newHoldingProxy(t, opts.Addr, []byte("data:"), 5, hold)
	check := goredis.NewClient(opts)
	defer check.Close()
	ctx := context.Background()
	run := func(waits bool) (left []string) {
		var mu sync.Mutex
		var prefixes []string
		f := func() (backend.Backend, func(), error) {
			prefix := "leasecheck:" + newPrefix() + ":"
			mu.Lock()
			prefixes = append(prefixes, prefix)
			mu.Unlock()
			b, err := redislock.Open(ctx, url, px.Addr, prefix)
			if err != nil {
				return nil, nil, err
			}
			return b, func() {
				if waits {
					if err := b.(backend.Cleaner).Cleanup(ctx); err != nil {
						t.Errorf("cleanup: %v", err)
					}
				} else if ks, err := check.Keys(ctx, prefix+"*").Result(); err == nil && len(ks) > 0 {
					check.Del(ctx, ks...) // the old cleanup: delete what is there now
				}
				b.Close()
			}, nil
		}
		// Held writes time out, so verdicts may change; what matters is
		// what is left. Evaluate is the engine Run runs.
		leasetest.Evaluate(ctx, f, leasetest.Options{Info: redislock.Info(), TTL: ttl})
		px.Idle(t) // every held write has reached the server
		for _, p := range prefixes {
			ks, err := check.Keys(ctx, p+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			left = append(left, ks...)
			if len(ks) > 0 {
				check.Del(ctx, ks...)
			}
		}
		return left
	}
	held := px.Held()
	if left := run(false); len(left) == 0 {
		t.Fatalf("a cleanup that does not wait left nothing (%d writes held): the writes were not late, the test proves nothing", px.Held()-held)
	} else {
		t.Logf("planted (a delete that does not wait): left %q", left)
	}
	held = px.Held()
	for i := range *cleanupRuns {
		if left := run(true); len(left) > 0 {
			t.Fatalf("run %d of %d: left after Cleanup: %q", i+1, *cleanupRuns, left)
		}
	}
	t.Logf("%d runs of the suite, %d writes held past their timeout, nothing left", *cleanupRuns, px.Held()-held)
}

// TestRedislock is what a user of bsm/redislock writes: the whole suite,
// with the one finding they know of listed in Expect. It fails if that
// finding is absent (the expectation would be stale) or if anything else
// fails: every property that applies passes, the ones that presuppose
// fences or fenced writes are skipped with the reason.
func TestRedislock(t *testing.T) {
	url := servers.ForTest(t, servers.StartRedis).URL
	leasetest.Run(t, factory(t, url), leasetest.Options{
		Info:   redislock.Info(),
		TTL:    ttl,
		Expect: []string{"Zombie"}, // writes are not fenced: the library cannot stop a zombie
	})
}

// TestRedislockOneFinding pins down what Expect allows: exactly one
// finding, Zombie's, naming the missing protection — no broken contract
// rule anywhere — and exactly the properties that presuppose fences,
// fenced writes or a holding library (one that renews in the background
// and says when it lost the lease; redislock only locks and unlocks)
// skipped.
func TestRedislockOneFinding(t *testing.T) {
	url := servers.ForTest(t, servers.StartRedis).URL
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
	if want := []string{"FenceIncreases", "StaleFence", "WriteAfterExpiry", "LossSignal"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
}
