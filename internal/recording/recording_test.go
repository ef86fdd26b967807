package recording

import (
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

func TestCallRecordsWhatEachKindPresents(t *testing.T) {
	for _, c := range []struct {
		kind model.Kind
		want model.Op
	}{
		{model.Acquire, model.Op{Kind: model.Acquire, TTL: 100}},
		{model.Renew, model.Op{Kind: model.Renew, TTL: 100, Fence: 7}},
		{model.Release, model.Op{Kind: model.Release, Fence: 7}},
		{model.Write, model.Op{Kind: model.Write, Fence: 7, Value: "v", HasValue: true}},
		{model.Read, model.Op{Kind: model.Read}},
	} {
		op := model.Op{Kind: c.kind}
		Call(&op, &machine.Request{Kind: c.kind, TTL: 100, Fence: 7, Value: "v"})
		if op != c.want {
			t.Errorf("%s: got %+v, want %+v", c.kind, op, c.want)
		}
	}
}

func TestReturn(t *testing.T) {
	// A refused acquire names no fence; a granted one the token; the TTL
	// granted replaces the one asked.
	op := model.Op{Kind: model.Acquire, TTL: 100}
	Return(&op, 5, &machine.Reply{Err: "held", Fence: 3})
	if op.Fence != 0 || !op.Returned || op.Return != 5 || op.OK || op.Error != "held" || op.TTL != 100 {
		t.Errorf("refused acquire: %+v", op)
	}
	op = model.Op{Kind: model.Acquire, TTL: 100}
	Return(&op, 5, &machine.Reply{OK: true, Fence: 3, TTL: 90})
	if op.Fence != 3 || !op.OK || op.TTL != 90 {
		t.Errorf("granted acquire: %+v", op)
	}
	// Only a read records the value it was answered with.
	op = model.Op{Kind: model.Write, Fence: 3, Value: "w", HasValue: true}
	Return(&op, 5, &machine.Reply{OK: true, Value: "x"})
	if op.Value != "w" || op.Fence != 3 {
		t.Errorf("write: %+v", op)
	}
	op = model.Op{Kind: model.Read}
	Return(&op, 5, &machine.Reply{OK: true, Value: "x", HasValue: true})
	if op.Value != "x" || !op.HasValue {
		t.Errorf("read: %+v", op)
	}
}

func TestRefusal(t *testing.T) {
	if Refusal(true, "held") != "" || Refusal(false, "held") != "held" || Refusal(false, "") != "refused" {
		t.Error("Refusal: a yes has no error, a no its reason or \"refused\"")
	}
}

func TestFault(t *testing.T) {
	f := faults.Fault{Kind: faults.Partition, Target: "h1", Peer: faults.Coordinator, At: 10, Duration: 50, Amount: 2}
	got := Fault(f, "p1", 20, 30)
	want := model.FaultRecord{Kind: "partition", Target: "p1", Peer: faults.Coordinator, Start: 20, End: 50, HasEnd: true, Amount: 2}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := Fault(f, "p1", 20, 0); got.HasEnd {
		t.Errorf("an instant has no end: %+v", got)
	}
}

func TestFinish(t *testing.T) {
	h := &model.History{
		Ops: []model.Op{
			{Kind: model.Acquire, Fence: 4},                           // never answered
			{Kind: model.Acquire, Fence: 5, Returned: true, OK: true}, // heard
			{Kind: model.Release, Fence: 5},                           // unanswered, presents its fence
		},
		Faults: []model.FaultRecord{{Kind: "pause"}},
	}
	Finish(h)
	if h.Ops[0].Fence != 0 || h.Ops[1].Fence != 5 || h.Ops[2].Fence != 5 {
		t.Errorf("fences: %d %d %d, want 0 5 5", h.Ops[0].Fence, h.Ops[1].Fence, h.Ops[2].Fence)
	}
	if h.Faults[0].Line != 2 || h.Ops[0].Line != 3 || h.Ops[2].Line != 5 {
		t.Errorf("lines: fault %d, ops %d..%d, want 2, 3..5", h.Faults[0].Line, h.Ops[0].Line, h.Ops[2].Line)
	}
}
