package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/internal/tcpproxy"
)

// Leg is one direction of a client's connections.
type Leg uint8

const (
	// Request is the leg from the client to the server.
	Request Leg = Leg(tcpproxy.Request)
	// Reply is the leg from the server to the client.
	Reply Leg = Leg(tcpproxy.Reply)
)

func (l Leg) String() string { return tcpproxy.Leg(l).String() }

// The faults an Event records.
const (
	FaultDelay     = tcpproxy.FaultDelay     // Client.Delay
	FaultJitter    = tcpproxy.FaultJitter    // Client.Jitter
	FaultLoss      = tcpproxy.FaultLoss      // Client.Lose, Client.Blackhole
	FaultHold      = tcpproxy.FaultHold      // Client.Hold
	FaultDuplicate = tcpproxy.FaultDuplicate // Client.Duplicate
)

// Proxy stands between clients and one server: each client dials its own
// listener (Client), so each client's connections are faulted, recorded
// and counted apart.
type Proxy struct {
	backend string
	mu      sync.Mutex
	clients map[string]*Client
	names   []string
	closed  bool
}

// Start starts a proxy in front of the server at backend ("host:port").
// It listens on nothing until a client is added.
func Start(backend string) (*Proxy, error) {
	if _, _, err := net.SplitHostPort(backend); err != nil {
		return nil, fmt.Errorf("faultproxy: backend %q: %w", backend, err)
	}
	return &Proxy{backend: backend, clients: map[string]*Client{}}, nil
}

// ErrClosed is returned by Client after Close.
var ErrClosed = errors.New("faultproxy: the proxy is closed")

// Client returns client name's end of the proxy, starting its listener on
// 127.0.0.1 the first time; the same name gets the same Client.
func (p *Proxy) Client(name string) (*Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if c := p.clients[name]; c != nil {
		return c, nil
	}
	tp, err := tcpproxy.New(p.backend)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: client %s: %w", name, err)
	}
	c := &Client{name: name, p: tp}
	p.clients[name] = c
	p.names = append(p.names, name)
	return c, nil
}

// Clients is the names of the clients added so far, in the order they
// were added.
func (p *Proxy) Clients() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.names)
}

// Record is every client's fault record, ordered by when each fault took
// hold of the socket.
func (p *Proxy) Record() []Event {
	p.mu.Lock()
	cs := make([]*Client, 0, len(p.names))
	for _, n := range p.names {
		cs = append(cs, p.clients[n])
	}
	p.mu.Unlock()
	var out []Event
	for _, c := range cs {
		out = append(out, c.Record()...)
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Start.Compare(b.Start) })
	return out
}

