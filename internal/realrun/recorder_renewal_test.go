package realrun

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
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
