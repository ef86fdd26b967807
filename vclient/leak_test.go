package vclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/vclient"
)

// leakyClient is toyClient, and a goroutine of its own that waits on a
// channel nobody closes: it outlives Start.
type leakyClient struct{ toyClient }

func (l *leakyClient) Start(ctx context.Context, c *vclient.Candidate) {
	go waitForever(make(chan struct{}))
	l.toyClient.Start(ctx, c)
}

func waitForever(ch chan struct{}) { <-ch }

// stuckClient is toyClient whose Start does not return once its context
// ended: it waits on a channel nobody closes or, ticking, sleeps on
// forever (a loop that never looks at its context).
type stuckClient struct {
	toyClient
	ticking bool
}

func (s *stuckClient) Start(ctx context.Context, c *vclient.Candidate) {
	s.toyClient.Start(ctx, c)
	if s.ticking {
		sleepForever()
	}
	waitForever(make(chan struct{}))
}

func sleepForever() {
	for {
		time.Sleep(time.Second)
	}
}

func toyOptions() vclient.Options {
	return vclient.Options{Server: func() vclient.Server { return &toyServer{ttl: 1000} }}
}

func toy() toyClient { return toyClient{Every: time.Second, Timeout: time.Second} }

// TestLeakedGoroutineNamed: a client whose goroutine outlives its Start
// would keep the run's bubble from ending and synctest would end the test
// binary; the run ends instead in an error naming its seed and where the
// leaked goroutine is blocked. The same client without the goroutine runs
// without error.
func TestLeakedGoroutineNamed(t *testing.T) {
	_, err := runOne(t, toyScenario(7, 1, 0, 3000), &leakyClient{toy()}, toyOptions())
	leakReported(t, err, "vclient: seed 7 (vclient:toy)", "every candidate's Start returned, but 1 goroutine(s) it started were still blocked 1m0s after",
		"vclient_test.waitForever", "leak_test.go")
	if _, err := runOne(t, toyScenario(7, 1, 0, 3000), &toyClient{Every: time.Second, Timeout: time.Second}, toyOptions()); err != nil {
		t.Errorf("the client without its leaked goroutine: %v", err)
	}
}

// TestStuckStartNamed: a Start that does not return once its context
// ended — blocked for good, or sleeping in a loop — ends the run in an
// error that names the seed, the incarnations whose Start is stuck and
// their stacks, within a run's length of virtual time; never in
// synctest's deadlock panic, never in a loop that does not end.
func TestStuckStartNamed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ticking bool
		where   string
	}{{"blocked", false, "vclient_test.waitForever"}, {"sleeping", true, "vclient_test.sleepForever"}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runOne(t, toyScenario(11, 2, 0, 3000), &stuckClient{toy(), tc.ticking}, toyOptions())
			leakReported(t, err, "vclient: seed 11 (vclient:toy)", "the Start of h1, h2 had not returned 1m0s after its context ended",
				tc.where, "(*stuckClient).Start", "leak_test.go")
		})
	}
}

func leakReported(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("the leaking run ended without an error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error lacks %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "deadlock") {
		t.Errorf("the error is synctest's deadlock, not the leak:\n%v", err)
	}
}
