package pgadvisory

import (
	"bytes"
	"context"
	"github.com/jackc/pgx/v5/pgxpool"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faultproxy"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/verify"
)

// TestSessionEndDropsLock ends the lock holder's session on the server
// (pg_terminate_backend, as a restart, a failover or an operator does)
// and shows what each configuration does with it: the lock goes with the
// session at once, so B is granted; the default configuration's holder
// still writes through its pool after B's grant (the hazard the analysis
// is about), the hardened one's write is refused and its context is
// cancelled within its declared loss lateness.
func TestSessionEndDropsLock(t *testing.T) {
	s := servers.ForTest(t, servers.StartPostgres)
	const ttl = 900 * time.Millisecond
	for _, hardened := range []bool{false, true} {
		t.Run(Info(hardened, ttl).Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			prefix := Info(hardened, ttl).Name
			open := func() (*Client, backend.Backend) {
				c, err := Open(ctx, s.URL, "", prefix, hardened)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				if hardened {
					return c, Hardened{c}
				}
				return c, c
			}
			ac, a := open()
			bc, b := open()
			defer ac.Cleanup(context.Background())
			do := func(c backend.Backend, kind model.Kind, owner, value string) backend.Response {
				t.Helper()
				r, err := c.Do(ctx, backend.Request{Kind: kind, Key: "k", Owner: owner, TTL: ttl, Value: value})
				if err != nil && kind != model.Write {
					t.Fatalf("%s %s: %v", owner, kind, err)
				}
				return r
			}
			if r := do(a, model.Acquire, "A", ""); !r.OK {
				t.Fatalf("A's acquire refused: %+v", r)
			}
			h, holding := backend.As[backend.Holding](a)
			if holding != hardened {
				t.Fatalf("Holding: %v, want %v (only the hardened configuration has a signal)", holding, hardened)
			}
			var lost <-chan struct{}
			if holding {
				lost = h.Signal("k", "A")
			}
			if r := do(b, model.Acquire, "B", ""); r.OK || r.Reason != "held" {
				t.Fatalf("B's acquire while A holds: %+v, want refused (held)", r)
			}
			// Another session of the service ends A's: the lock's holder
			// is the one session holding an advisory lock.
			// pg_terminate_backend only signals the backend; its locks go
			// when the process has exited, so the call waits for the exit
			// (the timeout argument) and says whether it came.
			var n int
			var gone bool
			if err := bc.pool.QueryRow(ctx,
				`SELECT count(*), coalesce(bool_and(pg_terminate_backend(pid, 10000)), false) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`).Scan(&n, &gone); err != nil || n != 1 || !gone {
				t.Fatalf("terminating A's session: %d sessions, exited %v, %v", n, gone, err)
			}
			ended := time.Now()
			if r := do(b, model.Acquire, "B", ""); !r.OK {
				t.Fatalf("B's acquire after A's session ended: %+v, want granted (the lock goes with the session)", r)
			}
			r := do(a, model.Write, "A", "A:1")
			if hardened {
				if r.OK {
					t.Fatalf("A's write on its ended session was accepted after B's grant")
				}
				select {
				case <-lost:
					if d := time.Since(ended); d > Info(true, ttl).LossLateness+ttl/3 {
						t.Errorf("A's context cancelled %v after its session ended, declared at most %v", d, Info(true, ttl).LossLateness)
					}
				case <-time.After(Info(true, ttl).LossLateness + time.Second):
					t.Fatalf("A's context still alive %v after its session ended", time.Since(ended))
				}
				return
			}
			if !r.OK {
				t.Fatalf("A's write through the pool refused (%+v): the hazard did not show", r)
			}
		})
	}
}

// The hardened configuration with the bug of Client.silentEnd planted: it
// ends the lock's session without saying so and goes on as the holder.
func init() { registerClient("pg-advisory-hardened-silent", true, true) }

