package selfrenew

import (
	"context"
	"errors"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"example.com/leasecheck-examples/redislock"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/verify"
)

// verifyTTL is the TTL verify runs the library at by default (its --ttl):
// the declared loss lateness is counted from it.
const verifyTTL = 2 * time.Second

// redisInfo describes the library over bsm/redislock on a real Redis
// (examples/redislock as its lease service): redislock's declarations (no
// fencing token, writes not fenced), the library's loss lateness at ttl
// and its renewal interval.
func redisInfo(ttl time.Duration) backend.Info {
	i := redislock.Info()
	i.Name = "selfrenew-redislock"
	i.LossLateness = ttl/2 + ttl/3
	i.RenewInterval = ttl / 2
	return i
}

// redisClient names the client process of the library over a real Redis,
// with its context cancelled delay late.
func redisClient(delay time.Duration) string {
	if delay > 0 {
		return "selfrenew-redis-late"
	}
	return "selfrenew-redis"
}

// The library over a real Redis, as each client process opens it: the
// process's Service.Arg is the server's URL and the keys' prefix. Any
// program that imports the package (selfrenew-verify, its tests) can be
// re-executed as one.
func init() {
	for _, delay := range []time.Duration{0, lateBy} {
		leasetest.RegisterClient(redisClient(delay), func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
			return openServiceAdapter(ctx, s, delay)
		})
	}
}

// lateBy is how late selfrenew-late cancels a lost lock's context.
const lateBy = 5 * time.Second

// startedRedis is the redis-server a spec names, started here when the spec
// is a bare name: its URL, and the server (nil when it runs elsewhere).
func startedRedis(ctx context.Context, spec string) (string, string, *servers.Server, error) {
	url, started := "", (*servers.Server)(nil)
	switch spec {
	case "selfrenew", "selfrenew-late", "selfrenew-inprocess":
		s, err := servers.StartRedis(ctx)
		if err != nil {
			return "", "", nil, err
		}
		url, started = s.URL, s
	default:
		url = spec[len("selfrenew+"):]
	}
	opts, err := goredis.ParseURL(url)
	if err != nil {
		if started != nil {
			started.Close()
		}
		return "", "", nil, errors.New("bad Redis URL: want selfrenew+redis://HOST:PORT[/db]")
	}
	return url, opts.Addr, started, nil
}

// Verify is the library on a real Redis as entries of verify's registry:
// --backend selfrenew (a redis-server started here) or
// selfrenew+redis://HOST:PORT; selfrenew-late is the same library with its
// context cancelled 5 s after it finds the lock lost (the planted broken
// promise). Every client of a round is a process of its own (SIGSTOP
// pauses it, SIGKILL crashes it) with its own library and its own
// connection, through its own proxy.
func Verify() []verify.Backend {
	open := func(delay time.Duration) func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
		return func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
			url, addr, started, err := startedRedis(ctx, spec)
			if err != nil {
				return nil, err
			}
			// Each client is a process of its own (the program
			// re-executed: redisClient), so verify's pause is SIGSTOP.
			p := "leasecheck:" + prefix + ":"
			o := verify.Connect(redisInfo(verifyTTL), addr, func(ctx context.Context, addr string) (backend.Backend, error) {
				return leasetest.OpenClient(ctx, redisClient(delay), leasetest.Service{Addr: addr, Arg: url + "\n" + p})
			})
			if started != nil {
				o.Target.Server, o.Shown, o.Close = started, spec+" (the library on a redis-server started here, "+started.Addr+")", func() { started.Close() }
			}
			return o, nil
		}
	}
	return []verify.Backend{
		{Name: "selfrenew", Schemes: []string{"selfrenew+redis"}, Usage: "selfrenew (the background-renewing library on a redis-server started here) | selfrenew+redis://HOST:PORT", Open: open(0)},
		{Name: "selfrenew-late", Usage: "selfrenew-late (the same, its context cancelled 5s late: a planted broken promise)", Open: open(lateBy)},
	}
}

// openServiceAdapter is a client process's adapter on the Redis its
// Service names: Service.Arg is the server's URL and the keys' prefix,
// Service.Addr the client's proxy.
func openServiceAdapter(ctx context.Context, s leasetest.Service, lossDelay time.Duration) (*adapter, error) {
	url, prefix, ok := strings.Cut(s.Arg, "\n")
	if !ok {
		return nil, errors.New("selfrenew: the client process was given no Redis URL and prefix")
	}
	conn, err := redislock.Open(ctx, url, s.Addr, prefix)
	if err != nil {
		return nil, err
	}
	return newAdapter(conn, lossDelay), nil
}
