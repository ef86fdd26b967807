package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/etcdmember"
	"github.com/leasecheck/leasecheck/internal/impl/etcd"
	"github.com/leasecheck/leasecheck/internal/impl/postgres"
	"github.com/leasecheck/leasecheck/internal/impl/redis"
	"github.com/leasecheck/leasecheck/internal/impl/zookeeper"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers"
	lcverify "github.com/leasecheck/leasecheck/verify"
)

func init() {
	register("verify", command{
		summary: "run the workload with real faults against a real lease backend (etcd, Redis, PostgreSQL, ZooKeeper) and check it",
		run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			c := lcverify.Command{Name: "leasecheck verify", Backends: builtinBackends(), Default: "etcd"}
			// An interrupt ends the round in progress and stops the servers
			// verify started, removing their data (a cluster's too), as
			// verify.Main does.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return c.Run(ctx, args, stdout, stderr)
		},
	})
}

// builtinBackends is `leasecheck verify`'s registry: every backend it
// knows, by name (a server started here, or embedded) and by URL (a server
// of yours). The command itself is package verify's, the same code a
// user's own main runs with its own table.
func builtinBackends() []lcverify.Backend {
	return []lcverify.Backend{
		{Name: "etcd", Schemes: []string{"etcd"}, Usage: "etcd (embedded etcd 3.7) | etcd://HOST:PORT", Open: viaURL(openEtcd(false), "etcd")},
		{Name: "etcd-mutex", Schemes: []string{"etcd-mutex"}, Usage: "etcd-mutex (concurrency.Mutex + a plain Put, embedded) | etcd-mutex://HOST:PORT", Open: viaURL(openEtcd(true), "etcd-mutex")},
		{Name: "redis", Schemes: []string{"redis", "rediss"}, Usage: "redis (a redis-server started here) | redis://[user:pass@]HOST:PORT[/db]", Open: viaURL(openRedis, "redis")},
		{Name: "postgres", Schemes: []string{"postgres", "postgresql"}, Usage: "postgres (a PostgreSQL started here) | postgres://USER[:PASS]@HOST:PORT/DB", Open: viaURL(openPostgres, "postgres")},
		{Name: "zookeeper", Schemes: []string{"zk"}, Usage: "zookeeper (a ZooKeeper started here) | zk://HOST:PORT", Open: served(openZooKeeper(true), zkClient(true))},
		{Name: "zookeeper-unfenced", Schemes: []string{"zk-unfenced"}, Usage: "zookeeper-unfenced (the lock recipe + a plain setData) | zk-unfenced://HOST:PORT", Open: served(openZooKeeper(false), zkClient(false))},
		{Name: "nats-kv", Schemes: []string{"nats-kv"}, Usage: "nats-kv (a JetStream KV lock, per-key TTL, fenced writes; nats-server embedded) | nats-kv://HOST:PORT", Open: served(openNATS(1, true, false), natsClientOf(1, true, false))},
		{Name: "nats-kv-defaults", Schemes: []string{"nats-kv-defaults"}, Usage: "nats-kv-defaults (the same lock with nats.go's defaults: renewed by KeyValue.Update as it is, direct gets on) | nats-kv-defaults://HOST:PORT", Open: served(openNATS(1, true, true), natsClientOf(1, true, true))},
		{Name: "nats-kv-processes", Usage: "nats-kv-processes (an alias of nats-kv, whose clients are child processes by default; by this name they stay processes under --clients in-process)", Open: openNATSClients(1, true, false, true)},
		{Name: "nats-kv-defaults-processes", Usage: "nats-kv-defaults-processes (an alias of nats-kv-defaults, whose clients are child processes by default; by this name they stay processes under --clients in-process)", Open: openNATSClients(1, true, true, true)},
		{Name: "nats-kv-unfenced", Schemes: []string{"nats-kv-unfenced"}, Usage: "nats-kv-unfenced (the same lock + a plain Put) | nats-kv-unfenced://HOST:PORT", Open: served(openNATS(1, false, false), natsClientOf(1, false, false))},
		{Name: "nats-kv-cluster", Usage: "nats-kv-cluster (the same lock on 3 embedded nats-servers, a JetStream cluster, the bucket replicated 3 times)", Open: served(openNATS(3, true, false), natsClientOf(3, true, false))},
		{Name: "etcd34", Usage: "etcd34 (the installed etcd 3.4 server, started here)", Open: served(openEtcd34(false), etcdClient(etcdFenced))},
		{Name: "etcd34-mutex", Usage: "etcd34-mutex (the same, concurrency.Mutex + a plain Put)", Open: served(openEtcd34(true), etcdClient(etcdMutex))},
		{Name: "etcd-cluster", Schemes: []string{"etcd-cluster"}, Usage: "etcd-cluster (3 members of the installed etcd started here, clients to all) | etcd-cluster://leader (clients to the leader, moved to m1 before each round) | etcd-cluster://mN (clients to member N)", Open: served(openEtcdCluster(etcdFenced, servers.InstalledEtcd), etcdClient(etcdFenced))},
		{Name: "etcd-cluster-mutex", Schemes: []string{"etcd-cluster-mutex"}, Usage: "etcd-cluster-mutex (the same cluster, concurrency.Mutex + a plain Put) | etcd-cluster-mutex://leader | etcd-cluster-mutex://mN", Open: served(openEtcdCluster(etcdMutex, servers.InstalledEtcd), etcdClient(etcdMutex))},
		{Name: "etcd-cluster-stale-check", Usage: "etcd-cluster-stale-check (the same cluster, a planted bug: the write checks the lock with a serializable read on the client's local member m1, then a plain Put)", Open: served(openEtcdCluster(etcdStaleCheck, servers.InstalledEtcd), etcdClient(etcdStaleCheck))},
		{Name: "etcd37-cluster", Schemes: []string{"etcd37-cluster"}, Usage: "etcd37-cluster (3 members of the embedded etcd 3.7, each a child process of this binary, clients to all) | etcd37-cluster://leader | etcd37-cluster://mN", Open: served(openEtcdCluster(etcdFenced, etcdmember.Program), etcdClient(etcdFenced))},
		{Name: "etcd37-cluster-mutex", Schemes: []string{"etcd37-cluster-mutex"}, Usage: "etcd37-cluster-mutex (the same 3.7 cluster, concurrency.Mutex + a plain Put) | etcd37-cluster-mutex://leader | etcd37-cluster-mutex://mN", Open: served(openEtcdCluster(etcdMutex, etcdmember.Program), etcdClient(etcdMutex))},
		{Name: "etcd37-cluster-stale-check", Usage: "etcd37-cluster-stale-check (the same 3.7 cluster, the serializable-read check planted bug of etcd-cluster-stale-check)", Open: served(openEtcdCluster(etcdStaleCheck, etcdmember.Program), etcdClient(etcdStaleCheck))},
		{Name: "zookeeper-ensemble", Usage: "zookeeper-ensemble (3 servers of the installed ZooKeeper started here, clients to all)", Open: served(openZooKeeperEnsemble(true), zkClient(true))},
		{Name: "zookeeper-ensemble-unfenced", Usage: "zookeeper-ensemble-unfenced (the same ensemble, the lock recipe + a plain setData)", Open: served(openZooKeeperEnsemble(false), zkClient(false))},
		{Name: "etcd34-stale-check", Usage: "etcd34-stale-check (the same planted bug on one etcd 3.4 server, where the check is exact)", Open: served(openEtcd34StaleCheck, etcdClient(etcdStaleCheck))},
		{Name: "etcd-election", Schemes: []string{"etcd-election"}, Usage: "etcd-election (concurrency.Election, its session renewing in the background, writes fenced by the key's revision, embedded) | etcd-election://HOST:PORT", Open: served(openEtcdHolding(etcdElection, true, false), holdingClient(etcdElection, true))},
		{Name: "etcd-election-unfenced", Usage: "etcd-election-unfenced (the same election, a plain Put)", Open: served(openEtcdHolding(etcdElection, false, false), holdingClient(etcdElection, false))},
		{Name: "etcd-election-cluster", Usage: "etcd-election-cluster (the fenced election on 3 members of the installed etcd started here)", Open: served(openEtcdElectionCluster, holdingClient(etcdElection, true))},
		{Name: "zk-lock", Schemes: []string{"zk-lock"}, Usage: "zk-lock (go-zookeeper's zk.Lock, its session pinged in the background, writes fenced by the lock node, the loss signalled on disconnection as Curator does, on a ZooKeeper started here) | zk-lock://HOST:PORT", Open: served(openZkLockOf(true, zookeeper.LockOnDisconnect, false), zkLockClient(true, zookeeper.LockOnDisconnect))},
		{Name: "zk-lock-unfenced", Usage: "zk-lock-unfenced (the same lock, a plain setData)", Open: served(openZkLockOf(false, zookeeper.LockOnDisconnect, false), zkLockClient(false, zookeeper.LockOnDisconnect))},
		{Name: "zk-lock-expiry", Usage: "zk-lock-expiry (zk-lock with the loss signalled on session expiry only: late under a partition)", Open: served(openZkLockOf(true, zookeeper.LockOnExpiry, false), zkLockClient(true, zookeeper.LockOnExpiry))},
		{Name: "etcd-session-mutex", Schemes: []string{"etcd-session-mutex"}, Usage: "etcd-session-mutex (concurrency.Mutex on a session renewing in the background, writes fenced by Mutex.IsOwner, embedded) | etcd-session-mutex://HOST:PORT", Open: served(openEtcdHolding(etcdSessionMutex, true, false), holdingClient(etcdSessionMutex, true))},
		{Name: "etcd-session-mutex-unfenced", Usage: "etcd-session-mutex-unfenced (the same Mutex, a plain Put)", Open: served(openEtcdHolding(etcdSessionMutex, false, false), holdingClient(etcdSessionMutex, false))},
		{Name: "etcd-election-procs", Usage: "etcd-election-procs (an alias of etcd-election, whose clients are child processes by default; by this name they stay processes under --clients in-process)", Open: openEtcdHolding(etcdElection, true, true)},
		{Name: "etcd-election-unfenced-procs", Usage: "etcd-election-unfenced-procs (an alias of etcd-election-unfenced, whose clients are child processes by default; by this name they stay processes under --clients in-process)", Open: openEtcdHolding(etcdElection, false, true)},
		{Name: "etcd-session-mutex-procs", Usage: "etcd-session-mutex-procs (an alias of etcd-session-mutex, whose clients are child processes by default; by this name they stay processes under --clients in-process)", Open: openEtcdHolding(etcdSessionMutex, true, true)},
		{Name: "etcd-session-mutex-unfenced-procs", Usage: "etcd-session-mutex-unfenced-procs (an alias of etcd-session-mutex-unfenced, whose clients are child processes by default; by this name they stay processes under --clients in-process)", Open: openEtcdHolding(etcdSessionMutex, false, true)},
		{Name: "zk-lock-procs", Usage: "zk-lock-procs (an alias of zk-lock, whose clients are child processes by default; by this name they stay processes under --clients in-process)", Open: openZkLockOf(true, zookeeper.LockOnDisconnect, true)},
		{Name: "zk-lock-unfenced-procs", Usage: "zk-lock-unfenced-procs (an alias of zk-lock-unfenced, whose clients are child processes by default; by this name they stay processes under --clients in-process)", Open: openZkLockOf(false, zookeeper.LockOnDisconnect, true)},
		{Name: "zk-lock-expiry-procs", Usage: "zk-lock-expiry-procs (an alias of zk-lock-expiry, whose clients are child processes by default; by this name they stay processes under --clients in-process)", Open: openZkLockOf(true, zookeeper.LockOnExpiry, true)},
	}
}

