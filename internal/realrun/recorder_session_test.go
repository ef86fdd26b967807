package realrun

import (
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/recording"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// A session lock (Info.EndsWithClient) is freed when the server sees its
// crashed holder's connection close: B granted after A's crash, well
// within A's TTL, is explained by the session's end and judged clean; the
// same history without it — a lease, which outlives its holder until its
// TTL — is a violation, and so is B granted before A's crash.
func TestSessionEndExplainsGrantAfterCrash(t *testing.T) {
	const ttl = 2_000_000 // µs
	hist := func(t *testing.T, crashAt int64, sessionEnd bool) *model.History {
		r, err := NewRecorder(context.Background(), backend.Info{Name: "t", Fences: backend.NoFences, Writes: backend.CheckedWrites, EndsWithClient: sessionEnd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		grant := func(process string, call int64) {
			op := model.Op{Process: process, Owner: process, Key: "k", Kind: model.Acquire}
			recording.Call(&op, &machine.Request{TTL: ttl})
			op.Call = call
			recording.Return(&op, call+1000, &machine.Reply{OK: true, TTL: ttl})
			r.record(op)
		}
		grant("A", 0)
		if sessionEnd {
			r.RecordSessionEnd("k", "A", "A", 0, crashAt)
		}
		grant("B", 300_000)
		h, err := r.Finish(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	verdict := func(t *testing.T, h *model.History) checker.Verdict {
		res, err := checker.Check(context.Background(), h, checker.Options{Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return res.Properties[0].Verdict
	}
	if v := verdict(t, hist(t, 100_000, true)); v != checker.Holds {
		t.Errorf("B granted after A's session ended with its crash: linearizable %v, want holds", v)
	}
	if v := verdict(t, hist(t, 100_000, false)); v != checker.Violated {
		t.Errorf("B granted within A's lease, no session end recorded: linearizable %v, want violated", v)
	}
	if v := verdict(t, hist(t, 500_000, true)); v != checker.Violated {
		t.Errorf("B granted before A's crash ended its session: linearizable %v, want violated", v)
	}
}
