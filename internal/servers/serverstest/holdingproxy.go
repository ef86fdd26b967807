package serverstest

import (
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/tcpproxy"
)

// HoldingProxy forwards TCP to a server and holds every every-th chunk a
// client sends that contains match (a data key's name) for hold before
// passing it on, as a slow network or server would: the client times out
// and closes its connection, the write is delivered late all the same
// (bytes in flight are not taken back). It is the real runner's proxy
// (tcpproxy.Proxy.HoldMatching), started for a test.
type HoldingProxy struct {
	// Addr is where clients connect.
	Addr string
	p    *tcpproxy.Proxy
}

// Held is how many chunks were held so far.
func (p *HoldingProxy) Held() int64 { return p.p.Held() }

// NewHoldingProxy starts a HoldingProxy to target; it stops with the test.
func NewHoldingProxy(t testing.TB, target string, match []byte, every int64, hold time.Duration) *HoldingProxy {
	p, err := tcpproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	p.HoldMatching(match, every, hold)
	t.Cleanup(func() { p.Close() })
	return &HoldingProxy{Addr: p.Addr(), p: p}
}

// Idle waits until no connection is open through the proxy, so every held
// write has been delivered.
func (p *HoldingProxy) Idle(t testing.TB) {
	for deadline := time.Now().Add(30 * time.Second); p.p.Open() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the proxy still has connections open after 30 s")
		}
	}
}
