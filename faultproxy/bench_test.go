package faultproxy_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leasecheck/leasecheck/faultproxy"
)

// BenchmarkRoundTrip is the cost of the proxy: one go-redis client doing
// SET round trips one after another on a real redis-server, directly and
// through a client's end of the proxy with no fault set (every chunk still
// crosses the latency line and is framed and counted). It reports req/s.
func BenchmarkRoundTrip(b *testing.B) {
	srv := redisServer(b)
	run := func(b *testing.B, addr string) {
		rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, ReadTimeout: 10 * time.Second})
		defer rc.Close()
		ctx := context.Background()
		if err := rc.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if err := rc.Set(ctx, "k", i, 0).Err(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	}
	b.Run("direct", func(b *testing.B) { run(b, srv) })
	b.Run("proxy", func(b *testing.B) {
		px, err := faultproxy.Start(srv)
		if err != nil {
			b.Fatal(err)
		}
		defer px.Close()
		c, _ := px.Client("a")
		run(b, c.Addr())
		if n := c.Counts(); n.Messages[faultproxy.Request] < int64(b.N) {
			b.Fatalf("counted %d requests of %d", n.Messages[faultproxy.Request], b.N)
		}
	})
}
