package faultproxy_test

import (
	"bufio"
	"fmt"
	"net"
	"time"

	"github.com/leasecheck/leasecheck/faultproxy"
)

// A client's replies are lost: the server receives its request (and would
// apply it), the client hears nothing, and the record says which leg lost
// how many bytes. A second client through the same proxy is untouched.
func Example() {
	server := lineServer() // a server that answers each line with "ok"

	px, err := faultproxy.Start(server.Addr().String())
	if err != nil {
		panic(err)
	}
	defer px.Close()
	a, _ := px.Client("a")
	b, _ := px.Client("b")

	a.Lose(faultproxy.Reply, true)
	ca, _ := net.Dial("tcp", a.Addr()) // client a dials its own end
	defer ca.Close()
	fmt.Fprintln(ca, "renew")
	for end := time.Now().Add(10 * time.Second); a.Counts().Dropped[faultproxy.Reply] == 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond) // until the server's answer is dropped
	}
	ca.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, err = bufio.NewReader(ca).ReadString('\n')
	fmt.Println("a heard nothing:", err != nil)

	cb, _ := net.Dial("tcp", b.Addr())
	defer cb.Close()
	fmt.Fprintln(cb, "renew")
	reply, _ := bufio.NewReader(cb).ReadString('\n')
	fmt.Printf("b heard: %q\n", reply)

	a.Lose(faultproxy.Reply, false)
	for _, e := range px.Record() {
		fmt.Printf("%s: %s on the %s leg, %d bytes dropped, %d connection reset\n", e.Client, e.Fault, e.Leg, e.Bytes, e.Reset)
	}
	n := a.Counts()
	fmt.Printf("a sent %d bytes, %d came back, %d dropped\n", n.Bytes[faultproxy.Request], n.Bytes[faultproxy.Reply], n.Dropped[faultproxy.Reply])
	// Output:
	// a heard nothing: true
	// b heard: "ok\n"
	// a: loss on the reply leg, 3 bytes dropped, 1 connection reset
	// a sent 6 bytes, 3 came back, 3 dropped
}

// lineServer answers every line it reads with "ok".
func lineServer() net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
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
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					fmt.Fprintln(c, "ok")
				}
			}()
		}
	}()
	return ln
}
