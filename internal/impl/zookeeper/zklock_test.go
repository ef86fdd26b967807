package zookeeper_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/zookeeper"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
	"github.com/leasecheck/leasecheck/internal/tcpproxy"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/model"
)

func lockFactory(addr string, fenced bool) leasetest.Factory {
	return func() (backend.Backend, func(), error) {
		b, err := zookeeper.OpenLock(context.Background(), addr, root(), fenced, zookeeper.LockOnDisconnect)
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
	leasetest.Run(t, lockFactory(addr, true), leasetest.Options{Info: zookeeper.LockInfo(true, zookeeper.LockOnDisconnect), TTL: 3 * time.Second})
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
	rs := leasetest.Evaluate(context.Background(), lockFactory(addr, false), leasetest.Options{Info: zookeeper.LockInfo(false, zookeeper.LockOnDisconnect), TTL: 3 * time.Second,
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
	tg := lockTarget(addr, srv, r, zookeeper.LockOnDisconnect)
	res, cr := serverstest.Check(t, tg, realrun.Config{Seed: 1, Duration: 8 * time.Second, Faults: []faults.Kind{faults.Pause}})
	serverstest.ExpectOK(t, cr)
	if !slices.ContainsFunc(res.History.Ops, func(op model.Op) bool {
		return op.Kind == model.Renew && op.OK && strings.HasSuffix(op.Process, "/renewer")
	}) {
		t.Errorf("no background ping of the session in the history")
	}
}

func lockTarget(addr string, srv realrun.Server, root string, sig zookeeper.LockSignal) realrun.Target {
	return realrun.Target{Info: zookeeper.LockInfo(true, sig), Addr: addr, Server: srv, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return zookeeper.OpenLock(ctx, a, root, true, sig)
	}}
}

// partitionLosses runs rounds of the fenced recipe, its loss signalled as
// sig says, each with a partition cutting one client from the server for
// a TTL (blackholed, then its connections reset), until one round has a
// hold lost on the server and judged (at most rounds rounds); it returns
// that round's loss-signal verdicts, every round's history checked.
func partitionLosses(t *testing.T, sig zookeeper.LockSignal, rounds int) []realrun.LossVerdict {
	addr, srv := serverstest.ZooKeeper(t)
	tg := lockTarget(addr, srv, root(), sig)
	for seed := uint64(1); seed <= uint64(rounds); seed++ {
		res, cr := serverstest.Check(t, tg, realrun.Config{Seed: seed, Duration: 8 * time.Second, Faults: []faults.Kind{faults.Partition}})
		serverstest.ExpectOK(t, cr)
		var judged []realrun.LossVerdict
		for _, v := range res.Losses {
			t.Logf("seed %d: %s", seed, v.Why)
			if v.Judged {
				judged = append(judged, v)
			}
		}
		if len(judged) > 0 {
			return judged
		}
	}
	t.Fatalf("no hold was lost under a partition in %d rounds: nothing judged", rounds)
	return nil
}

// Real rounds with a partition (a TTL long, as verify strikes it): the
// recipe as Curator's standard policy has it takes its disconnection
// (go-zookeeper gives the connection up two thirds of a session timeout
// after its last reply) for the loss, so its signal comes before the loss
// on the server, and every history property holds.
func TestLockPartitionRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, real rounds")
	}
	t.Parallel()
	for _, v := range partitionLosses(t, zookeeper.LockOnDisconnect, 4) {
		if v.Late {
			t.Errorf("loss-signal violated: %s", v.Why)
		}
		if v.Signal < 0 || v.Signal > v.Loss {
			t.Errorf("the signal (t=%dµs) did not come before the loss on the server (t=%dµs): %s", v.Signal, v.Loss, v.Why)
		}
	}
}

// partitioned is one hold of A's, cut off from the server by a proxy
// while its process runs, as B sees it from a session of its own.
type partitioned struct {
	ttl time.Duration
	// lastRenewal is when the server last answered A (its grant or its
	// library's ping): the server may expire A's session a TTL later.
	lastRenewal time.Time
	cut         time.Time
	// signal is when A's library said the lock was lost (zero: not by the
	// end); granted when B was granted (zero: never).
	signal, granted time.Time
}

