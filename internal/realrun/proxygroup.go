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

// setLegs puts the leg faults s in force on every proxy of the group; a
// setting already in force is left as it is (its record goes on).
func (g proxyGroup) setLegs(s legSettings) {
	for _, p := range g {
		for leg := range s.lost {
			p.Lose(tcpproxy.Leg(leg), s.lost[leg])
			p.SetLegDelay(tcpproxy.Leg(leg), s.delay[leg])
			p.SetJitter(tcpproxy.Leg(leg), s.jitter)
		}
		p.Duplicate(s.dup, s.dupAfter)
	}
}

// events is the fault record of every proxy of the group.
func (g proxyGroup) events() []tcpproxy.Event {
	var out []tcpproxy.Event
	for _, p := range g {
		out = append(out, p.Events()...)
	}
	return out
}

// counts is what crossed the group's proxies, summed.
func (g proxyGroup) counts() tcpproxy.Counts {
	var n tcpproxy.Counts
	for _, p := range g {
		c := p.Counts()
		n.Conns += c.Conns
		n.Unframed += c.Unframed
		n.Duplicates += c.Duplicates
		if c.Protocol != "" {
			n.Protocol = c.Protocol
		}
		for l := range n.Bytes {
			n.Bytes[l] += c.Bytes[l]
			n.Delivered[l] += c.Delivered[l]
			n.Dropped[l] += c.Dropped[l]
			n.Messages[l] += c.Messages[l]
		}
	}
	return n
}

func (g proxyGroup) Close() error {
	for _, p := range g {
		p.Close()
	}
	return nil
}