// TestLibraryEndedSessionReported delays the replies to A's connection
// (at the socket, faultproxy) past what its heartbeat waits: pgx closes a
// connection whose statement's context ended, so A's own library ends the
// session, and the server — its own record, pg_locks and
// pg_stat_activity — frees the lock, before the TTL of A's last answered
// renewal, and B is granted. The library says so: one release of its own
// (Renewal.Release), dated no later than the server's record shows the
// lock gone and no earlier than the delay, and the lock's context
// cancelled. The planted library that ends the session silently says
// nothing and never cancels, while the server frees the lock all the same.
func TestLibraryEndedSessionReported(t *testing.T) {
	s := servers.ForTest(t, servers.StartPostgres)
	// A heartbeat every second, each ping given a second.
	const ttl = 3 * time.Second
	for _, silent := range []bool{false, true} {
		name := map[bool]string{false: "reported", true: "planted: ended silently"}[silent]
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			proxy, err := faultproxy.Start(s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer proxy.Close()
			pa, err := proxy.Client("A")
			if err != nil {
				t.Fatal(err)
			}
			prefix := map[bool]string{false: "reported", true: "silent"}[silent]
			open := func(addr string) *Client {
				c, err := Open(ctx, s.URL, addr, prefix, true)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
			ac, bc := open(pa.Addr()), open("")
			defer bc.Cleanup(context.Background())
			ac.silentEnd = silent
			a, b := Hardened{ac}, Hardened{bc}
			var mu sync.Mutex
			var releases []backend.Renewal
			renewed := make(chan time.Time, 16)
			a.Observe(func(r backend.Renewal) {
				if r.Release {
					mu.Lock()
					releases = append(releases, r)
					mu.Unlock()
				} else if r.OK {
					select {
					case renewed <- r.End:
					default: // the test waits for the first ones only
					}
				}
			})
			do := func(c backend.Backend, owner string) backend.Response {
				t.Helper()
				r, err := c.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: owner, TTL: ttl})
				if err != nil {
					t.Fatalf("%s's acquire: %v", owner, err)
				}
				return r
			}
			if r := do(a, "A"); !r.OK {
				t.Fatalf("A's acquire refused: %+v", r)
			}
			lost := a.Signal("k", "A")
			var pid int
			if err := bc.pool.QueryRow(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted`).Scan(&pid); err != nil {
				t.Fatalf("A's session in pg_locks: %v", err)
			}
			// Right after a heartbeat was answered (a renewal that
			// promised the lock for a TTL), the replies to A are held back
			// longer than its next ping waits.
			var lastOK time.Time
			select {
			case lastOK = <-renewed:
			case <-time.After(2 * ttl):
				t.Fatal("no heartbeat of A's was answered")
			}
			pa.Delay(faultproxy.Reply, ttl)
			delayed := time.Now()
			// The server's record: A's backend and its advisory lock gone.
			goneAt := serverGoneAt(ctx, t, bc.pool, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND locktype = 'advisory')
					OR EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1), clock_timestamp()`, pid, delayed.Add(2*ttl), "A's session still alive after its replies were delayed")
			if r := do(b, "B"); !r.OK {
				t.Fatalf("B's acquire after A's session ended: %+v, want granted", r)
			}
			if granted := time.Now(); !granted.Before(lastOK.Add(ttl)) {
				t.Fatalf("B granted %v after A's last answered renewal, past its TTL %v: the lock did not end early, the test shows nothing", granted.Sub(lastOK), ttl)
			}
			mu.Lock()
			rel := append([]backend.Renewal(nil), releases...)
			mu.Unlock()
			if silent {
				if len(rel) != 0 {
					t.Fatalf("the planted library reported %+v", rel)
				}
				select {
				case <-lost:
					t.Fatal("the planted library cancelled the lock's context")
				default:
				}
				return
			}
			if len(rel) != 1 || rel[0].Owner != "A" || rel[0].Key != "k" || rel[0].Answered {
				t.Fatalf("A's library reported %+v, want one unanswered release of A's lock on k", rel)
			}
			if at := rel[0].Start; at.Before(delayed) || at.After(goneAt) {
				t.Errorf("A's release dated %v after the delay, the server's record shows the lock gone %v after it: want within",
					at.Sub(delayed), goneAt.Sub(delayed))
			}
			t.Logf("A's release dated %v after the delay; the server's record shows the lock gone %v after it; B granted %v after A's last answered renewal (TTL %v)",
				rel[0].Start.Sub(delayed), goneAt.Sub(delayed), time.Since(lastOK), ttl)
			select {
			case <-lost:
			case <-time.After(time.Second):
				t.Fatal("A's library ended its session, and the lock's context is still alive")
			}
		})
	}
}

