package etcd_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/etcd"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/model"
)

func electionFactory(addr string, fenced bool) leasetest.Factory {
	return recipeFactory(etcd.OpenElection, addr, fenced)
}

func recipeFactory(open func(ctx context.Context, addr, prefix string, fenced bool) (*etcd.Election, error), addr string, fenced bool) leasetest.Factory {
	return func() (backend.Backend, func(), error) {
		b, err := open(context.Background(), addr, "/leasecheck/"+serverstest.Prefix(), fenced)
		if err != nil {
			return nil, nil, err
		}
		return b, func() { b.Cleanup(context.Background()); b.Close() }, nil
	}
}

// The election recipe, its session renewing in the background, passes the
// whole suite with fenced writes, LossSignal included (Session.Done judged
// against the server's record), with no false alarm.
func TestElectionConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, a minute of real rounds")
	}
	s := embedded(t)
	leasetest.Run(t, electionFactory(s.Addr, true), leasetest.Options{Info: etcd.ElectionInfo(true), TTL: 2 * time.Second})
}

// The same recipe with a plain Put fails the suite on Zombie alone: the
// documented hazard of an unfenced lock (a paused leader writes after the
// next leader was elected), while its loss signal holds.
func TestElectionUnfencedZombie(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, a minute of real rounds")
	}
	s := embedded(t)
	onlyZombie(t, electionFactory(s.Addr, false), etcd.ElectionInfo(false))
}

// concurrency.Mutex on the same background-renewed session, fenced by the
// library's IsOwner compare, passes the whole suite, LossSignal included.
func TestSessionMutexConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, a minute of real rounds")
	}
	s := embedded(t)
	leasetest.Run(t, recipeFactory(etcd.OpenSessionMutex, s.Addr, true), leasetest.Options{Info: etcd.SessionMutexInfo(true), TTL: 2 * time.Second})
}

// The Mutex with a plain Put fails on Zombie alone, as the election does:
// the fence (IsOwner) is what the fenced Mutex passes by.
func TestSessionMutexUnfencedZombie(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, a minute of real rounds")
	}
	s := embedded(t)
	onlyZombie(t, recipeFactory(etcd.OpenSessionMutex, s.Addr, false), etcd.SessionMutexInfo(false))
}

// onlyZombie runs the suite and wants exactly Zombie failed, with
// LossSignal run.
func onlyZombie(t *testing.T, f leasetest.Factory, info backend.Info) {
	t.Helper()
	rs := leasetest.Evaluate(context.Background(), f, leasetest.Options{Info: info, TTL: 2 * time.Second,
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

// Under a real run with a holder pause the session's keepalives are in the
// history as the holders' renewer's renews, and the fenced election is
// judged correct.
func TestElectionPauseRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, a minute of real rounds")
	}
	s := embedded(t)
	p := "/leasecheck/" + serverstest.Prefix()
	tg := realrun.Target{Info: etcd.ElectionInfo(true), Addr: s.Addr, Open: func(ctx context.Context, addr string) (backend.Backend, error) {
		return etcd.OpenElection(ctx, addr, p, true)
	}}
	res, cr := serverstest.Check(t, tg, realrun.Config{Seed: 1, Duration: 8 * time.Second, Faults: []faults.Kind{faults.Pause}})
	serverstest.ExpectOK(t, cr)
	if !slices.ContainsFunc(res.History.Ops, func(op model.Op) bool {
		return op.Kind == model.Renew && op.OK && len(op.Process) > 8 && op.Process[len(op.Process)-8:] == "/renewer"
	}) {
		t.Errorf("no background keepalive of the session in the history")
	}
}
