package rueidislock_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"example.com/leasecheck-examples/rueidislock"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/model"
)

// extends counts the EVALSHA and EVAL calls the server has run
// (INFO commandstats): the library's scripts.
func scripts(t *testing.T, rdb *goredis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "cmdstat_evalsha:calls=") || strings.HasPrefix(line, "cmdstat_eval:calls=") {
			v, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(line, "cmdstat_evalsha:calls="), "cmdstat_eval:calls="), ",")
			c, _ := strconv.Atoi(v)
			n += c
		}
	}
	return n
}

// hold holds one lock for d with cfg on a fresh redis-server and returns
// the scripts the server ran and the background renewals the adapter saw
// (key 0's).
func hold(t *testing.T, cfg rueidislock.Config, d time.Duration) (int, int) {
	t.Helper()
	ctx := context.Background()
	s, err := servers.StartRedis(ctx)
	if err != nil {
		t.Skip("no redis-server:", err)
	}
	defer s.Close()
	a, err := rueidislock.Open(cfg, s.URL, "", "t:")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	renewals := make(chan backend.Renewal, 1<<20)
	a.Observe(func(r backend.Renewal) { renewals <- r })
	// The library bounds each key's SET by TryNextAfter (20ms): on a
	// loaded machine a first try may time out (the library then deletes
	// what it set); try again, as its WithContext would.
	var r backend.Response
	for range 20 {
		if r, err = a.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: "A", TTL: 2 * time.Second}); err == nil && r.OK {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || !r.OK {
		t.Fatalf("acquire: %+v %v", r, err)
	}
	time.Sleep(d)
	rdb := goredis.NewClient(&goredis.Options{Addr: s.Addr})
	defer rdb.Close()
	return scripts(t, rdb), len(renewals)
}

// With the README's configuration a lock held 3 s at a validity of 2 s is
// extended by the timer every second (plus the acquire's scripts); with
// the library's defaults (tracking without NOLOOP) each extend invalidates
// the key on the client's own connection, whose invalidation runs the
// extend again: a loop that never settles. The adapter sees the renewals
// (its extend SHA is the library's) in both.
func TestRenewalLoop(t *testing.T) {
	readme, seenReadme := hold(t, rueidislock.README, 3*time.Second)
	defaults, seenDefaults := hold(t, rueidislock.Defaults, 3*time.Second)
	t.Logf("scripts in 3s: README %d (adapter saw %d renewals), defaults %d (adapter saw %d renewals of key 0)", readme, seenReadme, defaults, seenDefaults)
	if readme > 10 || seenReadme < 2 {
		t.Errorf("README configuration: %d scripts, %d renewals seen in 3s; want the timer's (about 3 scripts, 2 or 3 renewals)", readme, seenReadme)
	}
	// The loop's rate is bounded by round trips and the CPU (on a shared
	// 2-core machine 900 to 2000 scripts in 3s); the timer alone sends 3.
	if defaults < 300 || seenDefaults < 100 {
		t.Errorf("defaults: %d scripts, %d renewals seen in 3s; want the loop (hundreds at least)", defaults, seenDefaults)
	}
}

// An acquire whose caller gives up is not tried again, even while the
// server is silent (stopped) and the request's deadline is far: a try
// nobody waits for could end after the owner's next acquire, and take its
// place. One try itself lasts the validity (2s) then: the library waits
// for its delete of what it set, bounded by the lock's deadline.
func TestAcquireHonoursCancel(t *testing.T) {
	ctx := context.Background()
	s, err := servers.StartRedis(ctx)
	if err != nil {
		t.Skip("no redis-server:", err)
	}
	defer s.Close()
	a, err := rueidislock.Open(rueidislock.README, s.URL, "", "t:")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// A's Locker connects on its first use: an acquire and a release
	// while the server runs (retried while TryNextAfter runs out).
	for i := 0; ; i++ {
		r, err := a.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k0", Owner: "A", TTL: 2 * time.Second})
		if err == nil && r.OK {
			break
		}
		if i == 20 {
			t.Fatalf("acquire with the server running: %+v %v", r, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := a.Do(ctx, backend.Request{Kind: model.Release, Key: "k0", Owner: "A"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	defer s.Cont()
	rctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err = a.Do(rctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: "A", TTL: 2 * time.Second})
	took := time.Since(start)
	if err == nil {
		t.Errorf("the acquire answered with the server stopped")
	}
	if took > 4*time.Second {
		t.Errorf("the acquire returned %v after its start, its caller gone after 200ms: it tried again (one try lasts the validity, 2s)", took.Round(time.Millisecond))
	}
}
