package serverstest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// HoldingProxy forwards TCP to a server and holds every every-th chunk a
// client sends that contains match (a data key's name) for hold before
// passing it on, as a slow network or server would: the client times out and closes its connection, the write is
// delivered late all the same (bytes in flight are not taken back), then
// the proxy closes its side towards the server.
type HoldingProxy struct {
	// Addr is where clients connect.
	Addr   string
	target string
	match  []byte
	every  int64
	hold   time.Duration
	n      atomic.Int64
	held   atomic.Int64
	// open counts the connections being served; busy waits for them at
	// cleanup, once nothing can Add (a WaitGroup's Add from zero must not
	// race its Wait, so Idle polls open instead).
	open atomic.Int64
	busy sync.WaitGroup
}

// Held is how many chunks were held so far.
func (p *HoldingProxy) Held() int64 { return p.held.Load() }

// NewHoldingProxy starts a HoldingProxy to target; it stops with the test.
func NewHoldingProxy(t testing.TB, target string, match []byte, every int64, hold time.Duration) *HoldingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &HoldingProxy{Addr: ln.Addr().String(), target: target, match: match, every: every, hold: hold}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.busy.Add(1)
			p.open.Add(1)
			go p.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done; p.busy.Wait() })
	return p
}

func (p *HoldingProxy) serve(client net.Conn) {
	defer p.busy.Done()
	defer p.open.Add(-1)
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	replies := make(chan struct{})
	go func() { io.Copy(client, server); close(replies) }() // ends when the server closes
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			if bytes.Contains(buf[:n], p.match) && p.n.Add(1)%p.every == 0 {
				p.held.Add(1)
				time.Sleep(p.hold)
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				return
			}
			// The client is gone: let the server read to the end, then close.
			server.(*net.TCPConn).CloseWrite()
			<-replies
			return
		}
	}
}

// Idle waits until no connection is open through the proxy, so every held
// write has been delivered.
func (p *HoldingProxy) Idle(t testing.TB) {
	for deadline := time.Now().Add(30 * time.Second); p.open.Load() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the proxy still has connections open after 30 s")
		}
	}
}
