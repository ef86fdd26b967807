package pgadvisory

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/verify"
)

// verifyTTL is the TTL verify runs at by default (its --ttl): the hardened
// heartbeat's declarations are counted from it.
const verifyTTL = 2 * time.Second

// clientName names the client process of a configuration.
func clientName(hardened bool) string {
	if hardened {
		return "pg-advisory-hardened"
	}
	return "pg-advisory"
}

// Each configuration as a client process opens it: the process's
// Service.Arg is the server's URL and the run's prefix, Service.Addr its
// own proxy. Any program that imports the package (pgadvisory-verify, its
// tests) can be re-executed as one.
func init() {
	for _, hardened := range []bool{false, true} {
		registerClient(clientName(hardened), hardened, false)
	}
}

// registerClient registers the client process name: the configuration,
// with the bug of Client.silentEnd planted when silent.
func registerClient(name string, hardened, silent bool) {
	leasetest.RegisterClient(name, func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
		url, prefix, ok := strings.Cut(s.Arg, "\n")
		if !ok {
			return nil, errors.New("pgadvisory: the client process was given no URL and prefix")
		}
		c, err := Open(ctx, url, s.Addr, prefix, hardened)
		if err != nil {
			return nil, err
		}
		c.silentEnd = silent
		if hardened {
			return Hardened{c}, nil
		}
		return c, nil
	})
}

// Verify is the advisory lock on a PostgreSQL started here (verify may
// kill and restart it: coordinator-crash), in its two configurations.
// Every client of a round is a process of its own (SIGSTOP pauses it,
// SIGKILL crashes it) with its own pool, through its own proxy.
func Verify() []verify.Backend {
	return []verify.Backend{
		verifyBackend("pg-advisory", "pg-advisory (pg_try_advisory_lock on a pooled connection, the work through the pool, no timeouts: as people write it)", clientName(false), false),
		verifyBackend("pg-advisory-hardened", "pg-advisory-hardened (a dedicated connection with idle_session_timeout = TTL, a heartbeat every TTL/3 cancelling the lock's context, the work on the lock's session)", clientName(true), true),
	}
}

// verifyBackend is the configuration whose clients are processes of the
// registered client name.
func verifyBackend(name, usage, client string, hardened bool) verify.Backend {
	open := func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
		s, err := servers.StartPostgres(ctx)
		if err != nil {
			return nil, err
		}
		o := verify.Connect(Info(hardened, verifyTTL), s.Addr, func(ctx context.Context, addr string) (backend.Backend, error) {
			return leasetest.OpenClient(ctx, client, leasetest.Service{Addr: addr, Arg: s.URL + "\n" + prefix})
		})
		o.Target.Server, o.Shown, o.Close = s, spec+" (pgx on a PostgreSQL started here, "+s.Addr+")", func() { s.Close() }
		return o, nil
	}
	return verify.Backend{Name: name, Usage: usage, Open: open}
}
