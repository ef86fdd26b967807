package rueidislock_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"example.com/leasecheck-examples/rueidislock"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/verify"
)

// verify's loss-signal on a real redis-server, each owner's Locker a
// process of its own: under a pause (SIGSTOP past the TTL) the README's
// configuration cancels its context at once when it resumes; under a
// partition (the owner's connection cut while its process runs) its
// context outlives the lock on the server by about half a validity — its
// extend waits for its answer until the deadline it asked for, and
// nothing cancels the context at the deadline the library itself set.
// With the defaults, renew-rate reports the extend loop under no fault.
func TestVerifyLossSignal(t *testing.T) {
	servers.ForTest(t, servers.StartRedis)
	for _, tc := range []struct {
		spec, faults string
		code         int
		want         []string
	}{
		// LossSignal runs its pause round, then its partition round; the
		// rounds' holder paused past its TTL may also write after the lock
		// moved on (no fencing token).
		{"rueidislock", "partition", verify.ExitViolation, []string{"loss-signal holds (pause)", "the kernel reported A's process stopped",
			"loss-signal                VIOLATED", "under a partition, A's lock was lost on the server", "A's process ran throughout", "more than the declared LossLateness"}},
		{"rueidislock-defaults", "none", verify.ExitViolation, []string{"a renewal loop that does not wait its interval"}},
	} {
		t.Run(tc.spec+"/"+tc.faults, func(t *testing.T) {
			var out, errOut bytes.Buffer
			c := verify.Command{Name: "rueidislock-verify", Backends: rueidislock.Verify()}
			code := c.Run(context.Background(), []string{"--backend", tc.spec, "--seeds", "1", "--duration", "1s", "--ttl", "2s",
				"--faults", tc.faults, "--progress=false", "--save", "0"}, &out, &errOut)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s\n%s", code, tc.code, out.String(), errOut.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output does not say %q:\n%s", w, out.String())
				}
			}
		})
	}
}
