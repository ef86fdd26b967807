package leasetest

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/model"
)

// LossSignalProperty is the promise of a library that holds while it says
// so (backend.Holding): "the context is cancelled once the lock is lost",
// within the lateness the adapter declares (Info.LossLateness).
const LossSignalProperty = "loss-signal"

// RenewRateProperty judges what such a library sends: its background
// renewals within any one TTL, against what its declared interval
// (Info.RenewInterval) allows.
const RenewRateProperty = "renew-rate"

// whyNoSignal: the property needs the library's own signal and a way to
// stop its whole client.
const whyNoSignal = "the backend reports no loss signal of its own (backend.Holding) or cannot stop its whole client (backend.Stopper): there is no promise to judge"

// LossSignal judges a library's own signal of holding and losing against
// the server's record, in one round per fault the harness can strike:
//
//   - pause: A's library holds with its client running for two TTLs (it
//     renews by itself; B is refused and A's signal stays quiet); then A's
//     whole client is stopped past its TTL and B is granted; A resumes.
//   - partition (when every owner's client is a process of its own,
//     Processes): the same hold, then A's connection to the service is cut
//     while A runs, past its TTL; B is granted.
//
// In each, A's signal must come within Info.LossLateness of the loss on
// the server (A's last renewal the server applied, plus its TTL), not
// counting the time A was stopped: the kernel's record of its process's
// stops when it is a process, the script's stop of an in-process client
// otherwise (a stopped client can say nothing: the excuse of
// exclusive-belief for a paused holder). A client that ran is excused
// nothing, whatever the fault was called. The beliefs are the library's
// own: A believes from its grant until its signal, B from its grant; their
// overlap with A running is told as exclusive-belief. The renewals A's
// library sent are judged by renew-rate.
func testLossSignal(e *env) {
	if e.holding == nil || e.stopper == nil {
		e.res.Skipped = whyNoSignal
		return
	}
	e.after = append(e.after, func(h *model.History) { e.judgeRate(h, "A") })
	if !e.lossRound("pause") {
		return
	}
	if e.procs == nil {
		e.note("%s under a partition not judged: the clients are not processes of their own (leasetest.Processes), so one owner's connection cannot be cut while it runs", LossSignalProperty)
		return
	}
	e.lossRound("partition")
}

// span is a time A was stopped, in µs on the recorder's timeline.
type span struct{ from, to int64 }

