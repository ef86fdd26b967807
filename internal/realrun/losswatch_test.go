package realrun

import (
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/model"
)

// lossHistory: A granted at [0,10ms] for 1s, its library's renewal
// applied at [500,510ms] (so the hold is lost at 1.512s, with the clock
// uncertainty of 2ms); then, when unanswered, a renewal at 800ms that got
// no answer, and B granted at [2000,2010ms].
func lossHistory(unanswered bool) *model.History {
	ms := func(x int64) int64 { return x * 1000 }
	ops := []model.Op{
		{Process: "h1", Owner: "h1", Key: "k", Kind: model.Acquire, Call: 0, Return: ms(10), Returned: true, OK: true, TTL: ms(1000), Line: 1},
		{Process: "h1/renewer", Owner: "h1", Key: "k", Kind: model.Renew, Call: ms(500), Return: ms(510), Returned: true, OK: true, TTL: ms(1000), Line: 2},
	}
	if unanswered {
		ops = append(ops, model.Op{Process: "h1/renewer", Owner: "h1", Key: "k", Kind: model.Renew, Call: ms(800), TTL: ms(1000), Line: 3})
	}
	ops = append(ops, model.Op{Process: "h2", Owner: "h2", Key: "k", Kind: model.Acquire, Call: ms(2000), Return: ms(2010), Returned: true, OK: true, TTL: ms(1000), Line: 4})
	return &model.History{Header: model.Header{ClockUncertainty: 2000}, Ops: ops}
}

func TestJudgeLoss(t *testing.T) {
	const lateness = 500 * time.Millisecond
	hold := func(sig, end int64, stops ...Span) LossHold {
		return LossHold{Process: "h1", Owner: "h1", Key: "k", Call: 0, Granted: 10000, Signal: sig, End: end, EndWhy: "the round ended", Stops: stops}
	}
	for _, tc := range []struct {
		name         string
		h            *model.History
		w            LossHold
		judged, late bool
		loss         int64
		want         string
	}{
		{"in time", lossHistory(false), hold(1_900_000, 5_000_000), true, false, 1_512_000, "said the lock was lost at t=1.900s"},
		{"late, running: nothing excused", lossHistory(false), hold(3_000_000, 5_000_000), true, true, 1_512_000, "its client ran throughout: nothing excused"},
		{"late only by the time the kernel reported it stopped", lossHistory(false), hold(3_000_000, 5_000_000, Span{1_400_000, 2_900_000}), true, false, 1_512_000, "stopped for 1.388s of it (excused)"},
		{"never, past its due", lossHistory(false), hold(-1, 5_000_000), true, true, 1_512_000, "never said the lock was lost"},
		{"released before the loss", lossHistory(false), hold(-1, 1_200_000), false, false, -1, "before it was lost on the server"},
		{"an unanswered renewal, the loss proven by B's grant", lossHistory(true), hold(3_000_000, 5_000_000), true, true, 2_012_000, "h2 granted the key"},
		{"an unanswered renewal, in time after B's grant", lossHistory(true), hold(2_400_000, 5_000_000), true, false, 2_012_000, "h2 granted the key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := JudgeLoss(tc.h, tc.w, lateness)
			if v.Judged != tc.judged || v.Late != tc.late || tc.loss >= 0 && v.Loss != tc.loss {
				t.Errorf("judged %v late %v loss %d, want %v %v %d: %s", v.Judged, v.Late, v.Loss, tc.judged, tc.late, tc.loss, v.Why)
			}
			if !strings.Contains(v.Why, tc.want) {
				t.Errorf("verdict does not say %q: %s", tc.want, v.Why)
			}
		})
	}
	// Without B's grant, an unanswered renewal leaves the loss unproven.
	h := lossHistory(true)
	h.Ops = h.Ops[:3]
	if v := JudgeLoss(h, hold(-1, 5_000_000), lateness); v.Judged || v.Skip == "" {
		t.Errorf("an unproven loss was judged: %+v", v)
	}
}
