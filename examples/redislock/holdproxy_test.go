package redislock_test

import (
	"bytes"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// holdingProxy forwards TCP to a server and holds every every-th chunk a
// client sends that contains match (a data key's name) for hold before
// passing it on, as a slow network or server would: the client times out
// and closes its connection, and the write is delivered late all the same
// (bytes in flight are not taken back).
type holdingProxy struct {
	Addr string

	matched, held atomic.Int64
	open          atomic.Int64 // directions of connections still forwarding
}

// newHoldingProxy starts a holdingProxy to target; it stops with the test.
func newHoldingProxy(t testing.TB, target string, match []byte, every int64, hold time.Duration) *holdingProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p := &holdingProxy{Addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.open.Add(2)
			go func() { // server to client, as it comes
				defer p.open.Add(-1)
				io.Copy(c, s)
				c.Close()
			}()
			go func() { // client to server, the matching chunks held
				defer p.open.Add(-1)
				defer s.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if bytes.Contains(buf[:n], match) && p.matched.Add(1)%every == 0 {
							p.held.Add(1)
							time.Sleep(hold)
						}
						if _, err := s.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

// Held is how many chunks were held so far.
func (p *holdingProxy) Held() int64 { return p.held.Load() }

// Idle waits until every connection through the proxy has closed, so
// every held write has been delivered.
func (p *holdingProxy) Idle(t testing.TB) {
	for deadline := time.Now().Add(30 * time.Second); p.open.Load() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the proxy still has connections open after 30 s")
		}
	}
}
