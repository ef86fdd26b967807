package tcpproxy

import (
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"
)

// Leg is one direction of the connections through a proxy.
type Leg uint8

const (
	// Request is the leg from the client to the server.
	Request Leg = iota
	// Reply is the leg from the server to the client.
	Reply
)

func (l Leg) String() string {
	if l == Reply {
		return "reply"
	}
	return "request"
}

// legFaults is what is done to one leg's bytes now.
type legFaults struct {
	delay  time.Duration // latency: each chunk is delivered this long after it was read
	jitter time.Duration // up to this much more per chunk, drawn for each
	lost   bool          // chunks due now are dropped
	held   bool          // chunks due now wait until the hold ends
	// The open record of each fault on this leg (-1: none).
	delayEv, jitterEv, lossEv, holdEv int
}

// chunk is what one Read of a leg returned, on its way to the other end.
type chunk struct {
	buf  *[]byte
	n    int
	read time.Time
	due  time.Time
	msgs int // framed messages that end in it
	ev   int // the delay or jitter record that delayed it (-1: none)
	// jitterEv is the jitter record whose draw it got (-1: none).
	jitterEv int
}

var chunkBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// SetLegDelay delivers each chunk on leg d after it was read (0: none), on
// top of SetDelay's; the other leg is not touched, so the two legs of a
// connection can be slowed differently. It is a latency, not a queue:
// chunks read one after another leave one after another, each d after it
// arrived.
func (p *Proxy) SetLegDelay(leg Leg, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lf := &p.legs[leg]
	if lf.delay == d {
		return
	}
	p.endLocked(&lf.delayEv)
	lf.delay = d
	if d > 0 {
		lf.delayEv = p.openLocked(Event{Fault: FaultDelay, Leg: leg, Amount: d})
	}
}

// SetJitter delays each chunk on leg by a fresh draw in [0, max] (0: none).
// Within one connection the order of the bytes is kept (TCP delivers a
// stream in order, so nothing else is possible at a socket); across the
// client's connections, a request or reply drawn long is overtaken by one
// sent later on another connection. That is the reordering a network does
// to a client with a pool of connections.
func (p *Proxy) SetJitter(leg Leg, max time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lf := &p.legs[leg]
	if lf.jitter == max {
		return
	}
	p.endLocked(&lf.jitterEv)
	lf.jitter = max
	if max > 0 {
		lf.jitterEv = p.openLocked(Event{Fault: FaultJitter, Leg: leg, Amount: max})
	}
}

// Lose drops (true) every chunk due on leg while it lasts, and stops
// (false). The connections stay open and nobody is told: the bytes just do
// not arrive. A stream with a hole in it cannot go on (TCP never delivers
// a byte after a missing one), so once a connection lost a chunk on a leg,
// every later chunk on that leg is dropped too, and when the loss ends
// each connection that lost anything is reset (an RST to both ends), as
// TCP ends a connection whose retransmissions went unanswered. Connections
// that lost nothing go on. Lose on both legs is a blackhole.
func (p *Proxy) Lose(leg Leg, on bool) {
	p.mu.Lock()
	lf := &p.legs[leg]
	if lf.lost == on {
		p.mu.Unlock()
		return
	}
	lf.lost = on
	var dead []*proxyConn
	if on {
		lf.lossEv = p.openLocked(Event{Fault: FaultLoss, Leg: leg})
	} else {
		for c := range p.conns {
			if c.broken[leg] {
				dead = append(dead, c)
				delete(p.conns, c)
			}
		}
		if lf.lossEv >= 0 {
			p.events[lf.lossEv].Reset = len(dead)
		}
		p.endLocked(&lf.lossEv)
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, c := range dead {
		c.reset()
	}
}

// Hold stops delivering chunks on leg (true) and delivers what waited when
// it ends (false), in order: what TCP does across an outage shorter than
// its retransmission budget. Connections stay open; the bytes arrive late.
func (p *Proxy) Hold(leg Leg, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lf := &p.legs[leg]
	if lf.held == on {
		return
	}
	lf.held = on
	if on {
		lf.holdEv = p.openLocked(Event{Fault: FaultHold, Leg: leg})
	} else {
		p.endLocked(&lf.holdEv)
	}
	p.cond.Broadcast()
}

// pipe forwards src to dst on leg: a reader stamps each chunk with when it
// arrived and when it is due; the writer delivers it then, unless the leg
// is lost or held, or the proxy's other faults stop it.
func (p *Proxy) pipe(pc *proxyConn, dst, src net.Conn, leg Leg) {
	ch := make(chan *chunk, 64)
	quit := make(chan struct{})
	defer close(quit)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(ch)
		p.read(pc, src, leg, ch, quit)
	}()
	var timer *time.Timer
	for c := range ch {
		if wait := time.Until(c.due); wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			<-timer.C
		}
		fate := stop
		if p.waitPass(pc) {
			fate = p.deliverable(pc, leg, c)
		}
		if fate == pass {
			if _, err := dst.Write((*c.buf)[:c.n]); err != nil {
				fate = stop
			} else {
				p.delivered(leg, c)
			}
		}
		chunkBufs.Put(c.buf)
		if fate == stop {
			return
		}
	}
}

