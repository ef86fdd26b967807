package realrun

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/tcpproxy"
	"github.com/leasecheck/leasecheck/model"
)

// netFaults is the network faults (faults.NetworkKinds) in force on one
// client's proxies. Faults of one kind may overlap; what the proxies do is
// recomputed from all those in force (a loss while any loss lasts, the
// longest delay), so the end of one does not end another.
type netFaults struct {
	active []activeNet
}

type activeNet struct {
	kind   faults.Kind
	amount time.Duration
	id     int // the fault record's index
}

// legSettings is what the proxies do to each leg (index tcpproxy.Request,
// tcpproxy.Reply).
type legSettings struct {
	lost     [2]bool
	delay    [2]time.Duration
	jitter   time.Duration
	dup      bool
	dupAfter time.Duration
}

func (n *netFaults) settings() legSettings {
	var s legSettings
	for _, a := range n.active {
		switch a.kind {
		case faults.Blackhole:
			s.lost = [2]bool{true, true}
		case faults.RequestLoss:
			s.lost[tcpproxy.Request] = true
		case faults.ReplyLoss:
			s.lost[tcpproxy.Reply] = true
		case faults.RequestDelay:
			s.delay[tcpproxy.Request] = max(s.delay[tcpproxy.Request], a.amount)
		case faults.ReplyDelay:
			s.delay[tcpproxy.Reply] = max(s.delay[tcpproxy.Reply], a.amount)
		case faults.Reorder:
			s.jitter = max(s.jitter, a.amount)
		case faults.Duplicate:
			s.dup, s.dupAfter = true, max(s.dupAfter, a.amount)
		}
	}
	return s
}

// applyNetwork injects a network fault on the holder's proxies now; it is
// lifted after its duration, and its record then says what the proxies
// really did at the socket, and when.
func (p *proc) applyNetwork(now int64, f faults.Fault, rec model.FaultRecord) {
	r := p.r
	px := p.cl.proxy
	if px == nil {
		rec.Detail = "not applied: no proxy: the target has no address"
		r.partialf(f.Kind, rec)
		return
	}
	d := r.us(f.Duration)
	amt := time.Duration(r.us(f.Amount)) * time.Microsecond
	if f.Kind == faults.Duplicate {
		if n := px.counts(); n.Protocol != "" && n.Protocol != "resp" {
			rec.Detail = fmt.Sprintf("not applied: %s's connections speak %s, and the proxy copies only RESP requests (a copy needs a request it can cut out of the stream and a reply it can tell from the next)", r.t.Info.Name, n.Protocol)
			r.partialf(f.Kind, rec)
			return
		}
	}
	if slices.Contains([]faults.Kind{faults.RequestDelay, faults.ReplyDelay, faults.Reorder, faults.Duplicate}, f.Kind) {
		rec.Amount = r.us(f.Amount)
	}
	rec.Detail = fmt.Sprintf("%s%s: %s, planned for %v", p.process, p.fenceNote(), netWhat(f.Kind, amt), msUS(d))
	from := time.Now()
	id := r.count(f.Kind, rec)
	p.cl.net.active = append(p.cl.net.active, activeNet{kind: f.Kind, amount: amt, id: id})
	px.setLegs(p.cl.net.settings())
	if slices.Contains([]faults.Kind{faults.Blackhole, faults.RequestLoss, faults.ReplyLoss}, f.Kind) {
		r.excuse(now + d) // the watchdog does not count a silence of our making
	}
	p.lifts = append(p.lifts, lift{at: now + d, rec: -1, fn: func() {
		p.cl.net.active = slices.DeleteFunc(p.cl.net.active, func(a activeNet) bool { return a.id == id })
		px.setLegs(p.cl.net.settings())
		r.socketRecord(id, f.Kind, from, time.Now(), px)
	}})
}

// netWhat says what a network fault does, for its record.
func netWhat(k faults.Kind, amt time.Duration) string {
	switch k {
	case faults.Blackhole:
		return "every byte either way dropped, its connections left open"
	case faults.RequestLoss:
		return "every byte it sends dropped, its connections left open"
	case faults.ReplyLoss:
		return "every byte the server sends it dropped, its connections left open"
	case faults.RequestDelay:
		return fmt.Sprintf("what it sends delivered %v late", inMs(amt))
	case faults.ReplyDelay:
		return fmt.Sprintf("what the server sends it delivered %v late", inMs(amt))
	case faults.Reorder:
		return fmt.Sprintf("each chunk either way delayed by a fresh draw up to %v, so its connections overtake each other", inMs(amt))
	case faults.Duplicate:
		return fmt.Sprintf("each request sent again %v later on a connection of its own", inMs(amt))
	}
	return string(k)
}