// TestHeartbeatTimeoutJudged replays a round of verify where the replies
// to h1 are delayed past its heartbeat's wait (testdata/heartbeat-timeout:
// pgx closes the connection, the server frees the lock, h2 is granted
// within the TTL of h1's last renewal): the library that says it let go
// holds every property; the planted one that ends the session silently is
// caught (linearizable: the lock ended before h1's renewal said).
func TestHeartbeatTimeoutJudged(t *testing.T) {
	servers.ForTest(t, servers.StartPostgres)
	for _, tc := range []struct {
		name, client string
		code         int
	}{
		{"reported", clientName(true), verify.ExitOK},
		{"planted: ended silently", "pg-advisory-hardened-silent", verify.ExitViolation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			c := verify.Command{Name: "pgadvisory-verify", Backends: []verify.Backend{verifyBackend(clientName(true), "", tc.client, true)}}
			code := c.Run(context.Background(), []string{"--backend", clientName(true), "--ttl", "2s", "--scenario", "testdata/heartbeat-timeout.scenario.json",
				"--out", t.TempDir(), "--progress=false", "--quiet"}, &out, &errOut)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s\n%s", code, tc.code, out.String(), errOut.String())
			}
			if tc.code == verify.ExitViolation && !regexp.MustCompile(`\n\s*linearizable\s+1\n`).MatchString(out.String()) {
				t.Fatalf("the planted library was not caught by linearizable:\n%s", out.String())
			}
		})
	}
}

// TestWriteKeepsSessionAlive: idle_session_timeout counts from the
// session's last statement, and the hardened configuration's write is a
// statement on the lock's session. A holder that renews, writes most of a
// heartbeat interval later and then goes silent (its heartbeat stopped, as
// a pause or a crash stops it) keeps the lock, by the server's own record
// (pg_locks), a TTL after the write: more than TTL + the idle timer's
// slack after its last renewal, within the declared ExpiryLateness.
func TestWriteKeepsSessionAlive(t *testing.T) {
	s := servers.ForTest(t, servers.StartPostgres)
	const ttl = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ac, err := Open(ctx, s.URL, "", "idle", true)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	defer ac.Cleanup(context.Background())
	do := func(kind model.Kind, value string) time.Time {
		t.Helper()
		r, err := ac.Do(ctx, backend.Request{Kind: kind, Key: "k", Owner: "A", TTL: ttl, Value: value})
		if err != nil || !r.OK {
			t.Fatalf("A's %s: %+v, %v", kind, r, err)
		}
		return time.Now()
	}
	do(model.Acquire, "")
	var pid int
	if err := ac.pool.QueryRow(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted`).Scan(&pid); err != nil {
		t.Fatalf("A's session in pg_locks: %v", err)
	}
	ac.hold("k", "A").cancel() // the heartbeat stops: nothing but what follows reaches the session
	renewed := do(model.Renew, "")
	time.Sleep(ttl/3 - 50*time.Millisecond)
	wrote := do(model.Write, "A:1")
	goneAt := serverGoneAt(ctx, t, ac.pool, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND locktype = 'advisory'), clock_timestamp()`,
		pid, renewed.Add(3*ttl), "A's lock still held 3 TTLs after its last renewal")
	afterWrite, afterRenew := goneAt.Sub(wrote), goneAt.Sub(renewed)
	t.Logf("A's lock gone %v after its write, %v after its last renewal (TTL %v, declared lateness %v)", afterWrite, afterRenew, ttl, expiryLateness(ttl))
	if afterWrite < ttl-50*time.Millisecond {
		t.Errorf("the lock went %v after the write, before the idle timeout %v: the write did not count as the session's last statement", afterWrite, ttl)
	}
	if afterRenew <= ttl+idleSlack {
		t.Errorf("the lock went %v after the last renewal, within TTL + the idle timer's slack: the write extended nothing, the test shows nothing", afterRenew)
	}
	if afterRenew > ttl+expiryLateness(ttl) {
		t.Errorf("the lock went %v after the last renewal, later than TTL + the declared ExpiryLateness %v", afterRenew, expiryLateness(ttl))
	}
}

// serverGoneAt polls the server's record (query: still there, and the
// server's clock) for backend pid until it is gone, and returns the
// server's time it first saw it gone; past deadline it fails with what.
func serverGoneAt(ctx context.Context, t *testing.T, pool *pgxpool.Pool, query string, pid int, deadline time.Time, what string) time.Time {
	t.Helper()
	for {
		var held bool
		var now time.Time
		if err := pool.QueryRow(ctx, query, pid).Scan(&held, &now); err != nil {
			t.Fatal(err)
		}
		if !held {
			return now
		}
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
