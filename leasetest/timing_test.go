package leasetest

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// timedOp draws one answered op's times: before <= call, return <= after
// as the recorder brackets them, and `at` inside in exact mode.
type timedOp struct{ before, after, at int64 }

func drawOp(t *rapid.T, label string, from int64, exact bool) timedOp {
	o := timedOp{before: from + rapid.Int64Range(0, 300).Draw(t, label+".gap")}
	o.after = o.before + rapid.Int64Range(0, 40).Draw(t, label+".latency")
	if exact {
		o.at = rapid.Int64Range(o.before, o.after).Draw(t, label+".at")
	}
	return o
}

func (o timedOp) reply(exact bool, kind model.Kind, ok bool, fence, ttl int64) reply {
	r := reply{req: backend.Request{Kind: kind}, answered: true, before: o.before, after: o.after, ttl: ttl,
		Response: backend.Response{OK: ok, Fence: fence}}
	if exact {
		r.At = time.UnixMicro(o.at)
	}
	return r
}

func (o timedOp) op(process string, kind model.Kind, ok bool, fence, ttl int64, exact bool) model.Op {
	op := model.Op{Process: process, Owner: process, Kind: kind, TTL: ttl, Call: o.before, Return: o.after, Returned: true, OK: ok}
	if ok && kind == model.Acquire || kind == model.Renew {
		op.Fence = fence
	}
	if exact {
		op.At, op.HasAt = o.at, true
	}
	return op
}

// TestTimingAgreesWithChecker: the scripted timing checks use the checker's
// own windows, with the uncertainty on both sides of every op. On a grant
// and a probe, "surely live" fails a granted probe and "surely expired" a
// refused one exactly when the checker flags the history; after a renewal
// the scripted check fails only histories the checker flags.
func TestTimingAgreesWithChecker(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		exact := rapid.Bool().Draw(rt, "exact")
		var u int64
		if !exact {
			u = rapid.Int64Range(0, 60).Draw(rt, "uncertainty")
		}
		e := &env{info: backend.Info{ServerTime: exact, Uncertainty: time.Duration(u) * time.Microsecond}}
		ttl := rapid.Int64Range(1, 300).Draw(rt, "ttl")
		renewed := rapid.Bool().Draw(rt, "renewed")
		ok := rapid.Bool().Draw(rt, "probe.ok")

		g := drawOp(rt, "grant", 0, exact)
		ops := []model.Op{g.op("A", model.Acquire, true, 1, ttl, exact)}
		last := g.reply(exact, model.Acquire, true, 1, ttl)
		from := g.after
		if renewed {
			r := drawOp(rt, "renew", g.after, exact)
			ops = append(ops, r.op("A", model.Renew, true, 1, ttl, exact))
			last = r.reply(exact, model.Renew, true, 0, ttl)
			from = r.after
		}
		p := drawOp(rt, "probe", from, exact)
		var fence int64
		if ok {
			fence = 2
		}
		ops = append(ops, p.op("B", model.Acquire, ok, fence, ttl, exact))
		probe := p.reply(exact, model.Acquire, ok, fence, ttl)

		for i := range ops {
			ops[i].Line = i + 2
		}
		h := &model.History{Name: "drawn", Header: model.Header{Version: 1, TimeUnit: "us", ClockUncertainty: u}, Ops: ops}
		cr, err := checker.Check(context.Background(), h, checker.Options{})
		if err != nil {
			rt.Fatalf("drawn history is invalid: %v", err)
		}
		scripted := ok && e.surelyLive(last, probe) || !ok && e.surelyExpired(last, probe)
		flagged := cr.Violated()
		switch {
		case scripted && !flagged:
			rt.Fatalf("a scripted check fails a history the checker accepts (u=%d, ttl=%d, probe ok=%v): %+v", u, ttl, ok, ops)
		case !renewed && flagged && !scripted:
			rt.Fatalf("the checker flags a grant and a probe the scripted check accepts (u=%d, ttl=%d, probe ok=%v): %v", u, ttl, ok, cr.Violations)
		}
	})
}
