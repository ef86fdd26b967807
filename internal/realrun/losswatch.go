package realrun

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// A library that holds while it says so (backend.Holding) promises its
// signal once the lock is lost. Every round judges it, whatever its faults:
// after each granted acquire the runner takes the library's signal and
// notes when it came; after the run the loss is read from the server's
// record in the history (the end of the last grant or renewal of the hold
// the server applied) and the signal must come within Info.LossLateness of
// it, not counting the time the kernel reported the client's process
// stopped (or, for a client in the harness's process, the time its
// backend.Stopper had the whole client stopped). The fault's name excuses
// nothing: a blackholed, delayed or partitioned client runs.

// lossWatch is one hold of a library that signals its loss: from a
// granted acquire until the hold ends on the client's side (its release
// sent, its next grant, its crash, the run's end).
type lossWatch struct {
	process, owner, key string
	fence               int64
	call                int64 // the granting acquire's call, µs
	granted             int64 // its return
	sig                 int64 // when the signal came; -1 none (yet)
	end                 int64 // the hold ended on the client's side; -1 open
	endWhy              string
	stops               func() []Span // when the client was stopped
}

// Span is a time a client was stopped, in µs on the history's timeline.
type Span struct{ From, To int64 }

// LossVerdict is loss-signal's judgement of one hold in a round: nil
// Violation and Judged true when the signal came in time, Judged false
// when the hold was not lost on the server, or ended on the client's side
// before the signal was due (Why says which).
type LossVerdict struct {
	Process, Owner string
	Judged, Late   bool
	// Loss is when the hold was lost on the server; Signal when the
	// library said so (-1: not by End); Lateness how long after the loss,
	// not counting Excused, the time its client was stopped.
	Loss, Signal, End int64
	Lateness, Excused time.Duration
	// Why is the verdict told, with the server's record it rests on;
	// Skip, for a hold not judged, why in a few words.
	Why, Skip string
}

// watchLoss starts watching the signal of the hold an acquire of b's was
// just granted (called at call, µs), when b holds while it says so.
// It runs on the call's goroutine: p's names come as they were at the
// call.
func (r *runner) watchLoss(ctx context.Context, b backend.Backend, node, process, owner, key string, fence, call int64) {
	h, ok := backend.As[backend.Holding](b)
	if !ok {
		return
	}
	now := r.now()
	w := &lossWatch{process: process, owner: owner, key: key, fence: fence, call: call, granted: now, sig: -1, end: -1}
	if k, ok := backend.As[kernelStops](b); ok {
		w.stops = func() []Span {
			var out []Span
			for _, s := range k.Stops() {
				to := r.rec.Since(s.To)
				if s.Open {
					to = r.rec.Now()
				}
				out = append(out, Span{int64(r.rec.Since(s.From) / time.Microsecond), int64(to / time.Microsecond)})
			}
			return out
		}
	} else {
		w.stops = func() []Span {
			r.mu.Lock()
			defer r.mu.Unlock()
			return slices.Clone(r.wholeStops[node])
		}
	}
	r.mu.Lock()
	for _, o := range r.watches {
		if o.process == process && o.end < 0 {
			o.end, o.endWhy = now, "granted again"
		}
	}
	r.watches = append(r.watches, w)
	r.mu.Unlock()
	sig := h.Signal(key, owner)
	if sig == nil {
		r.mu.Lock()
		w.end, w.endWhy = now, "the adapter gave no signal for the grant"
		r.mu.Unlock()
		return
	}
	go func() {
		select {
		case <-sig:
			t := r.now()
			r.mu.Lock()
			if w.sig < 0 {
				w.sig = t
			}
			r.mu.Unlock()
		case <-ctx.Done():
		}
	}()
}

// endHolds ends p's open holds on the client's side at now: a release
// sent (the library then owes no signal), a crash (a dead client says
// nothing).
func (p *proc) endHolds(now int64, why string) {
	r := p.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.watches {
		if w.process == p.process && w.end < 0 {
			w.end, w.endWhy = now, why
		}
	}
}

// wholeStop notes that p's whole client was stopped (from) or resumed
// (to) by its in-process backend.Stopper.
func (r *runner) wholeStop(node string, at int64, stop bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wholeStops == nil {
		r.wholeStops = map[string][]Span{}
	}
	s := r.wholeStops[node]
	if stop {
		r.wholeStops[node] = append(s, Span{at, -1})
	} else if n := len(s); n > 0 && s[n-1].To < 0 {
		s[n-1].To = at
	}
}

