package realrun

import (
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/internal/tcpproxy"
)

// proxyGroup is one client's proxies: one in front of each address of the
// target (a cluster's members, Target.Addr "a,b,c"), acting as one for the
// faults on the client (a partition cuts it from every member); member i's
// alone for a partition from one member.
type proxyGroup []*tcpproxy.Proxy

// newProxyGroup starts a proxy in front of each comma-separated address.
func newProxyGroup(addrs string) (proxyGroup, error) {
	var g proxyGroup
	for _, a := range strings.Split(addrs, ",") {
		p, err := tcpproxy.New(strings.TrimSpace(a))
		if err != nil {
			g.Close()
			return nil, err
		}
		g = append(g, p)
	}
	return g, nil
}

// Addr is the proxies' addresses, comma-separated, in the target's order.
func (g proxyGroup) Addr() string {
	s := make([]string, len(g))
	for i, p := range g {
		s[i] = p.Addr()
	}
	return strings.Join(s, ",")
}

func (g proxyGroup) SetDelay(d time.Duration) {
	for _, p := range g {
		p.SetDelay(d)
	}
}

func (g proxyGroup) Freeze(on bool) {
	for _, p := range g {
		p.Freeze(on)
	}
}

func (g proxyGroup) Blackhole(on bool) {
	for _, p := range g {
		p.Blackhole(on)
	}
}

func (g proxyGroup) Close() error {
	for _, p := range g {
		p.Close()
	}
	return nil
}
