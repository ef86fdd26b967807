package realrun

import (
	"io"
	"net"
	"sync"
	"time"
)

// Proxy is a TCP proxy in front of a server, for real network faults: it
// can add latency to every chunk (Delay), stop forwarding while keeping the
// connections (Freeze: a paused process, whose bytes arrive when it
// resumes), or blackhole (nothing passes; when it heals, every connection
// that was cut is reset, so what was in flight is lost).
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cond   *sync.Cond
	delay  time.Duration
	frozen bool
	holed  bool
	conns  map[*proxyConn]struct{}
	closed bool
	wg     sync.WaitGroup
	// Dialer dials the target; its zero value is net.Dialer's.
	Dialer net.Dialer
}

type proxyConn struct {
	client, server net.Conn
	cut            bool // saw a blackhole: reset on heal
}

// NewProxy listens on 127.0.0.1 on a free port and forwards to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[*proxyConn]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
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
			c.cut = true
		}
	} else {
		for c := range p.conns {
			if c.cut {
				cut = append(cut, c)
				delete(p.conns, c)
			}
		}
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, c := range cut {
		c.client.Close()
		c.server.Close()
	}
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.frozen, p.holed = false, false
	conns := p.conns
	p.conns = map[*proxyConn]struct{}{}
	p.cond.Broadcast()
	p.mu.Unlock()
	err := p.ln.Close()
	for c := range conns {
		c.client.Close()
		c.server.Close()
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
	// A blackholed network does not even complete the handshake with the
	// server; the client sees its own timeout.
	if !p.waitPass(nil) {
		client.Close()
		return
	}
	server, err := p.Dialer.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	pc := &proxyConn{client: client, server: server}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	p.conns[pc] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { p.pipe(pc, server, client); done <- struct{}{} }()
	go func() { p.pipe(pc, client, server); done <- struct{}{} }()
	<-done
	client.Close()
	server.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, pc)
	p.mu.Unlock()
}

// waitPass blocks while the proxy is frozen or blackholed; false when the
// proxy closed or pc was cut.
func (p *Proxy) waitPass(pc *proxyConn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for (p.frozen || p.holed) && !p.closed && (pc == nil || !pc.cut || p.holed) {
		p.cond.Wait()
	}
	return !p.closed && (pc == nil || !pc.cut)
}

func (p *Proxy) pipe(pc *proxyConn, dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			d := p.delay
			p.mu.Unlock()
			if d > 0 {
				time.Sleep(d)
			}
			if !p.waitPass(pc) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