// The etcd lock recipes verify runs on a cluster.
type etcdRecipe int

const (
	etcdFenced     etcdRecipe = iota // internal/impl/etcd.Backend
	etcdMutex                        // internal/impl/etcd.Mutex
	etcdStaleCheck                   // internal/impl/etcd.OpenStaleCheck: the planted bug
)

// openEtcdCluster starts a 3-member cluster of the etcd server member
// names (servers.InstalledEtcd: the installed 3.4; etcdmember.Program: the
// embedded 3.7, this binary run as etcd-server) with
// servers.StartEtcdClusterOf — every peer link through leasecheck's
// proxies, the cluster faults between the members — and runs recipe on it, its
// clients connected to every member (the client's own endpoint selection)
// or, with ://leader or ://mN, to one. ://leader makes m1 the leader before
// every round (Settle), so the leader-isolation faults cut off the member
// the holders are connected to.
func openEtcdCluster(recipe etcdRecipe, member func() (servers.EtcdProgram, error)) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		name, pin, pinned := strings.Cut(spec, "://")
		if pinned && pin != "leader" && !(faults.IsMember(pin) && pin != faults.Follower) {
			return nil, fmt.Errorf("bad cluster spec %q: want %s, %s://leader or %s://mN (N = 1, 2, 3)", spec, name, name, name)
		}
		prog, err := member()
		if err != nil {
			return nil, err
		}
		c, err := servers.StartEtcdClusterOf(ctx, prog, 3)
		if err != nil {
			return nil, err
		}
		addr := strings.Join(c.Endpoints(), ",")
		clients := "clients to all members"
		switch {
		case pin == "leader":
			c.PinLeader = "m1"
			addr, clients = c.Servers[0].Addr, "clients to the leader (m1, made leader before each round)"
		case pinned:
			i := c.Index(pin)
			if i < 0 {
				c.Close()
				return nil, fmt.Errorf("bad cluster spec %q: the cluster has members m1, m2, m3", spec)
			}
			addr, clients = c.Servers[i].Addr, "clients to "+pin
		}
		tg := etcdClient(recipe)(addr, spec, prefix)
		switch recipe {
		case etcdFenced, etcdMutex:
			tg.Info.Name = name
		case etcdStaleCheck:
			// The holders' local member, m1, is a follower: m2 is made the
			// leader before every round, so cutting m1 off leaves the
			// majority's leader in place and m1 answering reads from what it
			// last heard.
			if !pinned {
				c.PinLeader = "m2"
				clients = "clients to all members, the check on m1, a follower (m2 made leader before each round)"
			}
		}
		tg.Cluster = c
		return &lcverify.Opened{Target: tg, Shown: fmt.Sprintf("%s (3 members of etcd %s started here, %s: %s)", spec, c.Version, clients, addr),
			Close: func() { c.Close() }}, nil
	}
}

