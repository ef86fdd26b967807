// Package tcpproxy is a TCP proxy in front of a server that injects real
// network faults: latency, a paused process, partitions that drop or
// refuse, held requests; per connection label for the links of a cluster;
// and per leg (request or reply) a delay, jitter that reorders a client's
// connections, loss, a hold, and (for RESP) duplicated requests, each
// recorded as it was applied at the socket (Event), with what crossed
// counted per leg (Counts). It knows nothing of leases: the real runner
// puts one in front of each client's server, internal/servers one on each
// link between members, tests one in front of a data store, and package
// faultproxy hands one to a user's own test.
//
// Files: proxy.go (the proxy, its whole-proxy and per-label faults),
// legs.go (the per-leg faults and the pipe every byte crosses), frame.go
// (which messages a stream holds: RESP), framehttp.go (HTTP/1 and gRPC over
// HTTP/2), duplicate.go (a request sent again), record.go (Event, Counts).
package tcpproxy

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a TCP proxy in front of a server, for real network faults: it
// can add latency to every chunk (Delay), stop forwarding while keeping the
// connections (Freeze: a paused process, whose bytes arrive when it
// resumes), blackhole (a partition that drops: nothing passes and nobody is
// told; when it heals, every connection that was cut is reset, so what was
// in flight is lost), or reject (a partition that refuses: every open
// connection is reset at once, both ends, and every new one as soon as it
// arrives, until it heals — what a route that went away looks like to TCP).
//
// A labelled proxy (NewLabeled) also knows who is on the other end of
// each connection, from the request that opens it, and can cut or delay
// the connections of one label only: the per-pair links of a cluster,
// where every member dials one proxy in front of each other member.
type Proxy struct {
	ln     net.Listener
	target string
	label  func(c net.Conn, head []byte) (string, bool) // nil: unlabelled

	cutFrom    map[string]bool          // labels blackholed
	rejectFrom map[string]bool          // labels rejected
	delayFrom  map[string]time.Duration // labels delayed

	mu     sync.Mutex
	cond   *sync.Cond
	delay  time.Duration
	frozen bool
	holed  bool
	reject bool
	conns  map[*proxyConn]struct{}
	closed bool
	wg     sync.WaitGroup
	// hold: every holdEvery-th chunk a client sends that contains
	// holdMatch waits holdFor before it goes on (HoldMatching).
	holdMatch []byte
	holdEvery int64
	holdFor   time.Duration
	matched   atomic.Int64
	held      atomic.Int64

	legs        [2]legFaults // per leg: Request, Reply
	events      []Event
	counts      Counts
	lastReadOut [2]time.Time // the latest read time of a chunk delivered, per leg
	dupOn       atomic.Bool
	dupEv       int
	dupAfter    time.Duration
	done        chan struct{} // closed by Close
	// Dialer dials the target; its zero value is net.Dialer's.
	Dialer net.Dialer
}

type proxyConn struct {
	client, server net.Conn // server nil until dialled
	label          string
	cut            bool // saw a blackhole: reset on heal
	// broken: the leg lost bytes, so the stream cannot go on (reset when
	// the loss ends); lossEv: the loss that broke it.
	broken [2]bool
	lossEv [2]int
	proto  atomic.Uint32 // the protocol its framers found
	frames [2]framer
}

// New listens on 127.0.0.1 on a free port and forwards to target.
func New(target string) (*Proxy, error) { return NewLabeled(target, nil) }

// NewLabeled is New whose connections are labelled: label gets
// the accepted connection (for its addresses) and the bytes the dialler
// sent so far, and names the far end, with true once it has seen enough (it is asked again as more
// arrive, up to 16 KiB or 10 s of silence, then must answer; "" when it
// cannot tell). BlackholeFrom and SetDelayFrom then act on one label's
// connections. HTTPHeader is a labeller for HTTP requests.
func NewLabeled(target string, label func(c net.Conn, head []byte) (string, bool)) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, label: label, conns: map[*proxyConn]struct{}{},
		cutFrom: map[string]bool{}, rejectFrom: map[string]bool{}, delayFrom: map[string]time.Duration{},
		dupEv: -1, done: make(chan struct{})}
	for i := range p.legs {
		p.legs[i] = legFaults{delayEv: -1, jitterEv: -1, lossEv: -1, holdEv: -1}
	}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// BlackholeFrom cuts (true) or heals (false) the connections labelled
