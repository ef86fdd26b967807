package main

import (
	"context"
	"strings"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/etcd"
	"github.com/leasecheck/leasecheck/internal/impl/zookeeper"
	"github.com/leasecheck/leasecheck/internal/realrun"
	lcverify "github.com/leasecheck/leasecheck/verify"
)

// verify runs each owner's client in a child process of this binary by
// default (--clients process): the child is served here, at init, before
// anything else of the command runs.
func init() { lcverify.ServeClients(builtinBackends()...) }

// openFunc is a built-in backend's Open.
type openFunc = func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error)

// served is open, but in one of verify's client processes, where the
// server is the parent's (at addr, the parent's target's address) and
// must not be started again, it is the target client builds on addr.
func served(open openFunc, client func(addr, spec, prefix string) realrun.Target) openFunc {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		if addr, ok := lcverify.InClientProcess(ctx); ok {
			return &lcverify.Opened{Target: client(addr, spec, prefix)}, nil
		}
		return open(ctx, spec, prefix)
	}
}

// viaURL is open, but in a client process a bare name is opened as its
// URL form on the parent's server (scheme://addr), which starts nothing.
func viaURL(open openFunc, scheme string) openFunc {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		if addr, ok := lcverify.InClientProcess(ctx); ok && !strings.Contains(spec, "://") {
			spec = scheme + "://" + addr
			if scheme == "postgres" {
				// The server verify started (servers.StartPostgres) is
				// reached as its URL says.
				spec = "postgres://postgres@" + addr + "/postgres?sslmode=disable"
			}
		}
		return open(ctx, spec, prefix)
	}
}

// etcdClient is the target of an etcd lock recipe on addr.
func etcdClient(recipe etcdRecipe) func(addr, spec, prefix string) realrun.Target {
	return func(addr, _, prefix string) realrun.Target {
		switch recipe {
		case etcdMutex:
			return etcdTarget(true, addr, prefix)
		case etcdStaleCheck:
			p := "/leasecheck/" + prefix
			return realrun.Target{Info: etcd.StaleCheckInfo(), Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
				return etcd.OpenStaleCheck(ctx, a, p)
			}}
		}
		return etcdTarget(false, addr, prefix)
	}
}

// zkClient is the target of the ZooKeeper lock on addr (a server or an
// ensemble's).
func zkClient(fenced bool) func(addr, spec, prefix string) realrun.Target {
	return func(addr, _, prefix string) realrun.Target {
		info := zookeeper.Info()
		if !fenced {
			info = zookeeper.UnfencedInfo()
		}
		return zkTarget(fenced, info, addr, prefix)
	}
}

// zkLockClient is the target of go-zookeeper's lock recipe on addr.
func zkLockClient(fenced bool, sig zookeeper.LockSignal) func(addr, spec, prefix string) realrun.Target {
	return func(addr, _, prefix string) realrun.Target {
		return zkLockTarget(fenced, sig, false, zookeeper.LockInfo(fenced, sig), addr, prefix)
	}
}

// holdingClient is the target of an etcd recipe that renews by itself,
// on addr.
func holdingClient(r holdingRecipe, fenced bool) func(addr, spec, prefix string) realrun.Target {
	return func(addr, _, prefix string) realrun.Target {
		return etcdHoldingTarget(r, fenced, false, addr, prefix)
	}
}

// natsClientOf is the target of the JetStream KV lock on addr (n servers).
func natsClientOf(n int, fenced, defaults bool) func(addr, spec, prefix string) realrun.Target {
	return func(addr, _, prefix string) realrun.Target {
		return natsTarget(addr, prefix, fenced, defaults, n)
	}
}
