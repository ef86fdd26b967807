package tcpproxy

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// echo starts a line echo server.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(l))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	c.SetDeadline(start.Add(timeout))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	_, err := bufio.NewReader(c).ReadString('\n')
	return time.Since(start), err
}

func TestProxy(t *testing.T) {
	p, err := New(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, time.Second); err != nil {
		t.Fatalf("plain: %v", err)
	}

	p.SetDelay(100 * time.Millisecond)
	if d, err := roundTrip(c, time.Second); err != nil || d < 200*time.Millisecond {
		t.Errorf("delayed round trip = %v, %v; want >= 200ms", d, err)
	}
	p.SetDelay(0)

	// Freeze: nothing passes, but the bytes arrive after the thaw.
	p.Freeze(true)
	if _, err := roundTrip(c, 200*time.Millisecond); err == nil {
		t.Errorf("round trip through a frozen proxy succeeded")
	}
	p.Freeze(false)
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Errorf("after the thaw, the frozen request's answer did not arrive: %v", err)
	}

	// Blackhole: nothing passes, and the connection is reset on heal.
	p.Blackhole(true)
	if _, err := roundTrip(c, 200*time.Millisecond); err == nil {
		t.Errorf("round trip through a blackhole succeeded")
	}
	p.Blackhole(false)
	time.Sleep(50 * time.Millisecond)
	if _, err := roundTrip(c, 500*time.Millisecond); err == nil {
		t.Errorf("the connection cut by the blackhole survived it")
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := roundTrip(c2, time.Second); err != nil {
		t.Errorf("new connection after heal: %v", err)
	}
}

