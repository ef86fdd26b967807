package main

import (
	"context"
	"errors"
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
// server after the rounds (docs/holding-libraries.md). Like every backend,
// each runs every owner's client in a child process of this binary by
// default (a pause is SIGSTOP: the library's timers and goroutines stop
// too; verify_clients.go), or with --clients in-process in verify's own
// process (a pause gates the client's connections). NAME-procs is an alias
// kept from before processes were the default: its clients are processes
// of their own registration, whatever --clients says.

// holdingRecipe is which recipe of etcd's concurrency package runs on the
// background-renewed session.
type holdingRecipe int

const (
	etcdElection holdingRecipe = iota
	etcdSessionMutex
)

func (r holdingRecipe) info(fenced bool) backend.Info {
	if r == etcdSessionMutex {
		return etcd.SessionMutexInfo(fenced)
	}
	return etcd.ElectionInfo(fenced)
}

func (r holdingRecipe) open(ctx context.Context, addr, prefix string, fenced bool) (backend.Backend, error) {
	if r == etcdSessionMutex {
		return etcd.OpenSessionMutex(ctx, addr, prefix, fenced)
	}
	return etcd.OpenElection(ctx, addr, prefix, fenced)
}

// clientName is the name a client process of the recipe is registered
// under (its Info's name).
func (r holdingRecipe) clientName(fenced bool) string { return "verify-" + r.info(fenced).Name }

func zkLockClientName(fenced bool, sig zookeeper.LockSignal) string {
	return "verify-" + zookeeper.LockInfo(fenced, sig).Name
}

// The client processes of the holding recipes: this binary re-executed,
// opened on the server's address (through the owner's proxy) and the
// keys' prefix.
func init() {
	for _, fenced := range []bool{true, false} {
		for _, r := range []holdingRecipe{etcdElection, etcdSessionMutex} {
			leasetest.RegisterClient(r.clientName(fenced), func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
				if s.Addr == "" || s.Arg == "" {
					return nil, errors.New("the client process was given no etcd address and prefix")
				}
				return r.open(ctx, s.Addr, s.Arg, fenced)
			})
		}
		for _, sig := range []zookeeper.LockSignal{zookeeper.LockOnDisconnect, zookeeper.LockOnExpiry} {
			leasetest.RegisterClient(zkLockClientName(fenced, sig), func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
				if s.Addr == "" || s.Arg == "" {
					return nil, errors.New("the client process was given no ZooKeeper address and root")
				}
				return zookeeper.OpenLock(ctx, s.Addr, s.Arg, fenced, sig)
			})
		}
	}
}

// openEtcdHolding starts an embedded etcd for the bare name (or connects
// to NAME://HOST:PORT) and runs the recipe on it, in this process or with
// each owner's client a process of its own (procs).
func openEtcdHolding(r holdingRecipe, fenced, procs bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		what := "concurrency.Election"
		if r == etcdSessionMutex {
			what = "concurrency.Mutex on a concurrency.Session"
		}
		if procs {
			what += ", each owner's client a child process"
		}
		if !strings.Contains(spec, "://") {
			s, err := etcd.StartEmbedded(ctx)
			if err != nil {
				return nil, err
			}
			return &lcverify.Opened{Target: etcdHoldingTarget(r, fenced, procs, s.Addr, prefix),
				Shown: spec + " (" + what + " on an embedded etcd 3.7, " + s.Addr + ")", Close: func() { s.Close() }}, nil
		}
		host, err := hostURL(spec, "etcd")
		if err != nil {
			return nil, err
		}
		return &lcverify.Opened{Target: etcdHoldingTarget(r, fenced, procs, host, prefix)}, nil
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
	tg := etcdHoldingTarget(etcdElection, true, false, addr, prefix)
	tg.Info.Name = spec
	tg.Cluster = c
	return &lcverify.Opened{Target: tg, Shown: fmt.Sprintf("%s (concurrency.Election on 3 members of etcd %s started here, clients to all: %s)", spec, c.Version, addr),
		Close: func() { c.Close() }}, nil
}

func etcdHoldingTarget(r holdingRecipe, fenced, procs bool, addr, prefix string) realrun.Target {
	p := "/leasecheck/" + prefix
	info := r.info(fenced)
	if procs {
		info.Name += "-procs"
		return realrun.Target{Info: info, Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
			return leasetest.OpenClient(ctx, r.clientName(fenced), leasetest.Service{Addr: a, Arg: p})
		}}
	}
	return realrun.Target{Info: info, Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return r.open(ctx, a, p, fenced)
	}}
}

// openZkLockOf starts a ZooKeeper for the bare name (verify may stop and
// restart it) and runs go-zookeeper's lock recipe on it, its loss
// signalled as sig says, in this process or with each owner's client a
// process of its own (procs); zk-lock://HOST:PORT connects to a server of
// yours, asking it what session timeouts it grants.
func openZkLockOf(fenced bool, sig zookeeper.LockSignal, procs bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		info := zookeeper.LockInfo(fenced, sig)
		what := "go-zookeeper's zk.Lock, the loss signalled on disconnection"
		if sig == zookeeper.LockOnExpiry {
			what = "go-zookeeper's zk.Lock, the loss signalled on session expiry only"
		}
		if procs {
			info.Name += "-procs"
			what += ", each owner's client a child process,"
		}
		if !strings.Contains(spec, "://") {
			p, err := servers.StartZooKeeper(ctx)
			if err != nil {
				return nil, err
			}
			tg := zkLockTarget(fenced, sig, procs, info, p.Addr, prefix)
			tg.Server = p
			return &lcverify.Opened{Target: tg, Shown: spec + " (" + what + " on a ZooKeeper started here, " + p.Addr + ")", Close: func() { p.Close() }}, nil
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
		return &lcverify.Opened{Target: zkLockTarget(fenced, sig, procs, info, host, prefix)}, nil
	}
}

func zkLockTarget(fenced bool, sig zookeeper.LockSignal, procs bool, info backend.Info, addr, prefix string) realrun.Target {
	root := "/leasecheck/" + prefix
	if procs {
		return realrun.Target{Info: info, Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
			return leasetest.OpenClient(ctx, zkLockClientName(fenced, sig), leasetest.Service{Addr: a, Arg: root})
		}}
	}
	return realrun.Target{Info: info, Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return zookeeper.OpenLock(ctx, a, root, fenced, sig)
	}}
}
