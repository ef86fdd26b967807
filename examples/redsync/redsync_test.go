package redsync_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"example.com/leasecheck-examples/redsync"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/leasetest/servers"
)

// The conformance suite on a real redis-server: every property that
// applies holds, the three that presuppose a fencing token or fenced
// writes are skipped with the reason, and Zombie — a holder paused past
// its TTL writes after the mutex moved on — is the one finding, expected:
// the suite fails if it goes away or anything else fails.
func TestLeasetest(t *testing.T) {
	url := servers.ForTest(t, servers.StartRedis).URL
	leasetest.Run(t, func() (backend.Backend, func(), error) {
		b := make([]byte, 6)
		rand.Read(b)
		a, err := redsync.Open(context.Background(), url, "", "leasecheck:rs"+hex.EncodeToString(b)+":")
		if err != nil {
			return nil, nil, err
		}
		return a, func() { a.Cleanup(context.Background()) }, nil
	}, leasetest.Options{Info: redsync.Info(), TTL: 500 * time.Millisecond, Expect: []string{"Zombie"}})
}
