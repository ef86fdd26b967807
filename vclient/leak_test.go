package vclient_test

import (
	"context"
	"os"
	"os/exec"
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

// TestLeakedGoroutineNamed: a client whose goroutine outlives its Start
// keeps the run's bubble from ending, and synctest ends the test binary;
// before it does, the harness names the run's seed and where the leaked
// goroutine is blocked. (The run is a child process: the binary ends.)
func TestLeakedGoroutineNamed(t *testing.T) {
	if os.Getenv("VCLIENT_LEAK_CHILD") != "" {
		runOne(t, toyScenario(7, 1, 0, 3000), &leakyClient{toyClient{Every: time.Second, Timeout: time.Second}},
			vclient.Options{Server: func() vclient.Server { return &toyServer{ttl: 1000} }})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeakedGoroutineNamed$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VCLIENT_LEAK_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the leaking run ended normally:\n%s", out)
	}
	for _, want := range []string{"vclient: seed 7 ", "outlived every candidate's Start", "vclient_test.waitForever", "leak_test.go"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
