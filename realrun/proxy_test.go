package realrun

import (
	"bufio"
	"net"
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
	p, err := NewProxy(echo(t))
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
