package etcd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/impl/etcd"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/realrun"
)

func embedded(t *testing.T) *etcd.Embedded {
	t.Helper()
	s, err := etcd.StartEmbedded(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func target(s *etcd.Embedded, mutex bool) realrun.Target {
	p := "/leasecheck/" + serverstest.Prefix()
	if mutex {
		return realrun.Target{Info: etcd.MutexInfo(), Addr: s.Addr, Open: func(ctx context.Context, addr string) (backend.Backend, error) {
			return etcd.OpenMutex(ctx, addr, p)
		}}
	}
	return realrun.Target{Info: etcd.Info(), Addr: s.Addr, Open: func(ctx context.Context, addr string) (backend.Backend, error) {
		return etcd.Open(ctx, addr, p)
	}}
}

// TestEtcdAllFaults: the fenced etcd lease is judged correct with every
// applicable fault kind injected.
func TestEtcdAllFaults(t *testing.T) {
	tg := target(embedded(t), false)
	_, cr := serverstest.Check(t, tg, realrun.Config{Seed: 1, Duration: 8 * time.Second, Faults: realrun.ApplicableKinds(tg, faults.AllKinds)})
	serverstest.ExpectOK(t, cr)
}

// TestEtcdMutexPauseCaught: concurrency.Mutex with a plain write lets a
// holder paused past its TTL write after the next holder: two writers.
func TestEtcdMutexPauseCaught(t *testing.T) {
	tg := target(embedded(t), true)
	_, cr := serverstest.Check(t, tg, realrun.Config{Seed: 1, Duration: 8 * time.Second, Faults: []faults.Kind{faults.Pause}})
	if !cr.Violated() {
		t.Fatalf("etcd-mutex under a holder pause: no violation found")
	}
	for _, v := range cr.Violations {
		t.Logf("caught %s (lines %v): %s", v.Property, v.Lines, v.Explanation)
	}
	if cr.Verdict(checker.Linearizable) != checker.Violated {
		t.Errorf("linearizable = %v, want violated", cr.Verdict(checker.Linearizable))
	}
	_ = strings.Contains
}

// TestEtcdConformance runs the leasetest suite against the fenced etcd
// lease, and checks that it catches etcd-mutex's plain write.
func TestEtcdConformance(t *testing.T) {
	s := embedded(t)
	leasetest.Run(t, func() (backend.Backend, func(), error) {
		b, err := etcd.Open(context.Background(), s.Addr, "/leasecheck/"+serverstest.Prefix())
		if err != nil {
			return nil, nil, err
		}
		return b, func() { b.Cleanup(context.Background()); b.Close() }, nil
	}, leasetest.Options{Info: etcd.Info(), TTL: 2 * time.Second})
}

func TestEtcdMutexNonConformance(t *testing.T) {
	s := embedded(t)
	err := leasetest.Check(context.Background(), func() (backend.Backend, func(), error) {
		b, err := etcd.OpenMutex(context.Background(), s.Addr, "/leasecheck/"+serverstest.Prefix())
		if err != nil {
			return nil, nil, err
		}
		return b, func() { b.Cleanup(context.Background()); b.Close() }, nil
	}, leasetest.Options{Info: etcd.MutexInfo(), TTL: 2 * time.Second, Skip: []string{"Linearizable"}})
	if err == nil || !strings.Contains(err.Error(), "Zombie: ") {
		t.Fatalf("leasetest.Check(etcd-mutex) = %v, want a Zombie failure", err)
	}
	t.Logf("etcd-mutex fails the suite as it should:\n%.2000s", err)
}

// TestEtcdExpiryLateness measures how late the embedded etcd deletes a
// lease's key after its TTL, the number Info().Uncertainty must cover (the
// lessor sweeps every 500 ms). It also checks leases never expire early.
func TestEtcdExpiryLateness(t *testing.T) {
	s := embedded(t)
	cli, err := etcd.Dial(context.Background(), s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	const n = 5
	late := make(chan time.Duration, n)
	for i := 0; i < n; i++ {
		go func() {
			key := fmt.Sprintf("/leasecheck/%s/late/%d", serverstest.Prefix(), i)
			before := time.Now()
			g, err := cli.Grant(ctx, 1)
			if err != nil {
				t.Error(err)
				late <- 0
				return
			}
			if _, err := cli.Put(ctx, key, "x", clientv3.WithLease(g.ID)); err != nil {
				t.Error(err)
				late <- 0
				return
			}
			ttl := time.Duration(g.TTL) * time.Second
			for {
				r, err := cli.Get(ctx, key)
				if err != nil {
					t.Error(err)
					late <- 0
					return
				}
				if len(r.Kvs) == 0 {
					// Gone: at most now − before − ttl late; never before the TTL
					// from the grant's answer.
					d := time.Since(before) - ttl
					late <- d
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	var worst time.Duration
	for i := 0; i < n; i++ {
		d := <-late
		if d < 0 {
			t.Errorf("a lease's key vanished %v before its TTL", -d)
		}
		worst = max(worst, d)
	}
	t.Logf("etcd lease expiry lateness: worst %v of %d leases (TTL from the grant's request); declared %v", worst, n, etcd.Uncertainty)
	if worst > etcd.Uncertainty {
		t.Errorf("a lease expired %v late, more than the declared %v", worst, etcd.Uncertainty)
	}
}
