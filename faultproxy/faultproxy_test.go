package faultproxy_test

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leasecheck/leasecheck/faultproxy"
)

// redisServer starts a redis-server on a free port for the test, or skips
// when none is installed.
func redisServer(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (apt-get install redis-server)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitFor(t, "redis-server listening", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return addr
}

// waitFor polls cond for up to 10 s: a bound on a loaded machine, never a
// timing under test.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// client is a go-redis client with one connection, through c's end.
func client(t *testing.T, c *faultproxy.Client, timeout time.Duration) *redis.Client {
	rc := redis.NewClient(&redis.Options{Addr: c.Addr(), PoolSize: 1, MaxRetries: -1, ReadTimeout: timeout, WriteTimeout: timeout, DialTimeout: 5 * time.Second})
	t.Cleanup(func() { rc.Close() })
	return rc
}

// TestReplyLossOnOneClient, on a real redis-server with go-redis: client
// a's reply leg is lost, so its INCR is applied by the server and a hears
// nothing; client b, through the same proxy, is untouched. The record
// names a's reply leg and the one reply dropped, nothing on b.
func TestReplyLossOnOneClient(t *testing.T) {
	srv := redisServer(t)
	px, err := faultproxy.Start(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	ctx := context.Background()
	ca, _ := px.Client("a")
	cb, _ := px.Client("b")
	a, b := client(t, ca, 500*time.Millisecond), client(t, cb, 10*time.Second)
	direct := redis.NewClient(&redis.Options{Addr: srv})
	defer direct.Close()
	if err := a.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	ca.Lose(faultproxy.Reply, true)
	err = a.Incr(ctx, "n").Err()
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a's INCR across a reply loss: %v; want a timeout", err)
	}
	if v, err := direct.Get(ctx, "n").Int(); err != nil || v != 1 {
		t.Fatalf("the server's n = %v, %v; want 1: the request crossed, only its answer was lost", v, err)
	}
	if v, err := b.Incr(ctx, "n").Result(); err != nil || v != 2 {
		t.Fatalf("b's INCR during a's loss: %v, %v; want 2", v, err)
	}
	waitFor(t, "a's reply dropped", func() bool { return ca.Counts().Dropped[faultproxy.Reply] > 0 })
	ca.Lose(faultproxy.Reply, false)
	if err := a.Ping(ctx).Err(); err != nil {
		t.Errorf("a after the loss (go-redis dialled again): %v", err)
	}

	rec := px.Record()
	if len(rec) != 1 {
		t.Fatalf("record %+v; want one fault", rec)
	}
	e := rec[0]
	if e.Client != "a" || e.Fault != faultproxy.FaultLoss || e.Leg != faultproxy.Reply || e.Messages != 1 || e.Bytes != int64(len(":1\r\n")) || e.End.IsZero() {
		t.Errorf("record %+v; want a's reply leg, the one reply :1 dropped", e)
	}
	if !(e.Start.Before(e.First) && e.Last.Before(e.End)) {
		t.Errorf("the drop is not inside the fault's hold of the socket: %+v", e)
	}
	if n := cb.Counts(); n.Dropped != [2]int64{} || n.Delivered != n.Bytes {
		t.Errorf("b's counts %+v: b lost nothing", n)
	}
	if n := ca.Counts(); n.Dropped[faultproxy.Request] != 0 {
		t.Errorf("a's request leg dropped %d bytes: only its reply leg was lost", n.Dropped[faultproxy.Request])
	}
}

// TestCountsExact: the proxy counts exactly the commands a go-redis client
// sends and the replies it gets, per client.
func TestCountsExact(t *testing.T) {
	srv := redisServer(t)
	px, err := faultproxy.Start(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	ctx := context.Background()
	ca, _ := px.Client("a")
	cb, _ := px.Client("b")
	a, b := client(t, ca, 10*time.Second), client(t, cb, 10*time.Second)
	if err := a.Ping(ctx).Err(); err != nil { // the connection and its handshake
		t.Fatal(err)
	}
	before := ca.Counts()
	const n = 40
	for i := 0; i < n; i++ {
		if err := a.Set(ctx, "k", i, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		b.Get(ctx, "k")
	}
	after := ca.Counts()
	if got := after.Messages[faultproxy.Request] - before.Messages[faultproxy.Request]; got != n {
		t.Errorf("a's requests counted: %d, want %d", got, n)
	}
	waitFor(t, "a's replies counted", func() bool {
		return ca.Counts().Messages[faultproxy.Reply]-before.Messages[faultproxy.Reply] == n
	})
	if after.Conns != 1 || after.Unframed != 0 {
		t.Errorf("a's counts %+v; want one framed connection", after)
	}
	if got := cb.Counts().Messages[faultproxy.Request]; got < 3 {
		t.Errorf("b's requests counted: %d, want at least its 3 GETs", got)
	}
}

// TestDuplicateWithGoRedis: a duplicate makes the server apply a client's
// INCR twice while the client sees one reply; the record names the copy.
func TestDuplicateWithGoRedis(t *testing.T) {
	srv := redisServer(t)
	px, err := faultproxy.Start(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	ctx := context.Background()
	ca, _ := px.Client("a")
	a := client(t, ca, 10*time.Second)
	if err := a.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	ca.Duplicate(true, 20*time.Millisecond)
	if v, err := a.Incr(ctx, "n").Result(); err != nil || v != 1 {
		t.Fatalf("INCR: %v, %v; want the client's own reply, 1", v, err)
	}
	waitFor(t, "the copy sent and answered", func() bool { return ca.Counts().Duplicates == 1 })
	ca.Duplicate(false, 0)
	if v, err := a.Get(ctx, "n").Int(); err != nil || v != 2 {
		t.Errorf("n after a duplicated INCR: %v, %v; want 2", v, err)
	}
	rec := ca.Record()
	if len(rec) != 1 || len(rec[0].Copies) != 1 || rec[0].Copies[0].Command != "INCR" || rec[0].Copies[0].Reply != ":2\r\n" {
		t.Errorf("record %+v; want one INCR copy answered :2", rec)
	}
}

func TestStartRefusesABadAddress(t *testing.T) {
	if _, err := faultproxy.Start("no-port"); err == nil {
		t.Error("Start took an address without a port")
	}
	px, err := faultproxy.Start("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := px.Client("a")
	a2, _ := px.Client("a")
	if a1 != a2 || len(px.Clients()) != 1 {
		t.Error("the same name got two clients")
	}
	px.Close()
	if _, err := px.Client("b"); !errors.Is(err, faultproxy.ErrClosed) {
		t.Errorf("Client after Close: %v", err)
	}
}
