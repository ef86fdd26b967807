package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/redis"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
	"github.com/leasecheck/leasecheck/leasetest"
)

func target(t *testing.T) realrun.Target {
	url, srv := serverstest.RedisControlled(t)
	addr, err := redis.Addr(url)
	if err != nil {
		t.Fatal(err)
	}
	p := "leasecheck:" + serverstest.Prefix() + ":"
	return realrun.Target{
		Info: redis.Info(), Addr: addr, Server: srv,
		Open: func(ctx context.Context, addr string) (backend.Backend, error) {
			return redis.Open(ctx, url, addr, p)
		},
	}
}

// TestRedisAllFaults: the Redis backend is judged correct with every
// applicable fault kind injected.
func TestRedisAllFaults(t *testing.T) {
	tg := target(t)
	_, cr := serverstest.Check(t, tg, realrun.Config{Seed: 1, Duration: 8 * time.Second, Faults: realrun.ApplicableKinds(tg, faults.AllKinds)})
	serverstest.ExpectOK(t, cr)
}

// TestRedisConformance runs the leasetest suite against Redis.
func TestRedisConformance(t *testing.T) {
	url, _ := serverstest.Redis(t)
	leasetest.Run(t, func() (backend.Backend, func(), error) {
		b, err := redis.Open(context.Background(), url, "", "leasecheck:"+serverstest.Prefix()+":")
		if err != nil {
			return nil, nil, err
		}
		return b, func() { b.Cleanup(context.Background()); b.Close() }, nil
	}, leasetest.Options{Info: redis.Info(), TTL: 500 * time.Millisecond})
}
