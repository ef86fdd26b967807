package pgadvisory

import (
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/model"
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
