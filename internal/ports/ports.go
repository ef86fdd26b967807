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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
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
