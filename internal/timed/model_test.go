package timed

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// In exact mode, with one op at a time, the timed model is the reference
// coordinator (internal/impl/memstore, itself checked against reference/lease.py):
// stepping an op with the outcome the reference gave leads to exactly one
// state, and with the other outcome to none.
func TestExactStepIsTheReference(t *testing.T) {
	rules := Rules{Semantics: model.Seed, Fences: model.Sequential}
	names := NewNames()
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		store := memstore.New()
		s := InitialState()
		var now int64
		fences := map[string]int64{}
		for i := range 60 {
			now += 1 + int64(rng.IntN(4))
			owner := fmt.Sprintf("o%d", rng.IntN(3))
			op := model.Op{Process: owner, Owner: owner, Call: now, Return: now, Returned: true, At: now, HasAt: true}
			switch rng.IntN(5) {
			case 0:
				op.Kind, op.TTL = model.Acquire, int64(1+rng.IntN(8))
				op.Fence, op.OK = store.Acquire("k", owner, op.TTL, now)
				if op.OK {
					fences[owner] = op.Fence
				} else {
					op.Fence = 0
				}
			case 1:
				op.Kind, op.TTL = model.Renew, int64(1+rng.IntN(8))
				if rng.IntN(2) == 0 {
					op.Fence = fences[owner]
				}
				op.OK = store.Renew("k", owner, op.TTL, op.Fence, now)
			case 2:
				op.Kind = model.Release
				op.OK = store.Release("k", owner, 0)
			case 3:
				op.Kind, op.Fence, op.Value, op.HasValue = model.Write, max(fences[owner], 1), fmt.Sprintf("v%d", i), true
				op.OK = store.Write("k", owner, op.Fence, op.Value, now) == nil
			default:
				op.Kind, op.OK = model.Read, true
				op.Value, op.HasValue = store.Read("k")
			}
			in := names.Input(&op, 0)
			next := StepApplied(rules, s, &in, nil)
			if len(next) != 1 {
				t.Fatalf("seed %d op %d %s: %d states, want 1 (from %s)", seed, i, op.Describe(), len(next), names.DescribeState(model.Seed, s))
			}
			if op.Kind != model.Read && !(op.Kind == model.Acquire && op.OK) {
				flipped := in
				flipped.OK = !flipped.OK
				if n := len(StepApplied(rules, s, &flipped, nil)); n != 0 {
					t.Fatalf("seed %d op %d %s with the other outcome: %d states, want none", seed, i, op.Describe(), n)
				}
			}
			s = next[0]
		}
	}
}

// Porcupine is told each process's order at a tie: the layout puts a
// return before the next call of its own process at the same time, and
// calls of other processes before it; two processes tied at one instant
// is a conflict it reports.
func TestTieLayout(t *testing.T) {
	h := &model.History{Header: model.DefaultHeader(), Ops: []model.Op{
		{Process: "p", Owner: "p", Kind: model.Read, Call: 0, Return: 5, Returned: true, OK: true},
		{Process: "p", Owner: "p", Kind: model.Read, Call: 5, Return: 7, Returned: true, OK: true},
		{Process: "q", Owner: "q", Kind: model.Read, Call: 5, Return: 9, Returned: true, OK: true},
	}}
	l := tiePositions(h)
	if !(l.ret[0] < l.call[1] && l.call[2] < l.ret[0]) || l.conflict {
		t.Errorf("layout %+v: want p's return before p's next call, q's call before p's return, no conflict", l)
	}
	h.Ops = append(h.Ops,
		model.Op{Process: "q", Owner: "q", Kind: model.Read, Call: 9, Return: 10, Returned: true, OK: true},
		model.Op{Process: "r", Owner: "r", Kind: model.Read, Call: 0, Return: 9, Returned: true, OK: true},
		model.Op{Process: "r", Owner: "r", Kind: model.Read, Call: 9, Return: 11, Returned: true, OK: true})
	if !TieConflict(h) {
		t.Errorf("q and r both tie at t=9: want a conflict")
	}
}
