package leasetest

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/leasecheck/leasecheck/model"
)

// LossSignalProperty is the promise of a library that holds while it says
// so (backend.Holding): "the context is cancelled once the lock is lost",
// within the lateness the adapter declares (Info.LossLateness).
const LossSignalProperty = "loss-signal"

// whyNoSignal: the property needs the library's own signal and a way to
// stop its whole client.
const whyNoSignal = "the backend reports no loss signal of its own (backend.Holding) or cannot stop its whole client (backend.Stopper): there is no promise to judge"

// LossSignal judges a library's own signal of holding and losing against
// the server's record. A's library holds with its client running for two
// TTLs (it renews by itself; B is refused and A's signal stays quiet); then
// A's whole client is stopped past its TTL and B is granted; A resumes and
// its signal must come within Info.LossLateness of the later of the loss
// on the server (A's last renewal the server applied, plus its TTL) and
// A's resumption (a stopped client can say nothing: the excuse of
// exclusive-belief for a paused holder). The beliefs are the library's own:
// A believes from its grant until its signal, B from its grant; their
// overlap after A resumed is told as exclusive-belief.
func testLossSignal(e *env) {
	if e.holding == nil || e.stopper == nil {
		e.res.Skipped = whyNoSignal
		return
	}
	us := func(d time.Duration) int64 { return int64(d / time.Microsecond) }
	now := func() int64 { return us(e.rec.Now()) }
	ga := e.acquire("A")
	if !e.wantOK(ga, "acquire-free", "nobody holds the lease") {
		return
	}
	sig := e.holding.Signal(e.key, "A")
	if sig == nil {
		e.fatal("Signal(A) = nil after %s = %s: the adapter gives no signal for a lock its library holds", ga.call(), ga.got())
	}
	var sigAt atomic.Int64
	sigAt.Store(-1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sig:
			sigAt.Store(now())
		case <-done:
		}
	}()

	// The library holds while it says so: its client runs, it renews.
	e.resume("A")
	e.sleepUntil(ga.after + 2*ga.ttl)
	if t := sigAt.Load(); t >= 0 {
		e.fatal("A's library signalled the lock lost at t=%.3fs with no fault, %v after its grant: it does not hold while it says so",
			float64(t)/1e6, time.Duration(t-ga.after)*time.Microsecond)
	}
	e.stop("A")
	rb := e.acquire("B")
	e.wantRefused(rb, "held", "acquire-held", "A's library renews by itself and has not said it lost the lock")

	// A's whole client stops past its TTL; B is granted.
	p0 := now()
	gb, sure := e.acquireAfter(reply{after: p0, ttl: ga.ttl}, "B")
	if !gb.granted() {
		if sure {
			e.fail("%s = %s after A's whole client was stopped for %v (TTL %v): the lock was not lost on the server, so nothing is judged",
				gb.call(), gb.got(), time.Duration(gb.before-p0)*time.Microsecond, e.ttl())
		}
		return
	}
	p1 := now()
	e.pause("A", p0, p1, "A's whole client (its renewal goroutine too) stopped past its TTL")
	e.resume("A")
	limit := p1 + us(e.info.LossLateness) + us(10*time.Second)
	for sigAt.Load() < 0 && now() < limit && e.ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	e.stop("A")
	at := sigAt.Load()
	e.release("B", gb.Fence)
	e.after = func(h *model.History) { e.judgeLoss(h, ga, gb, p0, p1, at, limit) }
}

// judgeLoss judges the signal at (or -1: none by limit) against the
// server's record in h.
func (e *env) judgeLoss(h *model.History, ga, gb reply, p0, p1, at, limit int64) {
	// The lease's end on the server: A's last grant or renewal it applied
	// before B's grant, plus its TTL (the clock uncertainty on both sides
	// where the server gave no time).
	var last *model.Op
	end := int64(-1)
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Owner != "A" || !op.OK || (op.Kind != model.Acquire && op.Kind != model.Renew) || !(op.Returned || op.HasAt) {
			continue
		}
		t := op.Return + e.u()
		if op.HasAt {
			t = op.At
		}
		if t >= gb.after {
			continue
		}
		if t+op.TTL > end {
			end, last = t+op.TTL, op
		}
	}
	if last == nil {
		e.fail("%s: the history has no grant or renewal of A's before B's grant: nothing to count the loss from", LossSignalProperty)
		return
	}
	from := max(end, p1)
	bound := int64(e.info.LossLateness/time.Microsecond) + 2*e.u()
	sec := func(t int64) string { return fmt.Sprintf("t=%.3fs", float64(t)/1e6) }
	ms := func(d int64) time.Duration { return (time.Duration(d) * time.Microsecond).Round(time.Millisecond) }
	story := fmt.Sprintf("A's lock was lost on the server at %s (its last %s the server applied, line %d, plus its TTL %v); A's whole client was stopped %s..%s; B was granted at %s",
		sec(end), last.Kind, last.Line, ms(last.TTL), sec(p0), sec(p1), sec(gb.after))
	e.note("beliefs, from the library's own signal: A from %s until %s; B from %s", sec(ga.after), map[bool]string{true: sec(at), false: "past " + sec(limit)}[at >= 0], sec(gb.after))
	if at < 0 {
		e.fail("%s: A's library never said the lock was lost, %v after A resumed (declared LossLateness %v): %s. "+
			"exclusive-belief: A and B both believed from %s on, A unpaused from %s",
			LossSignalProperty, ms(limit-p1), e.info.LossLateness, story, sec(gb.after), sec(p1))
		return
	}
	late := at - from
	overlap := at - max(gb.after, p1)
	if late > bound {
		e.fail("%s: A's library said the lock was lost at %s, %v after the later of the loss and A's resumption (%s), more than the declared LossLateness %v (+ twice the clock uncertainty): %s. "+
			"exclusive-belief: A and B both believed, with A running, for %v (%s..%s)",
			LossSignalProperty, sec(at), ms(late), sec(from), e.info.LossLateness, story, ms(max(overlap, 0)), sec(max(gb.after, p1)), sec(at))
		return
	}
	e.note("%s holds: A's library said the lock was lost at %s, %v after %s (declared at most %v): %s", LossSignalProperty, sec(at), ms(max(late, 0)), sec(from), e.info.LossLateness, story)
	if overlap > 0 {
		e.note("exclusive-belief: A (running) and B both believed for %v, within A's declared loss lateness", ms(overlap))
	}
}
