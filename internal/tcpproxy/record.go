package tcpproxy

import (
	"bytes"
	"slices"
	"time"
)

// The faults a proxy records (Event.Fault).
const (
	FaultDelay     = "delay"     // SetLegDelay
	FaultJitter    = "jitter"    // SetJitter
	FaultLoss      = "loss"      // Lose
	FaultHold      = "hold"      // Hold
	FaultDuplicate = "duplicate" // Duplicate
)

// Event is one fault as the proxy applied it at the socket: when it was in
// force and what it did to which bytes. A judge excuses what an Event
// says happened, not what was asked for: a loss that dropped nothing is
// recorded with Chunks 0.
type Event struct {
	Fault string
	Leg   Leg
	// Amount is a delay's latency or a jitter's maximum.
	Amount time.Duration
	// Start and End are when the fault took and lost hold of the socket (End
	// zero: still in force).
	Start, End time.Time
	// First and Last are when the first and the last chunk it acted on
	// arrived at the proxy (zero: it touched none).
	First, Last time.Time
	// Chunks, Bytes and Messages are what it dropped (loss), held back
	// (hold), slowed (delay, jitter) or sent again (duplicate); Messages
	// counts the framed requests or replies that ended in those bytes (0
	// when the protocol is not one the proxy frames).
	Chunks, Bytes, Messages int64
	// MaxHeld is the longest a chunk it slowed took from the proxy's read
	// to its write (delay, jitter).
	MaxHeld time.Duration
	// Overtaken counts the chunks (jitter) that left after a chunk read
	// later on another of the client's connections: the reorderings it made.
	Overtaken int64
	// Reset is how many connections the loss reset when it ended, those
	// that had lost bytes.
	Reset int
	// Copies are the requests a duplicate sent again, each on a connection
	// of its own.
	Copies []Copy
}

// Copy is one request a duplicate sent again.
type Copy struct {
	// Command is the request's name (a RESP command: SET, EVALSHA, ...).
	Command string
	// Sent is when the copy was written to the server; Answered when its
	// reply came (zero: none came, Err says why).
	Sent, Answered time.Time
	// Reply is the start of the server's reply to the copy, as sent.
	Reply string
	Err   string
}

// Counts is what crossed a proxy, per leg (index Request, Reply), since it
// started.
type Counts struct {
	// Conns is how many client connections it accepted.
	Conns int64
	// Bytes is what arrived on each leg: sent by the client (Request) and
	// by the server (Reply).
	Bytes [2]int64
	// Delivered is what was passed on; Dropped what a loss threw away.
	// (Bytes minus both is still on its way, or was in hand when the
	// connection closed.)
	Delivered, Dropped [2]int64
	// Messages counts the framed messages that arrived on each leg: the
	// client's requests and the server's replies — RESP commands and
	// replies, HTTP/1 requests and final responses (counted when their
	// heads arrive), gRPC messages over HTTP/2.
	// It counts only connections the proxy could frame; Unframed says how
	// many it could not.
	Messages [2]int64
	Unframed int64
	// Duplicates is how many requests a duplicate sent again.
	Duplicates int64
	// Protocol is what the client's latest connection speaks, as far as
	// the proxy can tell: "resp", "http/1", "http/2", "unframed" (none of
	// those), "" (it has sent nothing yet).
	Protocol string
}

// Events is the proxy's fault record so far, in the order the faults took
// hold.
func (p *Proxy) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.events)
	for i := range out {
		out[i].Copies = slices.Clone(out[i].Copies)
	}
	return out
}

// Counts is what crossed the proxy so far.
func (p *Proxy) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts
}

// openLocked records a fault taking hold now and returns its index.
func (p *Proxy) openLocked(e Event) int {
	e.Start = time.Now()
	p.events = append(p.events, e)
	return len(p.events) - 1
}

// endLocked records the fault at *ev letting go now, and clears *ev.
func (p *Proxy) endLocked(ev *int) {
	if *ev >= 0 {
		p.events[*ev].End = time.Now()
	}
	*ev = -1
}

// actLocked records that fault ev acted on chunk c.
func (p *Proxy) actLocked(ev int, c *chunk) {
	if ev < 0 {
		return
	}
	e := &p.events[ev]
	if e.First.IsZero() {
		e.First = c.read
	}
	e.Last = c.read
	e.Chunks++
	e.Bytes += int64(c.n)
	e.Messages += int64(c.msgs)
}

func containsMatch(b, match []byte) bool { return bytes.Contains(b, match) }