// socketRecord rewrites record id of a network fault from what the proxies
// did between from and to: its start and end are when the proxies' sockets
// took and lost the fault, and its detail what was dropped, held or sent
// again on which leg. A duplicate that found nothing to frame is recorded
// as not applied.
func (r *runner) socketRecord(id int, k faults.Kind, from, to time.Time, px proxyGroup) {
	want := map[faults.Kind]string{
		faults.Blackhole: tcpproxy.FaultLoss, faults.RequestLoss: tcpproxy.FaultLoss, faults.ReplyLoss: tcpproxy.FaultLoss,
		faults.RequestDelay: tcpproxy.FaultDelay, faults.ReplyDelay: tcpproxy.FaultDelay,
		faults.Reorder: tcpproxy.FaultJitter, faults.Duplicate: tcpproxy.FaultDuplicate,
	}[k]
	legs := map[faults.Kind][]tcpproxy.Leg{
		faults.RequestLoss: {tcpproxy.Request}, faults.RequestDelay: {tcpproxy.Request},
		faults.ReplyLoss: {tcpproxy.Reply}, faults.ReplyDelay: {tcpproxy.Reply},
	}[k]
	// The fault held the socket from when it was set (or, when another
	// fault of its kind already held it, from then) to when it was lifted
	// (or, when another still holds it, to then).
	start, end := to, from
	var first, last time.Time
	var parts []string
	var copies []tcpproxy.Copy
	var touched int64
	open := false
	for _, e := range px.events() {
		if e.Fault != want || len(legs) > 0 && !slices.Contains(legs, e.Leg) {
			continue
		}
		if e.Start.After(to) || !e.End.IsZero() && e.End.Before(from) {
			continue
		}
		start = earliest(start, e.Start)
		if e.End.IsZero() {
			open = true
		} else {
			end = latest(end, e.End)
		}
		first, last = earliest(first, e.First), latest(last, e.Last)
		touched += e.Chunks
		copies = append(copies, e.Copies...)
		if e.Chunks > 0 || e.Reset > 0 {
			parts = append(parts, legPart(e))
		}
	}
	start = latest(start, from)
	if open || end.Equal(from) {
		end = to
	}
	n := px.counts()
	r.mu.Lock()
	rec := &r.records[id]
	rec.Start, rec.End, rec.HasEnd = r.atUS(start), r.atUS(end), true
	what := "it touched nothing: no byte crossed while it lasted"
	if touched > 0 {
		noun := "chunk it acted on arrived at the proxy"
		if k == faults.Duplicate {
			noun = "copy was sent"
		}
		what = strings.Join(parts, "; ") + fmt.Sprintf("; the first %s %s, the last %s", noun,
			sinceStart(r.atUS(first)-rec.Start), sinceStart(r.atUS(last)-rec.Start))
	}
	if k == faults.Duplicate && len(copies) == 0 && n.Protocol != "" && n.Protocol != "resp" {
		rec.Partial = true
		r.injected[k]--
		r.partial[k]++
		what = fmt.Sprintf("not applied: the client's connections speak %s, and the proxy copies only RESP requests", n.Protocol)
	}
	rec.Detail += fmt.Sprintf("; it held the socket for %v: %s", msUS(rec.End-rec.Start), what)
	detail, at := rec.Detail, rec.Start
	r.mu.Unlock()
	r.logf("%11s %-17s %s (at the socket)", logTime(at), k, detail)
}

// legPart says what one proxy record did.
func legPart(e tcpproxy.Event) string {
	msgs := ""
	if e.Messages > 0 {
		msgs = ", " + plural(e.Messages, "request")
		if e.Leg == tcpproxy.Reply {
			msgs = ", " + strings.Replace(plural(e.Messages, "reply"), "replys", "replies", 1)
		}
	}
	switch e.Fault {
	case tcpproxy.FaultLoss:
		s := fmt.Sprintf("%s leg: %s (%s%s) dropped", e.Leg, plural(e.Chunks, "chunk"), plural(e.Bytes, "byte"), msgs)
		if e.Reset > 0 {
			s += fmt.Sprintf(", %s reset when it ended", plural(int64(e.Reset), "connection"))
		}
		return s
	case tcpproxy.FaultDelay, tcpproxy.FaultJitter:
		s := fmt.Sprintf("%s leg: %s (%s%s) delayed, the longest %v", e.Leg, plural(e.Chunks, "chunk"), plural(e.Bytes, "byte"), msgs, inMs(e.MaxHeld))
		if e.Fault == tcpproxy.FaultJitter {
			s += fmt.Sprintf(", %d overtaken by one read later on another connection", e.Overtaken)
		}
		return s
	case tcpproxy.FaultDuplicate:
		var cs []string
		for _, c := range e.Copies {
			if c.Err != "" {
				cs = append(cs, fmt.Sprintf("%s (%s)", c.Command, c.Err))
			} else {
				cs = append(cs, fmt.Sprintf("%s answered %q", c.Command, strings.TrimRight(c.Reply, "\r\n")))
			}
		}
		return fmt.Sprintf("%s sent again: %s", plural(int64(len(e.Copies)), "request"), strings.Join(cs, ", "))
	}
	return e.Fault
}

// sinceStart says when, d µs after a fault began, something happened: a
// chunk in flight when a loss began is dropped though it arrived before.
func sinceStart(d int64) string {
	if d < 0 {
		return msUS(-d) + " before it began (in flight)"
	}
	return msUS(d) + " in"
}

// plural is n and noun, with an s unless n is 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// traffic is each client's proxies' counts, by the scenario's process name.
func (r *runner) traffic() map[string]tcpproxy.Counts {
	out := map[string]tcpproxy.Counts{}
	for _, p := range r.procs {
		if p.cl != nil && p.cl.proxy != nil {
			out[p.node] = p.cl.proxy.counts()
		}
	}
	return out
}

// atUS is time t on the recorder's clock, µs since the run started.
func (r *runner) atUS(t time.Time) int64 {
	return r.now() - int64(time.Since(t)/time.Microsecond)
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
