package zookeeper_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/zookeeper"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/model"
)

func lockFactory(addr string, fenced bool) leasetest.Factory {
	return func() (backend.Backend, func(), error) {
		b, err := zookeeper.OpenLock(context.Background(), addr, root(), fenced)
		if err != nil {
			return nil, nil, err
		}
		return b, func() { b.Cleanup(context.Background()); b.Close() }, nil
	}
}

// go-zookeeper's lock recipe, its session pinged in the background,
// passes the whole suite with fenced writes, LossSignal included (the
// session's StateExpired event judged against the server's record), with
// no false alarm.
func TestLockConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, a minute of real rounds")
	}
	t.Parallel()
	addr, _ := serverstest.ZooKeeper(t)
	leasetest.Run(t, lockFactory(addr, true), leasetest.Options{Info: zookeeper.LockInfo(true), TTL: 3 * time.Second})
}

// The same recipe with a plain setData fails the suite on Zombie alone:
// the documented hazard of a lock without fencing, while its loss signal
// holds.
func TestLockUnfencedZombie(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, a minute of real rounds")
	}
	t.Parallel()
	addr, _ := serverstest.ZooKeeper(t)
	rs := leasetest.Evaluate(context.Background(), lockFactory(addr, false), leasetest.Options{Info: zookeeper.LockInfo(false), TTL: 3 * time.Second,
		Skip: []string{"Linearizable"}})
	var failed []string
	for _, r := range rs {
		if r.Failed() {
			failed = append(failed, r.Property)
		}
		if r.Property == "LossSignal" && r.Skipped != "" {
			t.Errorf("LossSignal skipped: %s", r.Skipped)
		}
	}
	if !slices.Equal(failed, []string{"Zombie"}) {
		for _, r := range rs {
			if r.Failed() {
				t.Logf("%s", r.Report())
			}
		}
		t.Fatalf("failed %v, want exactly [Zombie]", failed)
	}
}

// Under a real run with a holder pause the library's pings are in the
// history as the renewer's renews, and the fenced recipe is judged correct.
func TestLockPauseRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, a minute of real rounds")
	}
	t.Parallel()
	addr, srv := serverstest.ZooKeeper(t)
	r := root()
	tg := realrun.Target{Info: zookeeper.LockInfo(true), Addr: addr, Server: srv, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return zookeeper.OpenLock(ctx, a, r, true)
	}}
	res, cr := serverstest.Check(t, tg, realrun.Config{Seed: 1, Duration: 8 * time.Second, Faults: []faults.Kind{faults.Pause}})
	serverstest.ExpectOK(t, cr)
	if !slices.ContainsFunc(res.History.Ops, func(op model.Op) bool {
		return op.Kind == model.Renew && op.OK && strings.HasSuffix(op.Process, "/renewer")
	}) {
		t.Errorf("no background ping of the session in the history")
	}
}
