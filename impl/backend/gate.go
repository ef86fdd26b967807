package backend

import (
	"context"
	"sync"
	"time"
)

// Gate is what an adapter's Stopper closes: every goroutine of the
// library's client that passes through Wait (its renewal requests, its
// connection's reads and writes, as the adapter wraps them) waits while
// the gate is stopped, as a paused process's threads do. The zero value
// is open.
type Gate struct {
	mu      sync.Mutex
	stopped chan struct{} // nil: open
	since   time.Time     // when the current stop began
	total   time.Duration // every ended stop, summed
}

// Stopped is how long the gate has been stopped in all, the current stop
// included: a wrapper of the client's connection adds it to the deadlines
// the library set, so that a stopped client's own timers stop with it (as
// a scripted client's do between its requests).
func (g *Gate) Stopped() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped != nil {
		return g.total + time.Since(g.since)
	}
	return g.total
}

// Stop closes the gate until resume is called (resume is idempotent; a
// Stop while stopped shares the stop).
func (g *Gate) Stop() (resume func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped == nil {
		g.stopped, g.since = make(chan struct{}), time.Now()
	}
	ch := g.stopped
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.stopped == ch {
			close(ch)
			g.stopped = nil
			g.total += time.Since(g.since)
		}
	}
}

// Wait blocks while the gate is stopped, or until ctx ends (ctx's error).
func (g *Gate) Wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.stopped
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
