package rueidislock

import (
	"context"
	"errors"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/verify"
)

// verifyTTL is verify's default TTL (its --ttl): the library's KeyValidity,
// from which the declared loss lateness is counted.
const verifyTTL = 2 * time.Second

// Configs are the configurations verify runs: the README's and the
// library's defaults.
var Configs = []Config{README, Defaults}

// Each configuration is a client process of its own kind: the process's
// Service.Arg is the server's URL and the keys' prefix. Any program that
// imports the package (rueidislock-verify, its tests) can be re-executed
// as one.
func init() {
	for _, c := range Configs {
		leasetest.RegisterClient(c.Name, func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
			url, prefix, ok := strings.Cut(s.Arg, "\n")
			if !ok {
				return nil, errors.New("rueidislock: the client process was given no Redis URL and prefix")
			}
			a, err := Open(c, url, s.Addr, prefix)
			if err != nil {
				return nil, err
			}
			a.Warm(ctx) // an optimisation: a failure shows in the first acquire
			return a, nil
		})
	}
}

// Verify is the library on a real Redis as entries of verify's registry:
// --backend rueidislock (the README's configuration) and
// rueidislock-defaults, each on a redis-server started here, or
// NAME+redis://HOST:PORT on yours. Every client of a round is a process of
// its own (SIGSTOP pauses it, SIGKILL crashes it) with its own Locker,
// through its own proxy.
func Verify() []verify.Backend {
	var bs []verify.Backend
	for _, c := range Configs {
		bs = append(bs, verify.Backend{
			Name: c.Name, Schemes: []string{c.Name + "+redis"},
			Usage: c.Name + " (on a redis-server started here) | " + c.Name + "+redis://HOST:PORT",
			Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
				url, started := "", (*servers.Server)(nil)
				if spec == c.Name {
					s, err := servers.StartRedis(ctx)
					if err != nil {
						return nil, err
					}
					url, started = s.URL, s
				} else {
					url = strings.TrimPrefix(spec, c.Name+"+")
				}
				opts, err := goredis.ParseURL(url)
				if err != nil {
					if started != nil {
						started.Close()
					}
					return nil, errors.New("bad Redis URL: want " + c.Name + "+redis://HOST:PORT[/db]")
				}
				p := "leasecheck:" + prefix + ":"
				o := verify.Connect(Info(c, verifyTTL), opts.Addr, func(ctx context.Context, addr string) (backend.Backend, error) {
					return leasetest.OpenClient(ctx, c.Name, leasetest.Service{Addr: addr, Arg: url + "\n" + p})
				})
				if started != nil {
					o.Target.Server, o.Shown, o.Close = started, spec+" (on a redis-server started here, "+started.Addr+")", func() { started.Close() }
				}
				return o, nil
			},
		})
	}
	return bs
}