// judgeLosses judges every watched hold of the run against h, the run
// having ended at end.
func (r *runner) judgeLosses(h *model.History, end int64) []LossVerdict {
	r.mu.Lock()
	ws := slices.Clone(r.watches)
	r.mu.Unlock()
	var out []LossVerdict
	for _, w := range ws {
		r.mu.Lock()
		sig, wend, why := w.sig, w.end, w.endWhy
		r.mu.Unlock()
		if wend < 0 {
			wend, why = end, "the round ended"
		}
		stops := w.stops()
		for i := range stops {
			if stops[i].To < 0 {
				stops[i].To = end
			}
		}
		out = append(out, JudgeLoss(h, LossHold{Process: w.process, Owner: w.owner, Key: w.key, Call: w.call, Granted: w.granted,
			Signal: sig, End: wend, EndWhy: why, Stops: stops}, r.t.Info.LossLateness))
	}
	return out
}

// LossHold is one hold of a library that signals its loss, as the runner
// saw it on the client's side (µs on the history's timeline).
type LossHold struct {
	Process, Owner, Key string
	// Call and Granted: the granting acquire's call and return.
	Call, Granted int64
	// Signal: when the library said the lock was lost; -1 never.
	Signal int64
	// End: when the hold ended on the client's side (EndWhy says how); no
	// signal is owed after it.
	End    int64
	EndWhy string
	// Stops: the spans the client was stopped — the kernel's record for a
	// process, the Stopper's for a client in the harness's process.
	Stops []Span
}

