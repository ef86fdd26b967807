package redsync

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

// Verify is the adapter as an entry of verify's registry: --backend
// redsync (a redis-server started here) or redsync+redis://HOST:PORT.
// Every client opens its own adapter through its own proxy.
func Verify() verify.Backend {
	return verify.Backend{
		Name: "redsync", Schemes: []string{"redsync+redis"},
		Usage: "redsync (on a redis-server started here) | redsync+redis://HOST:PORT",
		Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
			url, started := strings.TrimPrefix(spec, "redsync+"), (*servers.Server)(nil)
			if spec == "redsync" {
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
				return nil, errors.New("bad Redis URL: want redsync+redis://HOST:PORT[/db]")
			}
			p := "leasecheck:" + prefix + ":"
			o := verify.Connect(Info(), opts.Addr, func(ctx context.Context, addr string) (backend.Backend, error) {
				return Open(ctx, url, addr, p)
			})
			if started != nil {
				o.Target.Server, o.Shown, o.Close = started, spec+" (on a redis-server started here, "+started.Addr+")", func() { started.Close() }
			}
			return o, nil
		},
	}
}

// The adapter as a client process of its own: Service.Arg is the server's
// URL and the keys' prefix, Service.Addr the client's proxy.
func init() {
	leasetest.RegisterClient("redsync", func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
		url, prefix, ok := strings.Cut(s.Arg, "\n")
		if !ok {
			return nil, errors.New("redsync: the client process was given no Redis URL and prefix")
		}
		return Open(ctx, url, s.Addr, prefix)
	})
}

// VerifyProcesses is Verify with every client a process of its own
// (--backend redsync-processes): a pause is SIGSTOP, a crash SIGKILL.
func VerifyProcesses() verify.Backend {
	const name = "redsync-processes"
	return verify.Backend{
		Name:  name,
		Usage: name + " (each client a process, on a redis-server started here)",
		Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
			s, err := servers.StartRedis(ctx)
			if err != nil {
				return nil, err
			}
			p := "leasecheck:" + prefix + ":"
			o := verify.Connect(Info(), s.Addr, func(ctx context.Context, addr string) (backend.Backend, error) {
				return leasetest.OpenClient(ctx, "redsync", leasetest.Service{Addr: addr, Arg: s.URL + "\n" + p})
			})
			o.Target.Server, o.Shown, o.Close = s, spec+" (each client a process, on a redis-server started here, "+s.Addr+")", func() { s.Close() }
			return o, nil
		},
	}
}
