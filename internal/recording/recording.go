// Package recording holds the rules by which every driver records a
// history (docs/specification.md §4): what an op records of its request
// and of its answer, what a fault record of a planned fault says, and how
// a finished history's records are made final. The simulator, the real
// runner and vclient each call it, so that the three write one format by
// one reading of it.
//
// It knows nothing of clocks, goroutines or storage: the driver says when
// (in the history's unit, on its own timeline), keeps the ops where it
// likes (the simulator in its copy-on-write log, the real runner under a
// lock) and orders them itself (it alone knows the order a process issued
// its requests in). Nothing here allocates: the simulator calls it for
// every request the explorer's states send.
package recording

import (
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Call fills in what op records of its request r, by kind: the TTL an
// acquire or a renew asks for; the fence a renew, a release or a write
// presents (an acquire's fence is the one its grant returns: Return); the
// value a write writes. A read records nothing of its request. The driver
// has set the op's process, owner, key, kind and call; r's times are in
// the history's unit. r is the machine contract's request, which the real
// runner's requests are made from, and is read where it lies: the
// simulator records every request the explorer's states send.
func Call(op *model.Op, r *machine.Request) {
	switch op.Kind {
	case model.Acquire:
		op.TTL = r.TTL
	case model.Renew:
		op.TTL, op.Fence = r.TTL, r.Fence
	case model.Release:
		op.Fence = r.Fence
	case model.Write:
		op.Fence, op.Value, op.HasValue = r.Fence, r.Value, true
	}
}

// Return records on op the answer r that arrived at ret, in the history's
// unit: ok and r.Err, the refusal's reason (Refusal, for a service that
// may not give one); the TTL granted when r.TTL says it differs from the
// one asked, so that a lease granted shorter is judged as granted; the
// fence only on a granted acquire (format v1: a refused or unanswered one
// names none); the value only on a read. An op whose answer never arrives
// gets no Return: its outcome is unknown. r is the machine contract's
// reply (the real runner makes one from its backend's answer for its
// machines anyway) and is read where it lies, as Call's request.
func Return(op *model.Op, ret int64, r *machine.Reply) {
	op.Return, op.Returned, op.OK, op.Error = ret, true, r.OK, r.Err
	if r.TTL > 0 {
		op.TTL = r.TTL
	}
	switch op.Kind {
	case model.Acquire:
		if r.OK {
			op.Fence = r.Fence
		}
	case model.Read:
		op.Value, op.HasValue = r.Value, r.HasValue
	}
}

// Refusal is the error field of an answer from a service that may say no
// without saying why: none for a yes, the reason for a no,
// machine.ReasonRefused for a no without one.
func Refusal(ok bool, reason string) string {
	if ok {
		return ""
	}
	if reason == "" {
		return machine.ReasonRefused
	}
	return reason
}

// Fault is the record of the planned fault f as it struck target at
// start, lasting dur (0: an instant, or to the end of the run), times in
// the history's unit. The driver adds what it alone knows (Detail,
// Partial) and, where it measured them, its own start and end.
func Fault(f faults.Fault, target string, start, dur int64) model.FaultRecord {
	rec := model.FaultRecord{Kind: string(f.Kind), Target: target, Peer: f.Peer, Start: start, Amount: f.Amount}
	if dur > 0 {
		rec.End, rec.HasEnd = start+dur, true
	}
	return rec
}

// Finish makes a complete history's records final: an acquire whose
// answer never arrived names no fence (its grant, if there was one, was
// never heard, and format v1 refuses an unanswered acquire with a fence:
// the checker places the unheard grant itself), and every record is
// numbered with the line WriteHistory writes it on, so that the lines a
// verdict cites are the lines of the saved file. Call it again after
// adding fault records: they come before the ops.
func Finish(h *model.History) {
	for i := range h.Ops {
		if o := &h.Ops[i]; o.Kind == model.Acquire && !o.Returned {
			o.Fence = 0
		}
	}
	h.NumberLines()
}
