// Package serverstest finds or starts the real servers a test runs
// against, and runs a verify round with the test's logging. Each finder
// prefers a server named by an environment variable (.ci/services.sh
// exports them), else starts one of its own (package servers), else skips
// the test with the reason — except under CI=true, where a missing server
// is a missing install step and fails the test: a skipped check must not
// pass for a done one.
package serverstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers"
	"github.com/leasecheck/leasecheck/model"
)

// Prefix returns a fresh unique key prefix ("lc<hex>").
func Prefix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "lc" + hex.EncodeToString(b)
}

// Full skips a test under -short: the fast tier (`make test`) runs no
// real server, embedded or not, and no real-time round; the full tier
// (`make test-all`, CI) runs it. Every finder here calls it first, so a
// test that asks for a server is in the full tier by that alone.
// LEASECHECK_SERVERS=1 keeps these tests under -short, where -short only
// cuts the long sweeps: .ci/run's race step runs them so.
func Full(t testing.TB, why string) {
	t.Helper()
	if testing.Short() && os.Getenv("LEASECHECK_SERVERS") == "" {
		t.Skip(why + ": the full tier (make test-all) runs it, -short does not (LEASECHECK_SERVERS=1 keeps it)")
	}
}

// SkipOrFail skips a test whose server is missing on a developer's
// machine, but fails it under CI (CI is set).
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format+" (CI is set: .ci/run must provide it)", args...)
	}
	t.Skipf(format, args...)
}

// Redis returns the URL of a Redis to test against: LEASECHECK_REDIS_URL,
// else a redis-server started for this test (its Server is then
// controllable), else the test is skipped (failed under CI) with the reason.
func Redis(t testing.TB) (string, realrun.Server) {
	t.Helper()
	Full(t, "a real server")
	if u := os.Getenv("LEASECHECK_REDIS_URL"); u != "" {
		return u, nil
	}
	p, err := servers.StartRedis(context.Background())
	if err != nil {
		SkipOrFail(t, "no Redis: LEASECHECK_REDIS_URL is unset and %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return "redis://" + p.Addr, p
}

// Postgres is Redis for PostgreSQL (LEASECHECK_POSTGRES_URL).
func Postgres(t testing.TB) (string, realrun.Server) {
	t.Helper()
	Full(t, "a real server")
	if u := os.Getenv("LEASECHECK_POSTGRES_URL"); u != "" {
		return u, nil
	}
	p, url, err := servers.StartPostgres(context.Background())
	if err != nil {
		SkipOrFail(t, "no PostgreSQL: LEASECHECK_POSTGRES_URL is unset and %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return url, p
}

// RedisControlled is Redis for tests of the coordinator-crash fault: it
// prefers a redis-server of its own, which it may stop and resume, and
// falls back to LEASECHECK_REDIS_URL (without that fault).
func RedisControlled(t testing.TB) (string, realrun.Server) {
	t.Helper()
	Full(t, "a real server")
	if p, err := servers.StartRedis(context.Background()); err == nil {
		t.Cleanup(func() { p.Close() })
		return "redis://" + p.Addr, p
	}
	return Redis(t)
}

// PostgresControlled is RedisControlled for PostgreSQL.
func PostgresControlled(t testing.TB) (string, realrun.Server) {
	t.Helper()
	Full(t, "a real server")
	if p, url, err := servers.StartPostgres(context.Background()); err == nil {
		t.Cleanup(func() { p.Close() })
		return url, p
	}
	return Postgres(t)
}

// RunAndCheck runs cfg against tg (realrun.Run) and checks the history it
// recorded (linearizability search budget: budget, 0 meaning 30s). The
// real runner only records, as the simulator does; judging is its
// callers' (campaign's judge, verify, and here a test's). When the run
// fails, the result may still hold the partial history (a backend that
// stopped answering).
func RunAndCheck(ctx context.Context, tg realrun.Target, cfg realrun.Config, budget time.Duration) (*realrun.Result, *checker.Result, error) {
	res, err := realrun.Run(ctx, tg, cfg)
	if err != nil {
		return res, nil, err // res: the partial history, when there is one
	}
	if budget == 0 {
		budget = 30 * time.Second
	}
	cr, err := checker.Check(ctx, res.History, checker.Options{Timeout: budget})
	if err != nil {
		return res, nil, fmt.Errorf("the recorded history is malformed: %w", err)
	}
	return res, cr, nil
}

// Check runs cfg against tg and checks the history (RunAndCheck); it returns the checker's
// result. When the test fails, the history is saved and its path logged.
func Check(t testing.TB, tg realrun.Target, cfg realrun.Config) (*realrun.Result, *checker.Result) {
	t.Helper()
	Full(t, "a real-time round")
	if cfg.Log == nil {
		cfg.Log = t.Logf
	}
	res, cr, err := RunAndCheck(context.Background(), tg, cfg, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d ops, faults %v, clock_uncertainty %dus (calibration ±%v, drift %v)",
		tg.Info.Name, res.Ops, res.Faults, res.History.Header.ClockUncertainty, res.CalibrationError, res.Drift)
	t.Cleanup(func() {
		if t.Failed() {
			path := filepath.Join(os.TempDir(), "leasecheck-"+tg.Info.Name+"-"+Prefix()+".history.jsonl")
			if f, err := os.Create(path); err == nil {
				model.WriteHistory(f, res.History)
				f.Close()
				t.Logf("history saved: %s (leasecheck check %s)", path, path)
			}
		}
	})
	return res, cr
}

// ExpectOK fails the test for every violation and for an undecided result.
func ExpectOK(t testing.TB, cr *checker.Result) {
	t.Helper()
	for _, v := range cr.Violations {
		t.Errorf("VIOLATION %s (lines %v): %s", v.Property, v.Lines, v.Explanation)
	}
	if cr.Undecided() {
		t.Errorf("linearizability undecided within the budget")
	}
}

// ZooKeeper returns the address of a ZooKeeper to test against:
// LEASECHECK_ZK_ADDR (host:port), else a server started for this test (its
// Server is then controllable), else the test is skipped (failed under CI).
func ZooKeeper(t testing.TB) (string, realrun.Server) {
	t.Helper()
	Full(t, "a real server")
	if a := os.Getenv("LEASECHECK_ZK_ADDR"); a != "" {
		return a, nil
	}
	return ZooKeeperControlled(t)
}

// ZooKeeperControlled is a ZooKeeper server of the test's own, which it may
// stop and restart.
func ZooKeeperControlled(t testing.TB) (string, realrun.Server) {
	t.Helper()
	Full(t, "a real server")
	p, err := servers.StartZooKeeper(context.Background())
	if err != nil {
		SkipOrFail(t, "no ZooKeeper: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p.Addr, p
}

// Etcd34 returns the address of an etcd server process to test against:
// LEASECHECK_ETCD34_ADDR (host:port), else one started for this test from
// the installed etcd binary, else the test is skipped (failed under CI).
func Etcd34(t testing.TB) (string, realrun.Server) {
	t.Helper()
	Full(t, "a real server")
	if a := os.Getenv("LEASECHECK_ETCD34_ADDR"); a != "" {
		return a, nil
	}
	return Etcd34Controlled(t)
}

// Etcd34Controlled is an etcd server process of the test's own, which it
// may stop and restart.
func Etcd34Controlled(t testing.TB) (string, realrun.Server) {
	t.Helper()
	Full(t, "a real server")
	p, version, err := servers.StartEtcd(context.Background())
	if err != nil {
		SkipOrFail(t, "no etcd server: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	t.Logf("etcd server %s on %s", version, p.Addr)
	return p.Addr, p
}
