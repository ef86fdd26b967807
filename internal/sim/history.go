package sim

// History and trace recording: each request an op of the history v1, each
// reply its return; the trace lines; the Result.

import (
	"slices"
	"strconv"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/recording"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

func (w *World) newRequest(id int32, r *machine.Request) int32 {
	n := &w.nodes[id]
	// Field by field, not a literal: a literal of a variable whose address
	// is taken is built aside and copied.
	var op model.Op
	op.Process, op.Owner, op.Key, op.Kind, op.Call = n.process, n.owner, r.Key, r.Kind, w.now
	if r.Owner != "" && n.kind == kindClient {
		op.Owner = r.Owner // an adversarial client speaks for whom it claims
	}
	recording.Call(&op, r)
	idx := int32(w.ops.len())
	w.ops.add(op)
	if w.hashing {
		w.opHash = append(w.opHash, 0)
		w.rehashOp(idx)
	}
	if w.mon != nil {
		w.mon.Called(w, int(idx))
	}
	to := coordID
	if r.To == machine.ToResource {
		to = resID
	}
	w.retryCheck(n, idx)
	m := w.alloc()
	w.msgs[m] = envelope{from: id, to: to, inc: n.inc, op: idx, req: *r, sentAt: w.now}
	return m
}

func (w *World) setAt(op int32, at int64) {
	o := w.ops.mut(int(op))
	o.At, o.HasAt = at, true
	if w.hashing {
		w.rehashOp(op)
	}
}

func (w *World) recordReturn(op int32, r *machine.Reply) {
	if op < 0 {
		return
	}
	// Err as the machine gave it, not through recording.Refusal: a
	// machine's no without a reason has always been recorded as one, and
	// the simulator's histories stay as they were.
	recording.Return(w.ops.mut(int(op)), w.now, r)
	if w.hashing {
		w.rehashOp(op)
	}
	if w.mon != nil {
		w.mon.Returned(w, int(op))
	}
}

// tracing reports whether the run keeps a trace: a trace line's detail
// that costs a string to build (a formatted number, a fault's or a
// request's description) is built only then, under it.
func (w *World) tracing() bool { return !w.opts.NoTrace }

func (w *World) trace1(node, what, detail string) {
	if !w.tracing() {
		return
	}
	w.trace = append(w.trace, TraceEvent{T: w.now, Node: node, What: what, Detail: detail})
}

// traceLine is the 1-based line the next trace event will have (0 without
// a trace).
func (w *World) traceLine() int {
	if w.opts.NoTrace {
		return 0
	}
	return len(w.trace) + 1
}

// Ops returns a copy of the history's operations so far (Line not yet
// set). Op and NumOps read them in place.
func (w *World) Ops() []model.Op { return w.ops.slice() }

// NumOps returns the number of operations in the history so far.
func (w *World) NumOps() int { return w.ops.len() }

// Op returns operation i of the history so far, in place: the caller must
// not modify it, nor keep it past the world's next move.
func (w *World) Op(i int) *model.Op { return w.ops.at(i) }

// ResultSoFar returns the Result the run would give if it ended now,
// leaving w as it is to go on: the explorer judges a state the monitor
// flags and then explores past it. Only what Result changes or hands over
// is copied (the spans, whose ends it closes, and the fault records,
// whose lines the history numbers), not the machines, the nodes or the
// queue: a fraction of a Clone. The history is gathered into ops' room
// (ResultInto).
func (w *World) ResultSoFar(ops []model.Op) *Result {
	c := *w
	c.beliefs = slices.Clone(w.beliefs)
	c.stops = slices.Clone(w.stops)
	c.faultRecs = slices.Clone(w.faultRecs)
	// Handed over as they are: w only appends to them, past the Result's
	// lengths, so the Result's views never change.
	c.trace = slices.Clip(w.trace)
	c.meter = w.meter.Clip()
	c.plan = slices.Clip(w.plan)
	return c.ResultInto(ops)
}

// Result ends the run where it stands and returns what it produced; a run
// ended before it was over is Truncated (its liveness is not judged past
// that point). Call it once: the world is spent (the explorer takes the
// Result of a copy).
func (w *World) Result() *Result { return w.ResultInto(nil) }

// ResultInto is Result with the history gathered into ops' room (nil: a
// new slice): the explorer judges state after state and drops each Result
// once judged, so the next reuses its History.Ops.
func (w *World) ResultInto(ops []model.Op) *Result {
	if !w.ended {
		w.stats.Truncated = true
	}
	w.end()
	w.endBeliefs()
	sc := w.sc
	lm := w.meter.Measures()
	w.stats.Recoveries, w.stats.RecoveryAt = lm.Recoveries, lm.RecoveryAt
	w.stats.Unrecovered, w.stats.UnrecoveredSince = lm.Unrecovered, lm.UnrecoveredSince
	w.stats.Handoffs, w.stats.HandoffAt = lm.Handoffs, lm.HandoffAt
	w.stats.Ops = w.ops.len()
	w.stats.Faults, w.stats.NotApplied = nil, nil
	if !w.opts.NoFaultCounts {
		w.stats.Faults = map[faults.Kind]int{}
		w.stats.NotApplied = map[faults.Kind]int{}
		for i, k := range faults.AllKinds {
			if n := w.counts[0][i]; n != 0 || w.counts[1][i] != 0 {
				w.stats.Faults[k] = n
			}
			if n := w.counts[1][i]; n != 0 {
				w.stats.NotApplied[k] = n
			}
		}
	}
	// The world is over: its spans and measurements are handed over, not
	// copied; its history is gathered from its chunks into one slice.
	h := &model.History{
		Name:   "seed-" + strconv.FormatUint(sc.Seed, 10),
		Header: model.Header{Version: 1, TimeUnit: "ms", ClockUncertainty: w.u, Semantics: sc.Sem()},
		Ops:    w.ops.sliceInto(ops),
		Faults: w.faultRecs,
	}
	recording.Finish(h)
	for i := range w.beliefs {
		if w.beliefs[i].Open {
			w.beliefs[i].To = w.now
		}
	}
	for i := range w.stops {
		if w.stops[i].Open {
			w.stops[i].To = w.now
		}
	}
	r := &Result{Scenario: sc, History: h, Trace: w.trace, Stats: w.stats, Plan: w.plan, Steps: w.steps,
		Beliefs: w.beliefs, Stops: w.stops, Pairs: w.pairs.set}
	if !w.opts.NoRunHash {
		r.Hash = w.resultHash(h.Ops)
	}
	return r
}