// openEtcd starts an embedded etcd for the bare name, and connects to
// etcd://HOST:PORT (etcd-mutex://) otherwise.
func openEtcd(mutex bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		if !strings.Contains(spec, "://") {
			s, err := etcd.StartEmbedded(ctx)
			if err != nil {
				return nil, err
			}
			return &lcverify.Opened{Target: etcdTarget(mutex, s.Addr, prefix), Shown: spec + " (embedded, " + s.Addr + ")", Close: func() { s.Close() }}, nil
		}
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" {
			return nil, errors.New("bad etcd address: want etcd://HOST:PORT")
		}
		return &lcverify.Opened{Target: etcdTarget(mutex, u.Host, prefix)}, nil
	}
}

// openEtcd34 starts the installed etcd server process, which must be 3.4.
func openEtcd34(mutex bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		p, version, err := servers.StartEtcd(ctx)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(version, "3.4.") {
			p.Close()
			return nil, fmt.Errorf("%s: the etcd server installed is %s, not 3.4 (apt-get install -y etcd-server on Debian 12, or set LEASECHECK_ETCD_BIN)", spec, version)
		}
		tg := etcdTarget(mutex, p.Addr, prefix)
		tg.Server = p
		return &lcverify.Opened{Target: tg, Shown: spec + " (etcd " + version + " started here, " + p.Addr + ")", Close: func() { p.Close() }}, nil
	}
}

