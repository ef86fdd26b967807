package redislock_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"example.com/leasecheck-examples/redislock"
	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/verify"
)

// TestRunRound is a library author's own test of one round, with no
// command around it: bsm/redislock on a redis-server of the test's own
// (leasetest/servers), the round's history and each property's verdict
// back from verify.RunRound. Without faults every property holds; with a
// holder paused past its TTL, its unfenced write after the lock moved on
// violates linearizability, on the history lines the verdict names. The
// history is saved for `leasecheck check`, and nothing is left in Redis.
func TestRunRound(t *testing.T) {
	srv := servers.ForTest(t, servers.StartRedis)
	prefix := "leasecheck:" + newPrefix() + ":"
	open := func(ctx context.Context, addr string) (backend.Backend, error) {
		return redislock.Open(ctx, srv.URL, addr, prefix)
	}
	round := func(kinds []faults.Kind) *verify.Round {
		r, err := verify.RunRound(context.Background(), verify.Connect(redislock.Info(), srv.Addr, open),
			verify.RoundOptions{Seed: 1, Duration: 6 * time.Second, TTL: time.Second, Faults: kinds, Log: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	r := round([]faults.Kind{})
	for _, p := range r.Check.Properties {
		if p.Verdict != checker.Holds {
			t.Errorf("no faults: %s %v: %+v", p.Name, p.Verdict, r.Check.Violations)
		}
	}
	if len(r.History.Ops) < 20 {
		t.Errorf("no faults: %d ops recorded", len(r.History.Ops))
	}

	r = round([]faults.Kind{faults.Pause})
	if v := r.Check.Verdict("linearizable"); v != checker.Violated {
		t.Fatalf("a holder paused past its TTL: linearizable %v, want violated", v)
	}
	for _, v := range r.Check.Violations {
		t.Logf("VIOLATION %s (lines %v): %s", v.Property, v.Lines, v.Explanation)
	}
	if len(r.History.Faults) != 1 || r.History.Faults[0].Kind != string(faults.Pause) {
		t.Errorf("fault records %+v, want the one pause", r.History.Faults)
	}
	path := filepath.Join(t.TempDir(), "paused.history.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.WriteHistory(f, r.History); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res, _, err := checker.CheckFile(context.Background(), path, checker.Options{})
	if err != nil || res.Verdict("linearizable") != checker.Violated {
		t.Errorf("the saved history, checked again: %v, %v", res, err)
	}
	rdb := goredis.NewClient(&goredis.Options{Addr: srv.Addr})
	defer rdb.Close()
	if keys, err := rdb.Keys(context.Background(), prefix+"*").Result(); err != nil || len(keys) > 0 {
		t.Errorf("left in Redis after the rounds: %q (%v)", keys, err)
	}
}
