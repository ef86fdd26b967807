package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/natskv"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers"
	"github.com/leasecheck/leasecheck/leasetest"
	lcverify "github.com/leasecheck/leasecheck/verify"
)

// openNATS starts n embedded nats-servers with JetStream for the bare
// name (n = 3: a JetStream cluster, the bucket replicated on all three,
// clients to all), and connects to nats-kv://HOST:PORT otherwise. The
// bucket is the run's prefix; the servers are in this process, so the
// server faults (SIGSTOP, restart) and the cluster faults do not apply —
// the holders' pauses, partitions and clock faults do.
//
// defaults runs the lock with nats.go's own defaults where the adapter
// departs from them: renewed with KeyValue.Update as it is (which drops
// the key's TTL) and the bucket's direct gets on.
func openNATS(n int, fenced, defaults bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return openNATSClients(n, fenced, defaults, false)
}

// natsClient names the fenced lock's client process (defaults: with
// nats.go's defaults), which a re-executed leasecheck serves.
func natsClient(defaults bool) string {
	if defaults {
		return "nats-kv-defaults"
	}
	return "nats-kv"
}

// Each owner's client of the fenced lock as a process of its own: the
// process's Service.Addr is its proxy to the server, Service.Arg the
// bucket.
func init() {
	for _, defaults := range []bool{false, true} {
		leasetest.RegisterClient(natsClient(defaults), func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
			return natskv.Open(ctx, s.Addr, s.Arg, natskv.Options{Fenced: true, Replicas: 1, Direct: defaults, DropTTLOnRenew: defaults})
		})
	}
}

// openNATSClients is openNATS with, when processes is set, every owner's
// client a process of its own (a pause is SIGSTOP, a crash SIGKILL): one
// embedded server, the fenced lock.
func openNATSClients(n int, fenced, defaults, processes bool) func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
	return func(ctx context.Context, spec, prefix string) (*lcverify.Opened, error) {
		if strings.Contains(spec, "://") {
			host, err := hostURL(spec, "NATS")
			if err != nil {
				return nil, err
			}
			return &lcverify.Opened{Target: natsTarget(host, prefix, fenced, defaults, 1)}, nil
		}
		c, err := servers.StartNATSCluster(ctx, n)
		if err != nil {
			return nil, err
		}
		addr := strings.Join(c.Endpoints(), ",")
		tg := natsTarget(addr, prefix, fenced, defaults, n)
		tg.Info.Name = spec
		if processes {
			bucket := natskv.BucketName(prefix)
			tg.Open = func(ctx context.Context, a string) (backend.Backend, error) {
				return leasetest.OpenClient(ctx, natsClient(defaults), leasetest.Service{Addr: a, Arg: bucket})
			}
		}
		shown := fmt.Sprintf("%s (nats-server %s embedded, %s)", spec, c.Version, addr)
		if n > 1 {
			shown = fmt.Sprintf("%s (%d nats-servers %s embedded, a JetStream cluster, bucket replicated %d times, clients to all: %s)", spec, n, c.Version, n, addr)
		}
		return &lcverify.Opened{Target: tg, Shown: shown, Close: func() { c.Close() }}, nil
	}
}

// natsTarget is the JetStream KV lock at addr, in the bucket named after
// the run's prefix.
func natsTarget(addr, prefix string, fenced, defaults bool, replicas int) realrun.Target {
	info := natskv.Info()
	if !fenced {
		info = natskv.UnfencedInfo()
	}
	bucket := natskv.BucketName(prefix)
	return realrun.Target{Info: info, Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return natskv.Open(ctx, a, bucket, natskv.Options{Fenced: fenced, Replicas: replicas, Direct: defaults, DropTTLOnRenew: defaults})
	}}
}
