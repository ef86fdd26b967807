package selfrenew

import (
	"context"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"example.com/leasecheck-examples/redislock"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/verify"
)

// verifyTTL is the TTL verify runs the library at by default (its --ttl):
// the declared loss lateness is counted from it.
const verifyTTL = 2 * time.Second

// redisInfo describes the library over bsm/redislock on a real Redis
// (examples/redislock as its lease service): redislock's declarations (no
// fencing token, writes not fenced) and the library's loss lateness at
// ttl.
func redisInfo(ttl time.Duration) backend.Info {
	i := redislock.Info()
	i.Name = "selfrenew-redislock"
	i.LossLateness = ttl/2 + ttl/3
	return i
}

// Verify is the library on a real Redis as entries of verify's registry:
// --backend selfrenew (a redis-server started here) or
// selfrenew+redis://HOST:PORT; selfrenew-late is the same library with its
// context cancelled 5 s after it finds the lock lost (the planted broken
// promise). Every client process of a round opens its own library and its
// own connection, through its own proxy.
func Verify() []verify.Backend {
	open := func(delay time.Duration) func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
		return func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
			var url string
			var started *servers.Server
			switch spec {
			case "selfrenew", "selfrenew-late":
				s, err := servers.StartRedis(ctx)
				if err != nil {
					return nil, err
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
				return nil, errors.New("bad Redis URL: want selfrenew+redis://HOST:PORT[/db]")
			}
			p := "leasecheck:" + prefix + ":"
			o := verify.Connect(redisInfo(verifyTTL), opts.Addr, func(ctx context.Context, addr string) (backend.Backend, error) {
				conn, err := redislock.Open(ctx, url, addr, p)
				if err != nil {
					return nil, err
				}
				return newAdapter(conn, delay), nil
			})
			if started != nil {
				o.Target.Server, o.Shown, o.Close = started, spec+" (the library on a redis-server started here, "+started.Addr+")", func() { started.Close() }
			}
			return o, nil
		}
	}
	return []verify.Backend{
		{Name: "selfrenew", Schemes: []string{"selfrenew+redis"}, Usage: "selfrenew (the background-renewing library on a redis-server started here) | selfrenew+redis://HOST:PORT", Open: open(0)},
		{Name: "selfrenew-late", Usage: "selfrenew-late (the same, its context cancelled 5s late: a planted broken promise)", Open: open(5 * time.Second)},
	}
}