// Close stops every client's listener and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	cs := make([]*Client, 0, len(p.names))
	for _, n := range p.names {
		cs = append(cs, p.clients[n])
	}
	p.mu.Unlock()
	var errs []error
	for _, c := range cs {
		if err := c.p.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Client is one client's end of a Proxy: the address it dials instead of
// the server's, the faults on its connections, their record and its
// counts. Its methods are safe to call from any goroutine; a fault holds
// from the call that sets it to the call that clears it.
type Client struct {
	name string
	p    *tcpproxy.Proxy
}

// Name is the client's name.
func (c *Client) Name() string { return c.name }

// Addr is the address the client dials instead of the server's.
func (c *Client) Addr() string { return c.p.Addr() }

// Delay delivers each chunk on leg d after it arrived (0: none). It is a
// latency, not a queue: the other leg is untouched, so the two legs can be
// slowed differently, and a connection's bytes keep their order.
func (c *Client) Delay(leg Leg, d time.Duration) { c.p.SetLegDelay(tcpproxy.Leg(leg), d) }

// Jitter delays each chunk on leg by a fresh draw in [0, max] (0: none).
// TCP delivers a connection's bytes in order, so that is kept; across the
// client's connections a request (or reply) drawn long is overtaken by one
// sent later. That is the reordering a network can do to a client at a
// socket: of whole messages on different connections, never within one.
func (c *Client) Jitter(leg Leg, max time.Duration) { c.p.SetJitter(tcpproxy.Leg(leg), max) }

// Lose drops every byte due on leg while on; the connections stay open
// and nobody is told. A stream with a hole cannot go on, so when the loss
// ends each connection that lost bytes is reset (both ends); those that
// lost nothing go on. A loss on the reply leg lets the server apply
// requests whose answers never arrive.
func (c *Client) Lose(leg Leg, on bool) { c.p.Lose(tcpproxy.Leg(leg), on) }

// Blackhole is Lose on both legs.
func (c *Client) Blackhole(on bool) {
	c.p.Lose(tcpproxy.Request, on)
	c.p.Lose(tcpproxy.Reply, on)
}

// Hold keeps every chunk due on leg while on and delivers them, in order,
// when it ends: what TCP does over an outage shorter than its
// retransmissions. The connections stay open; the bytes arrive late.
func (c *Client) Hold(leg Leg, on bool) { c.p.Hold(tcpproxy.Leg(leg), on) }

// Duplicate sends each request the client makes again, after, on a
// connection of its own, while on; the client sees only its own reply, and
// the copy's is recorded (Event.Copies). TCP never hands an application
// the same bytes twice, so a duplicate at a socket is a retry, and only a
// protocol whose requests the proxy can frame can be copied: RESP (Redis,
// Valkey). On any other protocol nothing is copied, and the record shows
// none. Nothing is copied inside MULTI or once a connection subscribes;
// a copy's connection replays the original's AUTH, HELLO and SELECT.
func (c *Client) Duplicate(on bool, after time.Duration) { c.p.Duplicate(on, after) }

// Reject cuts the client off as a partition that refuses: every open
// connection is reset at once, and new ones as they arrive, until it
// heals.
func (c *Client) Reject(on bool) { c.p.Reject(on) }

// Record is the client's fault record: each fault as the proxy applied it
// at the socket.
func (c *Client) Record() []Event {
	evs := c.p.Events()
	out := make([]Event, len(evs))
	for i, e := range evs {
		out[i] = Event{Client: c.name, Fault: e.Fault, Leg: Leg(e.Leg), Amount: e.Amount, Start: e.Start, End: e.End,
			First: e.First, Last: e.Last, Chunks: e.Chunks, Bytes: e.Bytes, Messages: e.Messages, MaxHeld: e.MaxHeld,
			Overtaken: e.Overtaken, Reset: e.Reset}
		for _, cp := range e.Copies {
			out[i].Copies = append(out[i].Copies, Copy(cp))
		}
	}
	return out
}

// Counts is what crossed the client's end of the proxy so far.
func (c *Client) Counts() Counts { return Counts(c.p.Counts()) }

// Event is one fault as the proxy applied it at the socket: when it held
// the socket and what it did to which bytes. A judge excuses what an Event
// says happened: a loss that dropped nothing has Chunks 0.
type Event struct {
	Client string
	Fault  string // FaultDelay, FaultJitter, FaultLoss, FaultHold, FaultDuplicate
	Leg    Leg
	// Amount is a delay's latency, a jitter's maximum, a duplicate's
	// lateness.
	Amount time.Duration
	// Start and End are when the fault took and let go of the socket (End
	// zero: still in force).
	Start, End time.Time
	// First and Last are when the first and last chunk it acted on arrived
	// at the proxy (a duplicate: when its first and last copy were sent).
	First, Last time.Time
	// Chunks, Bytes and Messages are what it dropped, held, slowed or
	// copied; Messages counts the framed requests or replies that ended in
	// those bytes (0 for a protocol the proxy does not frame).
	Chunks, Bytes, Messages int64
	// MaxHeld is the longest a chunk it slowed took through the proxy.
	MaxHeld time.Duration
	// Overtaken counts the chunks a jitter let leave after a chunk read
	// later on another of the client's connections.
	Overtaken int64
	// Reset is how many connections a loss reset when it ended.
	Reset int
	// Copies are the requests a duplicate sent again.
	Copies []Copy
}

// Copy is one request a duplicate sent again.
type Copy struct {
	// Command is the request's name (SET, EVALSHA, ...).
	Command string
	// Sent is when the copy was written to the server; Answered when its
	// reply came (zero: none, Err says why).
	Sent, Answered time.Time
	// Reply is the start of the server's reply to the copy, as sent.
	Reply string
	Err   string
}

// Counts is what crossed one client's end of the proxy, per leg (index
// Request, Reply): a plain set of counters for a test to read at any time.
type Counts struct {
	// Conns is how many connections the client made.
	Conns int64
	// Bytes is what arrived on each leg; Delivered what was passed on;
	// Dropped what a loss threw away.
	Bytes, Delivered, Dropped [2]int64
	// Messages counts the framed messages on each leg: the client's
	// requests and the server's replies, on connections the proxy frames —
	// RESP commands and replies; HTTP/1 requests and final responses,
	// counted when their heads arrive (a watch when it begins); gRPC
	// messages over HTTP/2 (each call's, each message on a stream).
	// Unframed is how many of the client's connections it could not frame
	// (TLS among them); their messages are not counted, their bytes are.
	Messages [2]int64
	Unframed int64
	// Duplicates is how many requests Duplicate sent again.
	Duplicates int64
	// Protocol is what the client's latest connection speaks, as far as
	// the proxy can tell: "resp", "http/1", "http/2", "unframed" (none of
	// those), "" (it has sent nothing yet). Duplicate copies "resp" only.
	Protocol string
}