// holdThenCut has A acquire through a proxy with the loss signalled as sig
// says and hold for a TTL (its library pings), then blackholes A's
// connection right after a ping was answered; B asks for the lock every
// 50 ms. healAfter > 0: the connection is healed that long after the cut
// (the library may get its session back), else the cut lasts until B is
// granted and LockLossLateness more. It ends then, or after 3 TTLs.
func holdThenCut(t *testing.T, addr string, sig zookeeper.LockSignal, ttl, healAfter time.Duration) partitioned {
	ctx := context.Background()
	px, err := tcpproxy.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	r := root()
	a, err := zookeeper.OpenLock(ctx, px.Addr(), r, true, sig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Cleanup(ctx); a.Close() })
	b, err := zookeeper.OpenLock(ctx, addr, r, true, sig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var mu sync.Mutex
	p := partitioned{ttl: ttl}
	pinged := make(chan struct{}, 1)
	a.Observe(func(rn backend.Renewal) {
		mu.Lock()
		defer mu.Unlock()
		if rn.Answered && rn.OK && rn.End.After(p.lastRenewal) {
			p.lastRenewal = rn.End
			select {
			case pinged <- struct{}{}:
			default:
			}
		}
	})
	do := func(b *zookeeper.Lock, owner string) backend.Response {
		c, cancel := context.WithTimeout(ctx, ttl)
		defer cancel()
		resp, err := b.Do(c, backend.Request{Kind: model.Acquire, Key: "k", Owner: owner, TTL: ttl})
		if err != nil {
			t.Fatalf("acquire(%s): %v", owner, err)
		}
		return resp
	}
	if ga := do(a, "A"); !ga.OK {
		t.Fatalf("acquire(A) = %+v, want granted", ga)
	}
	mu.Lock()
	p.lastRenewal = time.Now()
	mu.Unlock()
	sigA := a.Signal("k", "A")
	time.Sleep(ttl)
	select {
	case <-sigA:
		t.Fatalf("A's loss signalled with no fault")
	default:
	}
	if gb := do(b, "B"); gb.OK {
		t.Fatalf("acquire(B) granted while A's library holds the lock")
	}
	// Cut right after a ping was answered: the server then expires A's
	// session a TTL after the cut, the library gives its connection up
	// two thirds of a TTL after it.
	select {
	case <-pinged:
	default:
	}
	select {
	case <-pinged:
	case <-time.After(ttl):
		t.Fatalf("A's library sent no ping answered within a TTL")
	}
	px.Blackhole(true)
	p.cut = time.Now()
	healed := false
	heal := func() {
		if !healed {
			px.Blackhole(false)
			healed = true
		}
	}
	defer heal()
	limit := time.Now().Add(3 * ttl)
	for time.Now().Before(limit) && (p.granted.IsZero() || p.signal.IsZero() && time.Since(p.granted) < zookeeper.LockLossLateness) {
		select {
		case <-sigA:
			if p.signal.IsZero() {
				p.signal = time.Now()
			}
		default:
		}
		if healAfter > 0 && time.Since(p.cut) >= healAfter {
			heal()
		}
		if p.granted.IsZero() {
			if gb := do(b, "B"); gb.OK {
				p.granted = time.Now()
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	ms := func(t0, t1 time.Time) string {
		if t1.IsZero() {
			return "never"
		}
		return t1.Sub(t0).Round(time.Millisecond).String()
	}
	t.Logf("TTL %v; from the cut: A's last renewal answered %s, A's signal %s, B granted %s", ttl, ms(p.cut, p.lastRenewal), ms(p.cut, p.signal), ms(p.cut, p.granted))
	return p
}

// Cut off from the server, the recipe signals the loss on its
// disconnection, before the server could expire its session (a TTL after
// it last answered A) and before B is granted; without it (the loss
// taken from StateExpired only, as this adapter did) A hears nothing
// while the cut lasts, long after B was granted.
func TestLockPartitionSignalBeforeServerExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, real seconds")
	}
	t.Parallel()
	addr, _ := serverstest.ZooKeeper(t)
	ttl := 2 * time.Second
	t.Run("on-disconnect", func(t *testing.T) {
		p := holdThenCut(t, addr, zookeeper.LockOnDisconnect, ttl, 0)
		if p.signal.IsZero() {
			t.Fatalf("A's library never said the lock was lost")
		}
		if expiry := p.lastRenewal.Add(ttl); !p.signal.Before(expiry) {
			t.Errorf("A's signal came %v after the server could expire its session", p.signal.Sub(expiry))
		}
		if !p.granted.IsZero() && !p.signal.Before(p.granted) {
			t.Errorf("A's signal came %v after B was granted", p.signal.Sub(p.granted))
		}
		if p.granted.IsZero() {
			t.Errorf("B was never granted: the server did not expire A's session")
		}
	})
	t.Run("on-expiry", func(t *testing.T) {
		p := holdThenCut(t, addr, zookeeper.LockOnExpiry, ttl, 0)
		if p.granted.IsZero() {
			t.Fatalf("B was never granted: the server did not expire A's session")
		}
		if !p.signal.IsZero() && p.signal.Sub(p.granted) <= zookeeper.LockLossLateness {
			t.Errorf("A's library signalled %v after B's grant while cut off: the naive signal is not late here", p.signal.Sub(p.granted))
		}
	})
}

// A disconnected holder that gets its session back gives the lock up:
// its node is deleted once the lease its renewals recorded is over (a
// ping the cut left unanswered counts: it may have been applied), so B is
// granted then. The naive holder, its loss taken from StateExpired only,
// hears nothing (its session is back) and holds on: B is blocked for as
// long as A's process runs, the library pinging its session again.
func TestLockGivesUpAfterReconnect(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server, real seconds")
	}
	t.Parallel()
	addr, _ := serverstest.ZooKeeper(t)
	// The library gives its connection up 6 s after the cut, the server
	// would expire the session 9 s after it: healed at 6.5 s, the library
	// (which waits up to a second before it reconnects) gets it back.
	ttl, heal := 9*time.Second, 6500*time.Millisecond
	t.Run("on-disconnect", func(t *testing.T) {
		p := holdThenCut(t, addr, zookeeper.LockOnDisconnect, ttl, heal)
		if p.signal.IsZero() || p.signal.Sub(p.cut) > heal {
			t.Fatalf("A's library did not say the lock was lost before the heal (%v after the cut)", p.signal.Sub(p.cut))
		}
		if p.granted.IsZero() {
			t.Fatalf("B was never granted within 3 TTLs of the cut: A did not give the lock up")
		}
		if expiry := p.lastRenewal.Add(ttl); p.granted.Before(expiry) {
			t.Errorf("B granted %v before the lease A's renewals recorded was over", expiry.Sub(p.granted))
		}
	})
	t.Run("on-expiry", func(t *testing.T) {
		p := holdThenCut(t, addr, zookeeper.LockOnExpiry, ttl, heal)
		if !p.signal.IsZero() {
			t.Errorf("A's library said the lock was lost %v after the cut: its session should have come back", p.signal.Sub(p.cut))
		}
		if !p.granted.IsZero() {
			t.Errorf("B granted %v after the cut: the naive holder, its session back, should hold on", p.granted.Sub(p.cut))
		}
	})
}