// label, as Blackhole does all of them: while cut nothing passes and new
// ones wait; on heal every connection open during the cut is reset.
func (p *Proxy) BlackholeFrom(label string, on bool) {
	p.mu.Lock()
	var cut []*proxyConn
	if on {
		p.cutFrom[label] = true
		for c := range p.conns {
			if c.label == label && c.server != nil {
				c.cut = true
			}
		}
	} else {
		delete(p.cutFrom, label)
		for c := range p.conns {
			if c.label == label && c.cut && !p.holed {
				cut = append(cut, c)
				delete(p.conns, c)
			}
		}
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, c := range cut {
		c.close()
	}
}

// Reject cuts (true) or heals (false) the network as a partition that
// refuses: every open connection is reset (RST to both ends) now, and
// every connection that arrives while it lasts is reset once accepted (a
// labelled one once its label is known), so both sides see the cut at
// once and a client's connect fails fast, as against a host whose route is
// gone. Healing lets new connections through; the reset ones stay gone.
func (p *Proxy) Reject(on bool) {
	p.mu.Lock()
	p.reject = on
	dead := p.dropRejectedLocked()
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, c := range dead {
		c.reset()
	}
}

// RejectFrom is Reject for the connections labelled label only.
func (p *Proxy) RejectFrom(label string, on bool) {
	p.mu.Lock()
	if on {
		p.rejectFrom[label] = true
	} else {
		delete(p.rejectFrom, label)
	}
	dead := p.dropRejectedLocked()
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, c := range dead {
		c.reset()
	}
}

func (p *Proxy) rejectsLocked(pc *proxyConn) bool {
	return p.reject || p.rejectFrom[pc.label]
}

// dropRejectedLocked removes the connections a reject now covers and
// returns them, to be reset outside the lock.
func (p *Proxy) dropRejectedLocked() []*proxyConn {
	var dead []*proxyConn
	for c := range p.conns {
		if p.rejectsLocked(c) {
			dead = append(dead, c)
			delete(p.conns, c)
		}
	}
	return dead
}

// reset closes both ends with an RST (linger 0), not a FIN: the peer's
// next read or write fails with "connection reset", as when a router
// rejects.
func (c *proxyConn) reset() {
	resetConn(c.client)
	if c.server != nil {
		resetConn(c.server)
	}
}

func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// SetDelayFrom adds d to every chunk of the connections labelled label, on
// top of SetDelay's (0: none).
func (p *Proxy) SetDelayFrom(label string, d time.Duration) {
	p.mu.Lock()
	if d > 0 {
		p.delayFrom[label] = d
	} else {
		delete(p.delayFrom, label)
	}
	p.mu.Unlock()
}

func (c *proxyConn) close() {
	c.client.Close()
	if c.server != nil {
		c.server.Close()
	}
}

// HoldMatching holds every every-th chunk a client sends that contains
// match for d before passing it on, as a slow network or server would hold
// one request: the client times out and may close its connection, and the
// request is delivered late all the same (bytes in flight are not taken
// back). A nil match holds nothing.
func (p *Proxy) HoldMatching(match []byte, every int64, d time.Duration) {
	p.mu.Lock()
	p.holdMatch, p.holdEvery, p.holdFor = match, max(every, 1), d
	p.mu.Unlock()
}

// Held is how many chunks HoldMatching held so far.
func (p *Proxy) Held() int64 { return p.held.Load() }

// Open is how many client connections the proxy is serving, a held chunk's
// among them until it has been delivered.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Addr is the address clients dial instead of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetDelay adds d to every chunk forwarded in either direction (0: none).
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Freeze stops (true) or resumes (false) forwarding; connections survive.
func (p *Proxy) Freeze(on bool) {
	p.mu.Lock()
	p.frozen = on
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Blackhole cuts (true) or heals (false) the network. While cut nothing
// passes; on heal, every connection open during the cut is reset.
func (p *Proxy) Blackhole(on bool) {
	p.mu.Lock()
	p.holed = on
	var cut []*proxyConn
	if on {
		for c := range p.conns {
			if c.server != nil { // one still waiting to dial goes on after the heal
				c.cut = true
			}
		}
	} else {
		for c := range p.conns {
			if c.cut && !p.cutFrom[c.label] {
				cut = append(cut, c)
				delete(p.conns, c)
			}
		}
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, c := range cut {
		c.close()
	}
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		close(p.done)
	}
	p.closed = true
	p.frozen, p.holed = false, false
	conns := p.conns
	p.conns = map[*proxyConn]struct{}{}
	p.cond.Broadcast()
	p.mu.Unlock()
	err := p.ln.Close()
	for c := range conns {
		c.close()
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

func (p *Proxy) serve(client net.Conn) {
	var head []byte
	pc := &proxyConn{client: client, lossEv: [2]int{-1, -1}}
	for i := range pc.frames {
		pc.frames[i].proto = &pc.proto
	}
	p.mu.Lock()
	p.counts.Conns++
	p.mu.Unlock()
	if p.label != nil {
		head, pc.label = readHead(client, p.label)
	}
	// A blackholed network does not even complete the handshake with the
	// server; the client sees its own timeout. (A labelled connection has
	// been accepted to learn its label; it waits here until its cut heals.)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		return
	}
	if p.rejectsLocked(pc) {
		p.mu.Unlock()
		resetConn(client)
		return
	}
	p.conns[pc] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, pc)
		p.mu.Unlock()
	}()
	if !p.waitPass(pc) {
		client.Close()
		return
	}
	server, err := p.Dialer.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	if p.rejectsLocked(pc) { // rejected while it dialled
		p.mu.Unlock()
		resetConn(client)
		resetConn(server)
		return
	}
	pc.server = server
	p.mu.Unlock()
	if len(head) > 0 {
		if _, err := server.Write(head); err != nil {
			client.Close()
			server.Close()
			return
		}
	}
	done := make(chan struct{}, 2)
	go func() { p.pipe(pc, server, client, Request); done <- struct{}{} }()
	go func() { p.pipe(pc, client, server, Reply); done <- struct{}{} }()
	<-done
	client.Close()
	server.Close()
	<-done
}

// readHead reads what the dialler sends first until label has seen
// enough, 16 KiB, or 10 s of silence, and returns it with its label.
func readHead(c net.Conn, label func(net.Conn, []byte) (string, bool)) ([]byte, string) {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	for len(buf) < 16<<10 {
		n, err := c.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if l, ok := label(c, buf); ok {
			return buf, l
		}
		if err != nil {
			break
		}
	}
	l, _ := label(c, buf)
	return buf, l
}

// HTTPHeader is a labeller (NewLabeled) that labels a connection by
// the value of header name in the first HTTP request on it, once the
// request's header is complete ("" when it has none).
func HTTPHeader(name string) func(c net.Conn, head []byte) (string, bool) {
	key := []byte("\r\n" + strings.ToLower(name) + ":")
	return func(_ net.Conn, head []byte) (string, bool) {
		end := bytes.Index(head, []byte("\r\n\r\n"))
		if end < 0 {
			return "", false
		}
		h := bytes.ToLower(head[:end+2])
		i := bytes.Index(h, key)
		if i < 0 {
			return "", true
		}
		v := head[i+len(key):]
		v = v[:bytes.Index(v, []byte("\r\n"))]
		return string(bytes.TrimSpace(v)), true
	}
}

// waitPass blocks while the proxy is frozen or pc is blackholed; false
// when the proxy closed or pc was cut or rejected.
func (p *Proxy) waitPass(pc *proxyConn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		holed := p.holed || p.cutFrom[pc.label]
		if !(p.frozen || holed) || p.closed || (pc.cut && !holed) || p.rejectsLocked(pc) {
			break
		}
		p.cond.Wait()
	}
	return !p.closed && !pc.cut && !p.rejectsLocked(pc)
}
