package backend

import (
	"context"
	"testing"
	"time"
)

// An open gate lets Wait through; a stopped one holds it until resume (or
// the context's end), and Stopped counts the stop, the current one too.
func TestGate(t *testing.T) {
	var g Gate
	if err := g.Wait(context.Background()); err != nil || g.Stopped() != 0 {
		t.Fatalf("open gate: Wait = %v, Stopped = %v", err, g.Stopped())
	}
	resume := g.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Wait(ctx); err == nil {
		t.Fatalf("a stopped gate let Wait through")
	}
	passed := make(chan struct{})
	go func() { g.Wait(context.Background()); close(passed) }()
	select {
	case <-passed:
		t.Fatalf("a stopped gate let Wait through")
	case <-time.After(20 * time.Millisecond):
	}
	during := g.Stopped()
	resume()
	resume() // idempotent
	<-passed
	if after := g.Stopped(); during <= 0 || after < during {
		t.Fatalf("Stopped: %v during the stop, %v after", during, after)
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatalf("a resumed gate: Wait = %v", err)
	}
}
