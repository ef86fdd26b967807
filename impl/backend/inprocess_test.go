package backend_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// TestInProcess drives the reference through InProcess on a fake clock:
// the coordinator sees now in the chosen unit, and At is exactly that now.
func TestInProcess(t *testing.T) {
	epoch := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	now := epoch
	clock := func() time.Time { return now }
	b := backend.InProcess(memstore.New(), time.Millisecond, clock)
	ctx := context.Background()
	do := func(req backend.Request) backend.Response {
		t.Helper()
		r, err := b.Do(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := do(backend.Request{Kind: model.Acquire, Key: "k", Owner: "A", TTL: 10 * time.Millisecond})
	if !r.OK || r.Fence != 1 || !r.At.Equal(epoch) {
		t.Fatalf("Acquire(A) = %+v, want ok fence 1 at epoch", r)
	}
	now = epoch.Add(5*time.Millisecond + 300*time.Microsecond)
	if r := do(backend.Request{Kind: model.Acquire, Key: "k", Owner: "B", TTL: 10 * time.Millisecond}); r.OK || r.Reason != machine.ReasonHeld {
		t.Errorf("Acquire(B) = %+v, want refused, held", r)
	}
	if r := do(backend.Request{Kind: model.Write, Key: "k", Owner: "A", Fence: 1, Value: "a"}); !r.OK || !r.At.Equal(epoch.Add(5*time.Millisecond)) {
		t.Errorf("Write(A) = %+v, want ok at epoch+5ms (truncated to the unit)", r)
	}
	now = epoch.Add(10 * time.Millisecond)
	if r := do(backend.Request{Kind: model.Write, Key: "k", Owner: "A", Fence: 1, Value: "late"}); r.OK || r.Reason != machine.ReasonExpired {
		t.Errorf("Write(A) at expiry = %+v, want refused, expired", r)
	}
	if r := do(backend.Request{Kind: model.Read, Key: "k"}); !r.OK || !r.HasValue || r.Value != "a" {
		t.Errorf("Read = %+v, want \"a\"", r)
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Do(ctx2, backend.Request{Kind: model.Read, Key: "k"}); err == nil {
		t.Errorf("Do with a canceled context succeeded")
	}
}

// capped grants at most 4 ticks, whatever is asked (machine.Granter).
type capped struct{ *memstore.Store }

func (capped) GrantTTL(ttl int64) int64 { return min(ttl, 4) }

// A coordinator that grants less than asked says so: Response.TTL is the
// TTL applied, and the lease expires by it; as asked, TTL is 0.
func TestInProcessGrantedTTL(t *testing.T) {
	epoch := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	now := epoch
	b := backend.InProcess(capped{memstore.New()}, time.Millisecond, func() time.Time { return now })
	ctx := context.Background()
	r, err := b.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: "A", TTL: 10 * time.Millisecond})
	if err != nil || !r.OK || r.TTL != 4*time.Millisecond {
		t.Fatalf("Acquire(A, 10ms) = %+v, %v; want granted with TTL 4ms", r, err)
	}
	now = epoch.Add(2 * time.Millisecond)
	if r, _ := b.Do(ctx, backend.Request{Kind: model.Renew, Key: "k", Owner: "A", Fence: 1, TTL: 3 * time.Millisecond}); !r.OK || r.TTL != 0 {
		t.Errorf("Renew(A, 3ms) = %+v; want ok as asked (TTL 0)", r)
	}
	now = epoch.Add(5 * time.Millisecond) // past 2+3
	if r, _ := b.Do(ctx, backend.Request{Kind: model.Acquire, Key: "k", Owner: "B", TTL: 10 * time.Millisecond}); !r.OK || r.Fence != 2 {
		t.Errorf("Acquire(B) after the granted expiry = %+v; want fence 2", r)
	}
}
