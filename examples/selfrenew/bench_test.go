package selfrenew

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"

	"example.com/leasecheck-examples/redislock"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/verify"
)

// inProcessVerify is selfrenew on a redis-server with every client in
// verify's own process (the in-process Stopper), as Verify ran it before
// its clients were processes: the other side of the speed row.
func inProcessVerify() verify.Backend {
	return verify.Backend{Name: "selfrenew-inprocess", Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
		url, addr, p, err := startedRedis(ctx, spec)
		if err != nil {
			return nil, err
		}
		o := verify.Connect(redisInfo(verifyTTL), addr, func(ctx context.Context, addr string) (backend.Backend, error) {
			conn, err := redislock.Open(ctx, url, addr, "leasecheck:"+prefix+":")
			if err != nil {
				return nil, err
			}
			return newAdapter(conn, 0), nil
		})
		o.Target.Server, o.Close = p, func() { p.Close() }
		return o, nil
	}}
}

// BenchmarkVerifyRounds: rounds per minute of verify on a real Redis, every
// fault kind, with each client a process of its own (SIGSTOP pauses) and
// with every client in verify's process. Each iteration is one verify run
// of 3 rounds of 2s and its LossSignal judgement. A round may fail: the
// library's writes are not fenced, so a pause past the TTL followed by a
// write is a real violation; only a run that could not be judged ends the
// benchmark.
//
//	go test ./examples/selfrenew -run '^$' -bench VerifyRounds -benchtime 2x
func BenchmarkVerifyRounds(b *testing.B) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("redis-server is not installed")
	}
	const rounds = 3
	for _, tc := range []struct {
		name, spec string
		backends   []verify.Backend
	}{
		{"processes", "selfrenew", Verify()},
		{"in-process", "selfrenew-inprocess", []verify.Backend{inProcessVerify()}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			start := time.Now()
			for range b.N {
				var out, errOut bytes.Buffer
				c := verify.Command{Name: "bench", Backends: tc.backends}
				if code := c.Run(context.Background(), []string{"--backend", tc.spec, "--seeds", "3", "--duration", "2s",
					"--faults", "all", "--progress=false", "--save", "0"}, &out, &errOut); code != verify.ExitOK && code != verify.ExitViolation {
					b.Fatalf("exit %d:\n%s\n%s", code, out.String(), errOut.String())
				}
			}
			b.ReportMetric(float64(rounds*b.N)/time.Since(start).Minutes(), "rounds/min")
		})
	}
}
