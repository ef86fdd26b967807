package realrun

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// A library's next renewal starting in the same microsecond its last one
// ended touches it in the history, never overlaps it: the call rounded
// down and the return rounded up would otherwise make the history invalid
// ("a process's operations must not overlap").
func TestRenewalsTouchNeverOverlap(t *testing.T) {
	r, err := NewRecorder(context.Background(), backend.Info{Name: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := func(ns int64) time.Time { return r.start.Add(time.Duration(ns)) }
	r.RecordRenewal(backend.Renewal{Key: "k", Owner: "A", Start: at(500_000), End: at(1_000_500), Answered: true, OK: true, TTL: time.Second})
	r.RecordRenewal(backend.Renewal{Key: "k", Owner: "A", Start: at(1_000_700), End: at(2_000_000), Answered: true, OK: true, TTL: time.Second})
	h, err := r.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Ops) != 2 || h.Ops[1].Call != h.Ops[0].Return {
		t.Fatalf("renewals %+v: want the second's call at the first's return (1001µs)", h.Ops)
	}
	var buf bytes.Buffer
	if err := model.WriteHistory(&buf, h); err != nil {
		t.Fatal(err)
	}
	if _, err := model.ReadHistory(&buf, "renewals.jsonl"); err != nil {
		t.Fatalf("the history is invalid: %v", err)
	}
}

// A library that lets go by itself (it ended the session its lock lives
// in) reports a release of its own (Renewal.Release): the history records
// it as a release from "<owner>/renewer", unanswered, which explains
// another owner's grant within the TTL of the holder's last renewal — on a
// real in-process coordinator that freed the lock when the library let go.
// Without the report the same grant is a violation; the release is no
// renewal for renew-rate.
func TestLibraryReleaseRecorded(t *testing.T) {
	for _, reported := range []bool{true, false} {
		b := backend.InProcess(memstore.New(), time.Microsecond, nil)
		r, err := NewRecorder(context.Background(), backend.InProcessInfo("mem"), b.(backend.Clock))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		do := func(process string, req backend.Request) backend.Response {
			resp, ok := r.Do(ctx, b, process, req.Owner, req, time.Second, false)
			if !ok {
				t.Fatalf("%s %s: no answer", process, req.Kind)
			}
			return resp
		}
		if g := do("A", backend.Request{Kind: model.Acquire, Key: "k", Owner: "A", TTL: 10 * time.Second}); !g.OK {
			t.Fatalf("A's acquire: %+v", g)
		}
		// The library renews once, then lets go: its release reaches the
		// coordinator, which answers no one the recorder hears.
		start := time.Now()
		rn, err := b.Do(ctx, backend.Request{Kind: model.Renew, Key: "k", Owner: "A", TTL: 10 * time.Second})
		if err != nil || !rn.OK {
			t.Fatalf("A's library's renewal: %+v, %v", rn, err)
		}
		r.RecordRenewal(backend.Renewal{Key: "k", Owner: "A", Start: start, End: time.Now(), Answered: true, OK: true, TTL: 10 * time.Second})
		let := time.Now()
		if reported {
			r.RecordRenewal(backend.Renewal{Key: "k", Owner: "A", Start: let, End: let, Release: true})
		}
		if rel, err := b.Do(ctx, backend.Request{Kind: model.Release, Key: "k", Owner: "A"}); err != nil || !rel.OK {
			t.Fatalf("A's library's release: %+v, %v", rel, err)
		}
		if g := do("B", backend.Request{Kind: model.Acquire, Key: "k", Owner: "B", TTL: 10 * time.Second}); !g.OK {
			t.Fatalf("B's acquire after A's library let go: %+v", g)
		}
		h, err := r.Finish(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var releases int
		for _, op := range h.Ops {
			if op.Process == RenewerProcess("A") && op.Kind == model.Release {
				releases++
				if op.Returned {
					t.Errorf("the library's release was recorded answered: %+v", op)
				}
			}
		}
		if want := map[bool]int{true: 1, false: 0}[reported]; releases != want {
			t.Fatalf("reported %v: %d releases of A/renewer in the history, want %d: %+v", reported, releases, want, h.Ops)
		}
		if bs := RenewalBursts(h, 0); len(bs) != 1 || bs[0].Total != 1 {
			t.Errorf("renewal bursts %+v: want A's one renewal, not its release", bs)
		}
		cr, err := checker.Check(ctx, h, checker.Options{Timeout: 30 * time.Second})
		if err != nil {
			t.Fatalf("the recorded history is not valid: %v", err)
		}
		if got := cr.Verdict("linearizable"); (got == checker.Holds) != reported || got == checker.Unknown {
			t.Errorf("reported %v: linearizable %v: want it to hold only when the library's release is in the history", reported, got)
		}
	}
}
