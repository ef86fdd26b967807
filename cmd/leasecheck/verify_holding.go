package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/etcd"
	"github.com/leasecheck/leasecheck/internal/impl/zookeeper"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers"
	"github.com/leasecheck/leasecheck/leasetest"
	lcverify "github.com/leasecheck/leasecheck/verify"
)

// The recipes that renew by themselves and say when they lost the lock
// (backend.Holding and backend.Stopper): verify runs their rounds with the
// whole client stopped on a pause, and judges their own loss signal on the
// server after the rounds (docs/holding-libraries.md).

// openEtcdElection starts an embedded etcd for the bare name (or connects
// to etcd-election://HOST:PORT) and runs etcd's election recipe on it.
func openEtcdElection(fenced bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		if !strings.Contains(spec, "://") {
			s, err := etcd.StartEmbedded(ctx)
			if err != nil {
				return nil, err
			}
			return &lcverify.Opened{Target: electionTarget(fenced, s.Addr, prefix),
				Shown: spec + " (concurrency.Election on an embedded etcd 3.7, " + s.Addr + ")", Close: func() { s.Close() }}, nil
		}
		host, err := hostURL(spec, "etcd")
		if err != nil {
			return nil, err
		}
		return &lcverify.Opened{Target: electionTarget(fenced, host, prefix)}, nil
	}
}

// openEtcdElectionCluster runs the fenced election recipe on 3 members of
// the installed etcd (servers.StartEtcdClusterOf, as etcd-cluster), its
// clients connected to every member.
func openEtcdElectionCluster(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	prog, err := servers.InstalledEtcd()
	if err != nil {
		return nil, err
	}
	c, err := servers.StartEtcdClusterOf(ctx, prog, 3)
	if err != nil {
		return nil, err
	}
	addr := strings.Join(c.Endpoints(), ",")
	tg := electionTarget(true, addr, prefix)
	tg.Info.Name = spec
	tg.Cluster = c
	return &lcverify.Opened{Target: tg, Shown: fmt.Sprintf("%s (concurrency.Election on 3 members of etcd %s started here, clients to all: %s)", spec, c.Version, addr),
		Close: func() { c.Close() }}, nil
}

func electionTarget(fenced bool, addr, prefix string) realrun.Target {
	p := "/leasecheck/" + prefix
	return realrun.Target{Info: etcd.ElectionInfo(fenced), Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		// Each client is a process of its own (this binary re-executed:
		// electionClient), so a pause is SIGSTOP of the whole library —
		// its session's keepalive goroutine and timers too — and a crash
		// SIGKILL; the judges excuse only the kernel's record of the stop.
		return leasetest.OpenClient(ctx, electionClient, leasetest.Service{Addr: a, Arg: fmt.Sprint(fenced) + "\n" + p})
	}}
}

// electionClient names the client process of etcd's election recipe: its
// Service.Arg is "true" or "false" (fenced) and the keys' prefix.
const electionClient = "etcd-election"

func init() {
	leasetest.RegisterClient(electionClient, func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
		fenced, p, ok := strings.Cut(s.Arg, "\n")
		if !ok {
			return nil, fmt.Errorf("%s: the client process was given no prefix", electionClient)
		}
		return etcd.OpenElection(ctx, s.Addr, p, fenced == "true")
	})
}

// openZkLock starts a ZooKeeper for the bare name (verify may stop and
// restart it) and runs go-zookeeper's lock recipe on it; zk-lock://HOST:PORT
// connects to a server of yours, asking it what session timeouts it grants.
func openZkLock(fenced bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		info := zookeeper.LockInfo(fenced)
		if !strings.Contains(spec, "://") {
			p, err := servers.StartZooKeeper(ctx)
			if err != nil {
				return nil, err
			}
			tg := zkLockTarget(fenced, info, p.Addr, prefix)
			tg.Server = p
			return &lcverify.Opened{Target: tg, Shown: spec + " (go-zookeeper's zk.Lock on a ZooKeeper started here, " + p.Addr + ")", Close: func() { p.Close() }}, nil
		}
		host, err := hostURL(spec, "ZooKeeper")
		if err != nil {
			return nil, err
		}
		si, err := zookeeper.ServerInfo(ctx, host, fenced)
		if err != nil {
			return nil, fmt.Errorf("zookeeper at %s is not usable: %w", host, err)
		}
		info.Uncertainty, info.MinTTL = si.Uncertainty, si.MinTTL
		return &lcverify.Opened{Target: zkLockTarget(fenced, info, host, prefix)}, nil
	}
}

func zkLockTarget(fenced bool, info backend.Info, addr, prefix string) realrun.Target {
	root := "/leasecheck/" + prefix
	return realrun.Target{Info: info, Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return zookeeper.OpenLock(ctx, a, root, fenced)
	}}
}
