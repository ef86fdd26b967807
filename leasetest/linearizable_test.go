package leasetest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/model"
)

// freedBetween is a lease service in front of which the network holds the
// duplicate of owner's acquire until the lease has come free: it passes the
// original through, says so on refused, and lets the duplicate go only once
// released is closed. What the duplicate got is kept in dup.
type freedBetween struct {
	backend.Backend
	owner    string
	seen     int
	refused  chan backend.Response
	released chan struct{}
	dup      backend.Response
}

func (f *freedBetween) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	if req.Owner != f.owner || req.Kind != model.Acquire {
		return f.Backend.Do(ctx, req)
	}
	f.seen++ // only owner's goroutine comes here
	if f.seen == 2 {
		<-f.released
	}
	resp, err := f.Backend.Do(ctx, req)
	switch f.seen {
	case 1:
		f.refused <- resp
	case 2:
		f.dup = resp
	}
	return resp, err
}

// TestDuplicateTookEffect is the ghost grant behind a flaky
// TestRedislockOneFinding: b's acquire is refused while a holds the lease,
// a releases, and the duplicate of b's acquire, delivered after that, is
// granted — b holds the lease. c's acquire is then refused. The history
// must explain that refusal: the op of b's acquire, whose window covers
// its duplicate, has to record the grant the duplicate got, not the
// original's refusal (which changed nothing). Deterministic: nothing
// expires (a 10 s TTL), and the duplicate goes only after the release has
// been answered. In interval and in exact mode (the op's `at` is the
// answer's).
func TestDuplicateTookEffect(t *testing.T) {
	for _, exact := range []bool{false, true} {
		name := "interval"
		if exact {
			name = "exact"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			lease := backend.InProcess(memstore.New(), time.Microsecond, nil)
			info := backend.InProcessInfo("duplicated")
			info.ServerTime = exact
			var clk backend.Clock
			if exact {
				clk = lease.(backend.Clock)
			}
			rec, err := realrun.NewRecorder(ctx, info, clk)
			if err != nil {
				t.Fatal(err)
			}
			f := &freedBetween{Backend: lease, owner: "b", refused: make(chan backend.Response, 1), released: make(chan struct{})}
			w := &workload{Backend: f, every: 1} // every holder request delivered twice
			do := func(owner string, kind model.Kind) (backend.Response, bool) {
				req := backend.Request{Kind: kind, Key: "k", Owner: owner}
				if kind == model.Acquire {
					req.TTL = 10 * time.Second
				}
				return rec.Do(ctx, w, owner, owner, req, 5*time.Second, false)
			}

			if r, ok := do("a", model.Acquire); !ok || !r.OK {
				t.Fatalf("a's acquire = %+v (answered %v), want granted", r, ok)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				do("b", model.Acquire)
			}()
			if r := <-f.refused; r.OK {
				t.Fatalf("b's original acquire = %+v while a holds the lease, want refused", r)
			}
			if r, ok := do("a", model.Release); !ok || !r.OK {
				t.Fatalf("a's release = %+v (answered %v), want ok", r, ok)
			}
			close(f.released)
			<-done
			if !f.dup.OK {
				t.Fatalf("the duplicate of b's acquire = %+v after a released, want granted: the test sets nothing up", f.dup)
			}
			if r, ok := do("c", model.Acquire); !ok || r.OK {
				t.Fatalf("c's acquire = %+v (answered %v), want refused: b's duplicate holds the lease", r, ok)
			}

			h, err := rec.Finish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			cr, err := checker.Check(ctx, h, checker.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range cr.Violations {
				t.Errorf("%s: %s", v.Property, v.Explanation)
			}
			if cr.Reason != "" {
				t.Errorf("undecided: %s", cr.Reason)
			}
			if t.Failed() {
				var b bytes.Buffer
				model.WriteHistory(&b, h)
				t.Logf("history:\n%s", b.String())
			}
		})
	}
}
