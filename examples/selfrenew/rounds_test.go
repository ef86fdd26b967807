package selfrenew

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/verify"
)

// silentLate is how late the planted library of silentVerify signals a
// loss it found by the server's silence.
const silentLate = 5 * time.Second

// The library on a real Redis with its signal planted late only when it
// finds the loss by the server's silence (renewals unanswered past the
// TTL: a blackhole, a lost request), not by a refusal: a process of the
// test binary, re-executed.
func init() {
	leasetest.RegisterClient("selfrenew-redis-silent", func(ctx context.Context, s leasetest.Service) (backend.Backend, error) {
		a, err := openServiceAdapter(ctx, s, 0)
		if err != nil {
			return nil, err
		}
		a.silentLossDelay = silentLate
		return a, nil
	})
}

// silentVerify is Verify's selfrenew with the silent late signal planted.
func silentVerify() verify.Backend {
	return verify.Backend{Name: "selfrenew-silent", Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
		url, addr, started, err := startedRedis(ctx, "selfrenew")
		if err != nil {
			return nil, err
		}
		p := "leasecheck:" + prefix + ":"
		o := verify.Connect(redisInfo(verifyTTL), addr, func(ctx context.Context, addr string) (backend.Backend, error) {
			return leasetest.OpenClient(ctx, "selfrenew-redis-silent", leasetest.Service{Addr: addr, Arg: url + "\n" + p})
		})
		o.Target.Server, o.Close = started, func() { started.Close() }
		return o, nil
	}}
}

// roundsLine is verify's line of loss-signal over the rounds: holds lost
// on the server and judged, and how many were late.
var roundsLine = regexp.MustCompile(`loss-signal over the rounds: \d+ holds in \d+ rounds, (\d+) lost on the server and judged \((\d+) late\)`)

// loss-signal is judged on every hold of every round, under a network
// fault as under a pause: with a blackhole (the client runs, its
// connection silent) the library whose signal is planted 5 s late when it
// finds the loss by silence is caught in the rounds, from the server's
// record, with nothing excused; the library as written is judged on the
// same faults and holds.
func TestLossSignalJudgedInEveryRound(t *testing.T) {
	servers.ForTest(t, servers.StartRedis)
	for _, tc := range []struct {
		name     string
		backends []verify.Backend
		spec     string
		code     int
	}{
		{"as written", Verify(), "selfrenew", verify.ExitOK},
		{"planted: late under a blackhole", []verify.Backend{silentVerify()}, "selfrenew-silent", verify.ExitViolation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			c := verify.Command{Name: "selfrenew-verify", Backends: tc.backends}
			code := c.Run(context.Background(), []string{"--backend", tc.spec, "--seeds", "3", "--duration", "4s",
				"--faults", "blackhole,reply-loss", "--progress=false", "--save", "0", "--quiet"}, &out, &errOut)
			report := out.String()
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s\n%s", code, tc.code, report, errOut.String())
			}
			m := roundsLine.FindStringSubmatch(report)
			if m == nil {
				t.Fatalf("no verdict of loss-signal over the rounds:\n%s", report)
			}
			judged, _ := strconv.Atoi(m[1])
			late, _ := strconv.Atoi(m[2])
			if judged == 0 {
				t.Fatalf("no hold was lost on the server in the rounds, so nothing was judged: the test shows nothing:\n%s", report)
			}
			t.Logf("%s", m[0])
			if tc.code == verify.ExitOK {
				if late != 0 {
					t.Errorf("the library as written was late:\n%s", report)
				}
				return
			}
			if late == 0 || !strings.Contains(report, "loss-signal: round ") || !strings.Contains(report, "its client ran throughout: nothing excused") {
				t.Errorf("the late signal under a blackhole was not told as a round's loss-signal, with nothing excused:\n%s", report)
			}
		})
	}
}