// TestLabeledProxy: a labelled proxy cuts and delays one label's
// connections and leaves the others alone; a connection made during its
// label's cut waits, and one cut is reset on heal.
func TestLabeledProxy(t *testing.T) {
	p, err := NewLabeled(echo(t), func(_ net.Conn, head []byte) (string, bool) {
		l, _, ok := strings.Cut(string(head), "\n")
		return l, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dial := func(label string) net.Conn {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte(label + "\n")); err != nil {
			t.Fatal(err)
		}
		if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || l != label+"\n" {
			t.Fatalf("%s: the opening line came back as %q, %v", label, l, err)
		}
		return c
	}
	a, b := dial("a"), dial("b")
	p.BlackholeFrom("a", true)
	if _, err := roundTrip(a, 200*time.Millisecond); err == nil {
		t.Errorf("a's round trip passed a's cut")
	}
	if _, err := roundTrip(b, time.Second); err != nil {
		t.Errorf("b's round trip failed during a's cut: %v", err)
	}
	late, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	late.Write([]byte("a\n"))
	late.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := bufio.NewReader(late).ReadString('\n'); err == nil {
		t.Errorf("a connection labelled a was served during a's cut")
	}
	p.SetDelayFrom("b", 150*time.Millisecond)
	if d, err := roundTrip(b, 2*time.Second); err != nil || d < 300*time.Millisecond {
		t.Errorf("b's delayed round trip = %v, %v; want >= 300ms", d, err)
	}
	p.SetDelayFrom("b", 0)
	p.BlackholeFrom("a", false)
	time.Sleep(50 * time.Millisecond)
	if _, err := roundTrip(a, 500*time.Millisecond); err == nil {
		t.Errorf("a's connection cut by its blackhole survived the heal")
	}
	late.SetDeadline(time.Now().Add(time.Second))
	if l, err := bufio.NewReader(late).ReadString('\n'); err != nil || l != "a\n" {
		t.Errorf("the connection that waited out a's cut: %q, %v; want its line after the heal", l, err)
	}
	dial("a")
}

func TestHTTPHeaderLabel(t *testing.T) {
	l := HTTPHeader("X-Server-From")
	for _, c := range []struct {
		head, want string
		done       bool
	}{
		{"GET /raft/stream/msgapp/2 HTTP/1.1\r\nHost: x\r\nX-Server-From: 8e9e05c52164694d\r\n\r\n", "8e9e05c52164694d", true},
		{"POST /raft HTTP/1.1\r\nx-server-from:  a1\r\nContent-Length: 3\r\n\r\nabc", "a1", true},
		{"GET /raft/probing HTTP/1.1\r\nHost: x\r\n\r\n", "", true},
		{"GET /raft HTTP/1.1\r\nX-Server-From: a1\r\n", "", false}, // header not complete yet
	} {
		if got, done := l(nil, []byte(c.head)); got != c.want || done != c.done {
			t.Errorf("%q: got %q, %v; want %q, %v", c.head, got, done, c.want, c.done)
		}
	}
}

// TestProxyReject: a rejecting partition resets every open connection at
// once (the client's next read fails with a reset, not a timeout) and every
// new one as soon as it arrives; healed, new connections pass again; and
// RejectFrom resets one label's connections only.
func TestProxyReject(t *testing.T) {
	p, err := New(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Reject(true)
	start := time.Now()
	if _, err := roundTrip(c, 5*time.Second); err == nil || !strings.Contains(err.Error(), "reset") {
		t.Errorf("an open connection across a reject: %v; want a connection reset", err)
	} else if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the reset took %v: a reject must be seen at once", d)
	}
	n, err := net.Dial("tcp", p.Addr())
	if err == nil {
		_, err = roundTrip(n, 5*time.Second)
		n.Close()
	}
	if err == nil || !(strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "refused")) {
		t.Errorf("a new connection during a reject: %v; want it reset", err)
	}
	p.Reject(false)
	n, err = net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := roundTrip(n, 2*time.Second); err != nil {
		t.Errorf("a new connection after the heal: %v", err)
	}

	// Labelled: the label is the first line the dialler sends.
	lp, err := NewLabeled(echo(t), func(_ net.Conn, head []byte) (string, bool) {
		i := strings.IndexByte(string(head), '\n')
		if i < 0 {
			return "", false
		}
		return string(head[:i]), true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lp.Close()
	dial := func(label string) net.Conn {
		c, err := net.Dial("tcp", lp.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.Write([]byte(label + "\n"))
		bufio.NewReader(c).ReadString('\n') // the label line echoed
		return c
	}
	a, b := dial("a"), dial("b")
	lp.RejectFrom("a", true)
	if _, err := roundTrip(a, 5*time.Second); err == nil {
		t.Error("label a's connection passed across RejectFrom(a)")
	}
	if _, err := roundTrip(b, 2*time.Second); err != nil {
		t.Errorf("label b's connection across RejectFrom(a): %v", err)
	}
	lp.RejectFrom("a", false)
}

// TestProxyHoldMatching: a chunk that contains the match is held (every
// second one), the client gives up and closes, and the server receives it
// late all the same; only the every-second matching chunk is held (the
// count, not a time: a loaded machine may be slow to pass any chunk).
func TestProxyHoldMatching(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					got <- l
				}
			}()
		}
	}()
	p, err := New(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const hold = 300 * time.Millisecond
	p.HoldMatching([]byte("data:"), 2, hold)
	send := func(line string) time.Time {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(line))
		sent := time.Now()
		c.Close() // the client gives up at once
		return sent
	}
	wait := func(want string) time.Time {
		select {
		case l := <-got:
			if l != want {
				t.Fatalf("server got %q, want %q", l, want)
			}
			return time.Now()
		case <-time.After(10 * time.Second):
			t.Fatalf("server never got %q", want)
		}
		return time.Time{}
	}
	for i, tc := range []struct {
		line string
		held bool
	}{{"data:1\n", false}, {"data:2\n", true}, {"other\n", false}, {"data:3\n", false}, {"data:4\n", true}} {
		sent := send(tc.line)
		late := wait(tc.line).Sub(sent)
		if tc.held && late < hold {
			t.Errorf("chunk %d (%q) arrived after %v, want held %v", i, tc.line, late, hold)
		}
	}
	if p.Held() != 2 {
		t.Errorf("Held() = %d, want 2", p.Held())
	}
	for deadline := time.Now().Add(5 * time.Second); p.Open() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open", p.Open())
		}
	}
}
