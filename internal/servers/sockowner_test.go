package servers

import (
	"net"
	"os"
	"testing"
)

// TestSocketOwner: the dialler of a loopback connection is found by its
// socket, and a process that does not hold it is not named.
func TestSocketOwner(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := socketOwner(s.RemoteAddr(), s.LocalAddr(), []int{os.Getppid(), os.Getpid()}); got != os.Getpid() {
		t.Errorf("socketOwner = %d; want this process, %d", got, os.Getpid())
	}
	if got := socketOwner(s.RemoteAddr(), s.LocalAddr(), []int{os.Getppid()}); got != 0 {
		t.Errorf("socketOwner named %d, which does not hold the socket", got)
	}
}
