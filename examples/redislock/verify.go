package redislock

import (
	"context"
	"errors"

	goredis "github.com/redis/go-redis/v9"

	"github.com/leasecheck/leasecheck/impl/backend"
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