// openZooKeeperEnsemble starts a 3-server ZooKeeper ensemble
// (servers.StartZooKeeperEnsemble: every link between two servers through
// leasecheck's proxies, the cluster faults between them), its clients
// connected to any server (the client library's choice).
func openZooKeeperEnsemble(fenced bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		e, err := servers.StartZooKeeperEnsemble(ctx, 3)
		if err != nil {
			return nil, err
		}
		info := zookeeper.Info()
		if !fenced {
			info = zookeeper.UnfencedInfo()
		}
		// A new leader gives every session a fresh timeout (its session
		// tracker starts over from the log): leader changes are declared
		// as restarts are (realrun's leaderChanged).
		info.Name = spec
		addr := strings.Join(e.Endpoints(), ",")
		tg := zkTarget(fenced, info, addr, prefix)
		tg.Cluster = e
		return &lcverify.Opened{Target: tg, Shown: fmt.Sprintf("%s (3 servers of ZooKeeper started here, clients to any: %s)", spec, addr), Close: func() { e.Close() }}, nil
	}
}

// openEtcd34StaleCheck runs the stale-check planted bug on one etcd 3.4
// server process: the cluster backend's single-server control.
func openEtcd34StaleCheck(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	o, err := openEtcd34(false)(ctx, spec, prefix)
	if err != nil {
		return nil, err
	}
	tg := etcdClient(etcdStaleCheck)(o.Target.Addr, spec, prefix)
	o.Target.Info, o.Target.Open = tg.Info, tg.Open
	return o, nil
}