// JudgeLoss judges one hold: when was it lost on the server, and did the
// library say so within lateness of it, not counting the time it was
// stopped.
//
// The loss is read from the server's record in h: the latest end (server
// time, or the return plus the clock uncertainty where the server gave
// none, plus the TTL) of the owner's grants and renewals of the hold the
// server applied. A renewal that got no answer may have been applied
// later than anyone knows; then the loss is proven only by what the
// server said after it — another owner granted the key, or the hold's own
// renewal refused — and is taken at the latest such proof. A hold ended
// on the client's side (released, granted again, crashed, the round over)
// before its signal was due is not judged.
func JudgeLoss(h *model.History, w LossHold, lateness time.Duration) LossVerdict {
	v := LossVerdict{Process: w.Process, Owner: w.Owner, Signal: w.Signal, End: w.End, Loss: -1}
	if w.Signal > w.End {
		v.Signal = -1
	}
	u := h.Header.ClockUncertainty
	sec := func(t int64) string { return fmt.Sprintf("t=%.3fs", float64(t)/1e6) }
	ms := func(d int64) time.Duration { return (time.Duration(d) * time.Microsecond).Round(time.Millisecond) }
	// The hold's grant is the process's first acquire called from w.Call
	// (a later one, granted, begins another hold).
	grant := -1
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Process == w.Process && op.Key == w.Key && op.Kind == model.Acquire && op.Call >= w.Call {
			grant = i
			break
		}
	}
	inHold := func(op *model.Op) bool {
		return op.Owner == w.Owner && op.Key == w.Key && op.Call >= w.Call && op.Call < w.End &&
			(op.Kind == model.Renew || grant >= 0 && op == &h.Ops[grant])
	}
	// applied: the server's time of an answered op, at its latest.
	applied := func(op *model.Op) int64 {
		if op.HasAt {
			return op.At
		}
		return op.Return + u
	}
	loss, line, lastOK := int64(-1), 0, int64(-1)
	for i := range h.Ops {
		op := &h.Ops[i]
		if inHold(op) && op.Returned && op.OK {
			if t := applied(op) + op.TTL; t > loss {
				loss, line = t, op.Line
			}
			lastOK = max(lastOK, op.Call)
		}
	}
	if loss < 0 {
		v.Why, v.Skip = "not judged: the history has no grant of the hold the server applied", "no grant applied"
		return v
	}
	// A renewal sent after the last answered one and before the loss, that
	// got no answer, may have been applied: the hold may have lasted
	// longer. One sent after the loss renews nothing: the hold was over.
	unknownFrom := int64(-1)
	for i := range h.Ops {
		op := &h.Ops[i]
		if inHold(op) && !op.Returned && op.Kind == model.Renew && op.Call > lastOK && op.Call < loss {
			unknownFrom = max(unknownFrom, op.Call)
		}
	}
	story := fmt.Sprintf("the hold was lost on the server at %s (its last grant or renewal the server applied, line %d, plus its TTL)", sec(loss), line)
	if unknownFrom >= 0 {
		// An unanswered renewal may have extended it: the loss is proven
		// only by the server's word after it.
		proof := int64(-1)
		for i := range h.Ops {
			op := &h.Ops[i]
			if !op.Returned || op.Call < unknownFrom || op.Key != w.Key {
				continue
			}
			other := op.Owner != w.Owner && op.Kind == model.Acquire && op.OK
			refused := inHold(op) && op.Kind == model.Renew && !op.OK
			if other || refused {
				proof = max(loss, applied(op))
				story = fmt.Sprintf("a renewal of the hold got no answer (called at %s), so the loss is proven only by the server's word after it: %s at %s, line %d",
					sec(unknownFrom), map[bool]string{true: op.Owner + " granted the key", false: "the hold's renewal refused"}[other], sec(proof), op.Line)
				break
			}
		}
		if proof < 0 {
			v.Why = fmt.Sprintf("not judged: a renewal of the hold got no answer (called at %s) and the server said nothing after it that proves the hold lost", sec(unknownFrom))
			v.Skip = "a renewal unanswered, no proof of the loss after it"
			return v
		}
		loss = proof
	}
	v.Loss = loss
	if loss >= w.End {
		v.Why = fmt.Sprintf("not judged: the hold ended on the client's side (%s) at %s, before it was lost on the server at %s", w.EndWhy, sec(w.End), sec(loss))
		v.Skip = "not lost before " + w.EndWhy
		return v
	}
	bound := lateness.Microseconds() + 2*u
	stoppedIn := func(from, to int64) int64 {
		var n int64
		for _, s := range w.Stops {
			if lo, hi := max(s.From, from), min(s.To, to); hi > lo {
				n += hi - lo
			}
		}
		return n
	}
	upTo := v.Signal
	if upTo < 0 {
		upTo = w.End
	}
	excused := stoppedIn(loss, upTo)
	v.Excused = time.Duration(excused) * time.Microsecond
	late := upTo - loss - excused
	stopped := "its client ran throughout: nothing excused"
	if excused > 0 {
		stopped = fmt.Sprintf("its client was stopped for %v of it (excused)", ms(excused))
	}
	if v.Signal < 0 {
		if late <= bound {
			v.Why = fmt.Sprintf("not judged: the hold ended on the client's side (%s) at %s, %v after the loss at %s not counting %v stopped, before its signal was due (declared LossLateness %v)",
				w.EndWhy, sec(w.End), ms(late), sec(loss), ms(excused), lateness)
			v.Skip = "lost, not yet due before " + w.EndWhy
			return v
		}
		v.Judged, v.Late, v.Lateness = true, true, time.Duration(late)*time.Microsecond
		v.Why = fmt.Sprintf("%s's library never said the lock was lost, by %s (%s), %v after the loss, more than the declared LossLateness %v: %s; %s",
			w.Process, sec(w.End), w.EndWhy, ms(late), lateness, story, stopped)
		return v
	}
	v.Judged, v.Lateness = true, time.Duration(max(late, 0))*time.Microsecond
	if late > bound {
		v.Late = true
		v.Why = fmt.Sprintf("%s's library said the lock was lost at %s, %v after the loss not counting the time it was stopped, more than the declared LossLateness %v (+ twice the clock uncertainty): %s; %s",
			w.Process, sec(v.Signal), ms(late), lateness, story, stopped)
		return v
	}
	v.Why = fmt.Sprintf("%s's library said the lock was lost at %s, %v after the loss: %s; %s", w.Process, sec(v.Signal), ms(max(late, 0)), story, stopped)
	return v
}

// Skipped tells how many holds were not judged, by why: "3 not lost
// before its release sent, 1 ...", in the order of the counts.
func Skipped(counts map[string]int) string {
	var ks []string
	for k := range counts {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return strings.Join(out, ", ")
}
