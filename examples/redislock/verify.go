package redislock

import (
	"context"
	"errors"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/verify"
)

// defaultURL is the Redis the bare --backend redislock connects to.
const defaultURL = "redis://127.0.0.1:6379"

// Verify is the adapter as an entry of verify's registry: --backend
// redislock (the Redis at defaultURL) or --backend redis://HOST:PORT[/db].
// Every client process of a run opens its own adapter through its own
// proxy (addr), its keys under the run's prefix; verify removes them after
// every round (Cleanup). cmd/redislock-verify is the whole program:
// verify.Main(redislock.Verify()).
func Verify() verify.Backend {
	return verify.Backend{
		Name:    "redislock",
		Schemes: []string{"redis", "rediss"},
		Usage:   "redislock (bsm/redislock on " + defaultURL + ") | redis://[user:pass@]HOST:PORT[/db]",
		Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
			url := spec
			if spec == "redislock" {
				url = defaultURL
			}
			opts, err := goredis.ParseURL(url)
			if err != nil {
				return nil, errors.New("bad Redis URL: want redis://[user:password@]HOST:PORT[/db]")
			}
			p := "leasecheck:" + prefix + ":"
			return verify.Connect(Info(), opts.Addr, func(ctx context.Context, addr string) (backend.Backend, error) {
				return Open(ctx, url, addr, p)
			}), nil
		},
	}
}

// The adapter as a client process of its own (any program importing the
// package can be re-executed as one): Service.Arg is the server's URL and
// the keys' prefix, Service.Addr the client's proxy.
func init() {
	leasetest.RegisterClient("redislock", func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
		url, prefix, ok := strings.Cut(s.Arg, "\n")
		if !ok {
			return nil, errors.New("redislock: the client process was given no Redis URL and prefix")
		}
		return Open(ctx, url, s.Addr, prefix)
	})
}

// VerifyProcesses is Verify with every client a process of its own:
// --backend redislock-processes (on a redis-server started here) or
// redislock-processes+redis://HOST:PORT. A pause is SIGSTOP of the
// holder's whole process, a crash SIGKILL: the confirmation on real
// processes of what the in-process rounds find.
func VerifyProcesses() verify.Backend {
	const name = "redislock-processes"
	return verify.Backend{
		Name: name, Schemes: []string{name + "+redis"},
		Usage: name + " (each client a process, on a redis-server started here) | " + name + "+redis://HOST:PORT",
		Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
			url, started := strings.TrimPrefix(spec, name+"+"), (*servers.Server)(nil)
			if spec == name {
				s, err := servers.StartRedis(ctx)
				if err != nil {
					return nil, err
				}
				url, started = s.URL, s
			}
			opts, err := goredis.ParseURL(url)
			if err != nil {
				if started != nil {
					started.Close()
				}
				return nil, errors.New("bad Redis URL: want " + name + "+redis://HOST:PORT[/db]")
			}
			p := "leasecheck:" + prefix + ":"
			o := verify.Connect(Info(), opts.Addr, func(ctx context.Context, addr string) (backend.Backend, error) {
				return leasetest.OpenClient(ctx, "redislock", leasetest.Service{Addr: addr, Arg: url + "\n" + p})
			})
			if started != nil {
				o.Target.Server, o.Shown, o.Close = started, spec+" (each client a process, on a redis-server started here, "+started.Addr+")", func() { started.Close() }
			}
			return o, nil
		},
	}
}