// openRedis starts a redis-server for the bare name (verify may then stop
// and restart it: coordinator-crash), and connects to a redis:// URL
// otherwise.
func openRedis(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	if spec == "redis" {
		p, err := servers.StartRedis(ctx)
		if err != nil {
			return nil, err
		}
		o, err := openRedis(ctx, "redis://"+p.Addr, prefix)
		if err != nil {
			p.Close()
			return nil, err
		}
		o.Target.Server, o.Shown, o.Close = p, "redis (started here, "+p.Addr+")", func() { p.Close() }
		return o, nil
	}
	addr, err := redis.Addr(spec)
	if err != nil {
		return nil, errors.New("bad Redis URL: want redis://[user:password@]HOST:PORT[/db]")
	}
	p := "leasecheck:" + prefix + ":"
	return lcverify.Connect(redis.Info(), addr, func(ctx context.Context, addr string) (backend.Backend, error) {
		return redis.Open(ctx, spec, addr, p)
	}), nil
}

// openPostgres starts a PostgreSQL for the bare name, and connects to a
// postgres:// URL otherwise.
func openPostgres(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	if spec == "postgres" {
		p, u, err := servers.StartPostgres(ctx)
		if err != nil {
			return nil, err
		}
		o, err := openPostgres(ctx, u, prefix)
		if err != nil {
			p.Close()
			return nil, err
		}
		o.Target.Server, o.Shown, o.Close = p, "postgres (started here, "+p.Addr+")", func() { p.Close() }
		return o, nil
	}
	addr, err := postgres.Addr(spec)
	if err != nil {
		return nil, errors.New("bad PostgreSQL URL: want postgres://USER[:PASSWORD]@HOST:PORT/DB")
	}
	return lcverify.Connect(postgres.Info(), addr, func(ctx context.Context, addr string) (backend.Backend, error) {
		return postgres.Open(ctx, spec, addr, prefix)
	}), nil
}

// openZooKeeper starts a ZooKeeper for the bare name, and connects to
// zk://HOST:PORT (zk-unfenced://) otherwise, asking the server what
// session timeouts it grants (zookeeper.ServerInfo).
func openZooKeeper(fenced bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		if !strings.Contains(spec, "://") {
			p, err := servers.StartZooKeeper(ctx)
			if err != nil {
				return nil, err
			}
			info := zookeeper.Info()
			if !fenced {
				info = zookeeper.UnfencedInfo()
			}
			tg := zkTarget(fenced, info, p.Addr, prefix)
			tg.Server = p
			return &lcverify.Opened{Target: tg, Shown: spec + " (ZooKeeper started here, " + p.Addr + ")", Close: func() { p.Close() }}, nil
		}
		host, err := hostURL(spec, "ZooKeeper")
		if err != nil {
			return nil, err
		}
		info, err := zookeeper.ServerInfo(ctx, host, fenced)
		if err != nil {
			return nil, fmt.Errorf("zookeeper at %s is not usable: %w", host, err)
		}
		return &lcverify.Opened{Target: zkTarget(fenced, info, host, prefix)}, nil
	}
}

// hostURL reads the HOST:PORT of a server address SCHEME://HOST:PORT
// (nothing else: no user, no path), or says what the address should be.
func hostURL(spec, server string) (string, error) {
	scheme, _, _ := strings.Cut(spec, "://")
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("bad %s address: want %s://HOST:PORT", server, scheme)
	}
	return u.Host, nil
}

// zkTarget is the ZooKeeper backend at addr, its znodes under
// /leasecheck/PREFIX.
func zkTarget(fenced bool, info backend.Info, addr, prefix string) realrun.Target {
	root := "/leasecheck/" + prefix
	open := zookeeper.Open
	if !fenced {
		open = zookeeper.OpenUnfenced
	}
	return realrun.Target{Info: info, Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return open(ctx, a, root)
	}}
}

// etcdTarget is the etcd backend at addr (the Mutex variant: mutex), its
// keys under /leasecheck/PREFIX.
func etcdTarget(mutex bool, addr, prefix string) realrun.Target {
	p := "/leasecheck/" + prefix
	if mutex {
		return realrun.Target{Info: etcd.MutexInfo(), Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
			return etcd.OpenMutex(ctx, a, p)
		}}
	}
	return realrun.Target{Info: etcd.Info(), Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return etcd.Open(ctx, a, p)
	}}
}
