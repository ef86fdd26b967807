package servers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// NATSCluster is one or more nats-server instances with JetStream,
// embedded in this process (the Go module github.com/nats-io/nats-server),
// on free ports of 127.0.0.1, each with a store directory under the
// cluster's own temporary directory, which Close removes. A single server
// is a cluster of one with no routes. The servers are in-process, so
// there is no process to freeze: a member is killed (Kill: shut down, its
// store kept) and started again on its port and store (Start), which is
// what a crash and restart is to a JetStream server that syncs its store
// (sync_interval always).
type NATSCluster struct {
	Servers []*NATSMember
	Version string
	dir     string
}

// NATSMember is one server of a NATSCluster.
type NATSMember struct {
	Member string // m1, m2, ...
	Addr   string // client address, 127.0.0.1:port

	opts *natsserver.Options
	mu   sync.Mutex
	s    *natsserver.Server // nil while killed
}

// StartNATS starts one embedded nats-server with JetStream.
func StartNATS(ctx context.Context) (*NATSCluster, error) { return StartNATSCluster(ctx, 1) }

// StartNATSCluster starts n embedded nats-servers with JetStream, every
// one routed to every other (n > 1: a JetStream cluster whose meta group
// and replicated streams run on NATS's own Raft), and returns once every
// server takes clients and, for a cluster, JetStream has a meta leader
// that every server is current with.
func StartNATSCluster(ctx context.Context, n int) (*NATSCluster, error) {
	return RetryPortTaken(func() (*NATSCluster, error) { return startNATSCluster(ctx, n) })
}

func startNATSCluster(ctx context.Context, n int) (*NATSCluster, error) {
	if n < 1 {
		return nil, errors.New("nats: at least one server")
	}
	dir, err := os.MkdirTemp("", "leasecheck-nats-")
	if err != nil {
		return nil, err
	}
	c := &NATSCluster{Version: natsserver.VERSION, dir: dir}
	type ports struct{ client, route int }
	ps := make([]ports, n)
	free, err := freePorts(2 * n)
	if err != nil {
		c.Close()
		return nil, err
	}
	for i := range ps {
		ps[i].client = free[2*i]
		if n > 1 {
			ps[i].route = free[2*i+1]
		}
	}
	for i := range ps {
		m := "m" + strconv.Itoa(i+1)
		o := &natsserver.Options{
			ServerName: m,
			Host:       "127.0.0.1",
			Port:       ps[i].client,
			JetStream:  true,
			StoreDir:   filepath.Join(dir, m),
			NoLog:      true,
			NoSigs:     true,
			// Every write reaches the disk before it is acknowledged, so a
			// killed server comes back with what it acknowledged.
			SyncAlways: true,
		}
		if n > 1 {
			o.Cluster = natsserver.ClusterOpts{Name: "leasecheck", Host: "127.0.0.1", Port: ps[i].route}
			for j := range ps {
				if j != i {
					o.Routes = append(o.Routes, &url.URL{Scheme: "nats", Host: hostPort(ps[j].route)})
				}
			}
		}
		c.Servers = append(c.Servers, &NATSMember{Member: m, Addr: hostPort(ps[i].client), opts: o})
	}
	for _, m := range c.Servers {
		if err := m.Start(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.AwaitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Start starts m (again) on its port and store.
func (m *NATSMember) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.s != nil {
		return nil
	}
	s, err := natsserver.NewServer(m.opts)
	if err != nil {
		return fmt.Errorf("nats %s: %w", m.Member, err)
	}
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		// The server says why only in its log: a port taken is the usual
		// reason, which RetryPortTaken retries.
		return fmt.Errorf("nats %s: not ready for connections on %s within 20s (address already in use?)", m.Member, m.Addr)
	}
	m.s = s
	return nil
}

// Kill shuts m down at once (its clients' connections drop), keeping its
// store: a crash.
func (m *NATSMember) Kill() {
	m.mu.Lock()
	s := m.s
	m.s = nil
	m.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// Server is m's running server, nil while killed.
func (m *NATSMember) Server() *natsserver.Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s
}

// Endpoints are the servers' client addresses.
func (c *NATSCluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Servers {
		eps = append(eps, m.Addr)
	}
	return eps
}

// URL is a NATS client URL list naming every server.
func (c *NATSCluster) URL() string {
	var us []string
	for _, a := range c.Endpoints() {
		us = append(us, "nats://"+a)
	}
	return strings.Join(us, ",")
}

// MetaLeader is the member that leads JetStream's meta group ("" for a
// single server, or when none does).
func (c *NATSCluster) MetaLeader() string {
	for _, m := range c.Servers {
		if s := m.Server(); s != nil && s.JetStreamIsLeader() {
			return m.Member
		}
	}
	return ""
}

// StreamLeader is the member that leads the stream's Raft group in the
// global account ("" when none does).
func (c *NATSCluster) StreamLeader(stream string) string {
	for _, m := range c.Servers {
		if s := m.Server(); s != nil && s.JetStreamIsStreamLeader(natsserver.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return m.Member
		}
	}
	return ""
}

// Member is the member named name, or nil.
func (c *NATSCluster) Member(name string) *NATSMember {
	for _, m := range c.Servers {
		if m.Member == name {
			return m
		}
	}
	return nil
}

// AwaitReady waits until JetStream is enabled on every running server and,
// in a cluster, a meta leader exists that every running server is current
// with.
func (c *NATSCluster) AwaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		ready := true
		for _, m := range c.Servers {
			s := m.Server()
			if s == nil {
				continue
			}
			if !s.JetStreamEnabled() || (len(c.Servers) > 1 && !s.JetStreamIsCurrent()) {
				ready = false
			}
		}
		if ready && (len(c.Servers) == 1 || c.MetaLeader() != "") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nats: JetStream not ready: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close shuts every server down and removes their stores.
func (c *NATSCluster) Close() error {
	for _, m := range c.Servers {
		m.Kill()
	}
	return os.RemoveAll(c.dir)
}

// Dir is the directory of the servers' stores.
func (c *NATSCluster) Dir() string { return c.dir }
