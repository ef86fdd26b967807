// Package ports finds free TCP ports on 127.0.0.1 for servers leasecheck
// starts, and retries a start whose port was taken meanwhile. It imports
// nothing of leasecheck, so an adapter that starts its own server (internal/impl/etcd
// embeds one) needs no more of the server harness (internal/servers, which
// drives real servers with the real runner's proxies) than this.
package ports

import (
	"net"
	"strings"
)

// Free returns a TCP port on 127.0.0.1 that was free a moment ago.
func Free() (int, error) {
	ps, err := FreeN(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}

// FreeN returns n different TCP ports on 127.0.0.1 that were free a moment
// ago. Each is held until all are chosen: ports asked for one at a time
// may come back the same (the kernel hands out a port again once it is
// closed), and a ZooKeeper given one port for two of its listeners
// refuses its configuration.
func FreeN(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ps := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ps = append(ps, ln.Addr().(*net.TCPAddr).Port)
	}
	return ps, nil
}

// RetryTaken starts a server or cluster again, up to three times, when it
// (or a member) could not bind the port Free gave it: between Free's close
// and the server's bind, another process — or an outgoing connection,
// whose local port comes from the same ephemeral range — may take it.
// Every failed attempt must have stopped its processes and removed its
// directories.
func RetryTaken[T any](start func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		c, err := start()
		if err == nil || attempt == 3 || !Taken(err) {
			return c, err
		}
	}
}

// Taken reports whether a start-up error is a server's failed bind (Go's
// and Java's wording).
func Taken(err error) bool {
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "address already in use")
}
