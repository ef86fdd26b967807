package sim

// History and trace recording: each request an op of the history v1, each
// reply its return; the trace lines; the Result.

import (
	"strconv"

	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

func (w *world) newRequest(id int32, r *machine.Request) int32 {
	n := &w.nodes[id]
	op := model.Op{Process: n.process, Owner: n.owner, Key: r.Key, Kind: r.Kind, Call: w.now}
	switch r.Kind {
	case model.Acquire:
		op.TTL = r.TTL
	case model.Renew:
		op.TTL, op.Fence = r.TTL, r.Fence
	case model.Release:
		op.Fence = r.Fence
	case model.Write:
		op.Fence, op.Value, op.HasValue = r.Fence, r.Value, true
	}
	idx := int32(len(w.ops))
	w.ops = append(w.ops, op)
	to := coordID
	if r.To == machine.ToResource {
		to = resID
	}
	m := w.alloc()
	w.msgs[m] = envelope{from: id, to: to, inc: n.inc, op: idx, req: *r}
	return m
}

func (w *world) recordReturn(op int32, r *machine.Reply) {
	if op < 0 {
		return
	}
	o := &w.ops[op]
	o.Return, o.Returned, o.OK, o.Error = w.now, true, r.OK, r.Err
	switch o.Kind {
	case model.Acquire:
		if r.OK {
			o.Fence = r.Fence
		}
	case model.Read:
		o.Value, o.HasValue = r.Value, r.HasValue
	}
}

func (w *world) trace1(node, what, detail string) {
	if w.opts.NoTrace {
		return
	}
	w.trace = append(w.trace, TraceEvent{T: w.now, Node: node, What: what, Detail: detail})
}

func (w *world) finish() *Result {
	w.endBeliefs()
	sc := w.sc
	w.stats.Unrecovered = len(w.pendCrash)
	if len(w.pendCrash) > 0 {
		w.stats.UnrecoveredSince = w.pendCrash[0]
	}
	w.stats.Ops = len(w.ops)
	for i := range w.ops {
		w.ops[i].Line = i + 2 // line 1 is the header
	}
	h := &model.History{
		Name:   "seed-" + strconv.FormatUint(sc.Seed, 10),
		Header: model.Header{Version: 1, TimeUnit: "ms", ClockUncertainty: w.u, Semantics: sc.Sem()},
		Ops:    w.ops,
	}
	r := &Result{Scenario: sc, History: h, Trace: w.trace, Stats: w.stats}
	r.Hash = w.resultHash()
	return r
}