// A chunk's fate when it falls due.
type fate uint8

const (
	pass fate = iota // delivered
	drop             // lost; the connection goes on until its reset
	stop             // the connection or the proxy is closing
)

// read is a leg's reader: it counts and frames what arrives, stamps it and
// hands it to the writer.
func (p *Proxy) read(pc *proxyConn, src net.Conn, leg Leg, ch chan<- *chunk, quit <-chan struct{}) {
	var last time.Time
	fr := &pc.frames[leg]
	for {
		buf := chunkBufs.Get().(*[]byte)
		n, err := src.Read(*buf)
		if n > 0 {
			now := time.Now()
			c := &chunk{buf: buf, n: n, read: now, ev: -1, jitterEv: -1}
			msgs, dups, gaveUp := fr.feed((*buf)[:n], leg, p.dupOn.Load())
			c.msgs = msgs
			var setup [][]byte
			if len(dups) > 0 {
				setup = slices.Clone(fr.setup)
			}
			p.mu.Lock()
			if gaveUp && leg == Request {
				p.counts.Unframed++
			}
			if pr := pc.proto.Load(); pr != protoUnknown {
				p.counts.Protocol = protoNames[pr]
			}
			lf := &p.legs[leg]
			d := p.delay + p.delayFrom[pc.label] + lf.delay
			if lf.delay > 0 {
				c.ev = lf.delayEv
			}
			if lf.jitter > 0 {
				d += rand.N(lf.jitter + 1)
				c.jitterEv = lf.jitterEv
			}
			if leg == Request && p.holdMatch != nil && containsMatch((*buf)[:n], p.holdMatch) && p.matched.Add(1)%p.holdEvery == 0 {
				p.held.Add(1)
				d += p.holdFor
			}
			p.counts.Bytes[leg] += int64(n)
			p.counts.Messages[leg] += int64(c.msgs)
			dupEv := p.dupEv
			p.mu.Unlock()
			due := now.Add(d)
			if due.Before(last) {
				due = last // a stream keeps its order
			}
			last = due
			c.due = due
			for _, cmd := range dups {
				p.duplicate(setup, cmd, dupEv)
			}
			select {
			case ch <- c:
			case <-quit:
				chunkBufs.Put(buf)
				return
			}
		} else {
			chunkBufs.Put(buf)
		}
		if err != nil {
			return
		}
	}
}

// deliverable decides a chunk due now on leg: drop when the leg is lost,
// or lost bytes before it broke the stream; it waits while the leg is
// held.
func (p *Proxy) deliverable(pc *proxyConn, leg Leg, c *chunk) fate {
	p.mu.Lock()
	defer p.mu.Unlock()
	lf := &p.legs[leg]
	waited := false
	for lf.held && !p.closed && !lf.lost {
		if !waited {
			p.actLocked(lf.holdEv, c)
			waited = true
		}
		p.cond.Wait()
	}
	if p.closed {
		return stop
	}
	if lf.lost || pc.broken[leg] {
		pc.broken[leg] = true
		ev := lf.lossEv
		if ev < 0 {
			ev = pc.lossEv[leg] // the loss ended while this was on its way: it is that loss's
		}
		pc.lossEv[leg] = ev
		p.actLocked(ev, c)
		p.counts.Dropped[leg] += int64(c.n)
		return drop
	}
	return pass
}

// delivered counts a chunk that reached its end and what its delay did.
func (p *Proxy) delivered(leg Leg, c *chunk) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts.Delivered[leg] += int64(c.n)
	p.actLocked(c.ev, c)
	if c.jitterEv >= 0 {
		p.actLocked(c.jitterEv, c)
		if c.read.Before(p.lastReadOut[leg]) {
			p.events[c.jitterEv].Overtaken++
		}
	}
	if c.read.After(p.lastReadOut[leg]) {
		p.lastReadOut[leg] = c.read
	}
	if c.ev >= 0 || c.jitterEv >= 0 {
		for _, ev := range []int{c.ev, c.jitterEv} {
			if ev >= 0 && now.Sub(c.read) > p.events[ev].MaxHeld {
				p.events[ev].MaxHeld = now.Sub(c.read)
			}
		}
	}
}