// lossRound runs one round of LossSignal under fault ("pause" or
// "partition") and queues its judgement; false when the rest of the
// property is moot.
func (e *env) lossRound(fault string) bool {
	us := func(d time.Duration) int64 { return int64(d / time.Microsecond) }
	now := func() int64 { return us(e.rec.Now()) }
	ga := e.acquire("A")
	if e.unanswered(ga, fault, "A holds nothing known whose signal the round could judge; the rest of the property is not run") {
		return false
	}
	if !e.wantOK(ga, "acquire-free", "nobody holds the lease") {
		return false
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
	if fault == "pause" {
		e.stop("A")
	}
	p0 := now()
	if fault == "partition" {
		e.procs.Partition("A", true)
	}
	heal := func() {
		if fault == "partition" {
			e.procs.Partition("A", false)
		}
	}
	rb := e.acquire("B")
	if !e.unanswered(rb, fault, "whether B was refused while A's library held is not known (the round goes on)") {
		e.wantRefused(rb, "held", "acquire-held", "A's library renews by itself and has not said it lost the lock")
	}

	// A's whole client stops, or its connection is cut, past its TTL; B is
	// granted.
	gb, sure := e.acquireAfter(reply{after: p0, ttl: ga.ttl}, "B")
	if !gb.granted() {
		heal()
		if e.unanswered(gb, fault, "B has no grant known to count A's loss by; the rest of the property is not run") {
			return false
		}
		if sure {
			e.fail("%s = %s after A's %s began %v before (TTL %v): the lock was not lost on the server, so nothing is judged",
				gb.call(), gb.got(), fault, time.Duration(gb.before-p0)*time.Microsecond, e.ttl())
		}
		return false
	}
	var p1 int64
	if fault == "pause" {
		p1 = now()
		e.pause("A", p0, p1, "A's whole client (its renewal goroutine too) stopped past its TTL")
		e.resume("A")
	}
	limit := now() + us(e.info.LossLateness) + us(10*time.Second)
	for sigAt.Load() < 0 && now() < limit && e.ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if fault == "partition" {
		p1 = now()
		heal()
		e.faults = append(e.faults, model.FaultRecord{Kind: "partition", Target: "A", Start: p0, End: p1, HasEnd: true,
			Detail: "A's connection to the service cut while A's process ran"})
		e.note("fault: partition A from %.3fs to %.3fs: A's connection to the service cut while A's process ran", float64(p0)/1e6, float64(p1)/1e6)
	}
	e.stop("A")
	at := sigAt.Load()
	e.release("B", gb.Fence)
	e.after = append(e.after, func(h *model.History) { e.judgeLoss(h, fault, ga, gb, e.stopsOf("A", fault, p0, p1), at, limit) })
	return true
}

// unanswered notes a request of the round that got no answer (a timeout or
// an error: its outcome unknown, as on a loaded machine) as a check not
// judged, and reports it. An unanswered request says nothing against the
// library; only an answer does (a refusal where the script needs a grant
// fails).
func (e *env) unanswered(r reply, fault, so string) bool {
	if r.answered {
		return false
	}
	e.note("not judged: %s = %s in the %s round of %s: its outcome is unknown, so %s", r.call(), r.got(), fault, LossSignalProperty, so)
	return true
}

// stopsOf is when owner was stopped, on the recorder's timeline: the
// kernel's record of its process's stops when it is a process; otherwise
// the script's stop of its whole client in a pause round (the in-process
// Stopper, which the judge must take at its word).
func (e *env) stopsOf(owner, fault string, p0, p1 int64) []span {
	if e.procs == nil {
		if fault == "pause" {
			return []span{{p0, p1}}
		}
		return nil
	}
	var out []span
	us := func(t time.Time) int64 { return int64(e.rec.Since(t) / time.Microsecond) }
	for _, s := range e.procs.Stops(owner) {
		to := us(s.To)
		if s.Open {
			to = us(time.Now())
		}
		out = append(out, span{us(s.From), to})
	}
	return out
}

// stoppedWithin is how long the spans cover of [from, to].
func stoppedWithin(spans []span, from, to int64) int64 {
	var n int64
	for _, s := range spans {
		if lo, hi := max(s.from, from), min(s.to, to); hi > lo {
			n += hi - lo
		}
	}
	return n
}

// judgeLoss judges the signal at (or -1: none by limit) against the
// server's record in h, excusing the time stops says A was stopped.
func (e *env) judgeLoss(h *model.History, fault string, ga, gb reply, stops []span, at, limit int64) {
	// The lease's end on the server: A's last grant or renewal of this
	// round it applied before B's grant, plus its TTL (the clock
	// uncertainty on both sides where the server gave no time).
	var last *model.Op
	end := int64(-1)
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Owner != "A" || !op.OK || (op.Kind != model.Acquire && op.Kind != model.Renew) || !(op.Returned || op.HasAt) || op.Call < ga.before {
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
		e.fail("%s (%s): the history has no grant or renewal of A's before B's grant: nothing to count the loss from", LossSignalProperty, fault)
		return
	}
	bound := int64(e.info.LossLateness/time.Microsecond) + 2*e.u()
	sec := func(t int64) string { return fmt.Sprintf("t=%.3fs", float64(t)/1e6) }
	ms := func(d int64) time.Duration { return (time.Duration(d) * time.Microsecond).Round(time.Millisecond) }
	upTo := at
	if at < 0 {
		upTo = limit
	}
	var stopped []string
	for _, s := range stops {
		if s.to > end && s.from < upTo {
			stopped = append(stopped, sec(s.from)+".."+sec(s.to))
		}
	}
	who := "the kernel reported A's process stopped"
	if e.procs == nil {
		who = "A's whole client was stopped (its Stopper)"
	}
	stoppedStory := who + " " + strings.Join(stopped, ", ")
	if len(stopped) == 0 {
		stoppedStory = "A ran throughout: " + strings.TrimPrefix(who, "A's ") + " at no time after the loss"
		if e.procs != nil {
			stoppedStory = "A's process ran throughout: the kernel reported no stop after the loss"
		}
	}
	story := fmt.Sprintf("under a %s, A's lock was lost on the server at %s (its last %s the server applied, line %d, plus its TTL %v); %s; B was granted at %s",
		fault, sec(end), last.Kind, last.Line, ms(last.TTL), stoppedStory, sec(gb.after))
	e.note("beliefs (%s), from the library's own signal: A from %s until %s; B from %s", fault, sec(ga.after), map[bool]string{true: sec(at), false: "past " + sec(limit)}[at >= 0], sec(gb.after))
	if at < 0 {
		e.fail("%s: A's library never said the lock was lost, by %s (declared LossLateness %v): %s. "+
			"exclusive-belief: A and B both believed from %s on, A running for %v of it",
			LossSignalProperty, sec(limit), e.info.LossLateness, story, sec(gb.after), ms(limit-gb.after-stoppedWithin(stops, gb.after, limit)))
		return
	}
	excused := stoppedWithin(stops, end, at)
	late := at - end - excused
	overlap := max(at-gb.after, 0) - stoppedWithin(stops, gb.after, at)
	if late > bound {
		e.fail("%s: A's library said the lock was lost at %s, %v after the loss at %s not counting the %v A was stopped, more than the declared LossLateness %v (+ twice the clock uncertainty): %s. "+
			"exclusive-belief: A and B both believed, with A running, for %v (B from %s, A until %s)",
			LossSignalProperty, sec(at), ms(late), sec(end), ms(excused), e.info.LossLateness, story, ms(max(overlap, 0)), sec(gb.after), sec(at))
		return
	}
	e.note("%s holds (%s): A's library said the lock was lost at %s, %v after the loss at %s not counting the %v A was stopped (declared at most %v): %s",
		LossSignalProperty, fault, sec(at), ms(max(late, 0)), sec(end), ms(excused), e.info.LossLateness, story)
	if overlap > 0 {
		e.note("exclusive-belief: A (running) and B both believed for %v, within A's declared loss lateness", ms(overlap))
	}
}

// judgeRate judges what owner's library sent: its background renewals (the
// history's <owner>/renewer ops, answered or not) within any one TTL,
// against Info.RenewInterval, over the whole property — its quiet hold and
// its faults alike.
func (e *env) judgeRate(h *model.History, owner string) {
	iv := e.info.RenewInterval
	if iv <= 0 {
		e.note("%s not judged: Info.RenewInterval (how often the library renews by itself) is not declared", RenewRateProperty)
		return
	}
	ttl := int64(e.ttl() / time.Microsecond)
	allowed := int(e.ttl()/iv) + 2
	var burst realrun.Burst
	for _, b := range realrun.RenewalBursts(h, ttl) {
		if b.Owner == owner {
			burst = b
		}
	}
	worst, from := burst.Most, burst.From
	sent := ""
	if e.procs != nil {
		if c, ok := e.procs.Client(owner); ok {
			s := c.Sent()
			n := 0
			for _, k := range s.Service {
				n += k
			}
			if n > 0 { // a client that reaches the service over its pipe (Processes)
				sent = fmt.Sprintf("; %s's process sent %d requests to the service in all", owner, n)
			}
		}
	}
	mean := ""
	if d := burst.Span; burst.Total > 1 && d > 0 {
		mean = fmt.Sprintf(", %.1f per TTL on average over %v", float64(burst.Total-1)*float64(ttl)/float64(d), (time.Duration(d) * time.Microsecond).Round(time.Millisecond))
	}
	if worst > allowed {
		e.fail("%s: %s's library sent %d renewals within one TTL (%v, from t=%.3fs), where its declared interval %v allows at most %d; %d renewals in all%s%s: a renewal loop that does not wait its interval",
			RenewRateProperty, owner, worst, e.ttl(), float64(from)/1e6, iv, allowed, burst.Total, mean, sent)
		return
	}
	e.note("%s holds: at most %d of %s's background renewals within one TTL (%v; its declared interval %v allows %d); %d in all%s%s",
		RenewRateProperty, worst, owner, e.ttl(), iv, allowed, burst.Total, mean, sent)
}
