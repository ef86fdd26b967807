package checker

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// budget is what a check may spend: time (the context's deadline, checked
// in every phase) and memory (bytes held by search frontiers, caches and
// buffers, counted by the code that holds them). Spending past either ends
// the work in progress with an honest Unknown that says why, never with a
// guess and never with an out-of-memory kill.
//
// Memory is counted, not measured: each structure charges an estimate of
// its size (map entries with their overhead) when it grows, and credits it
// back when it lets go. Keys searched at once share the one budget.
//
// Counting is the first line; the second is a watchdog that reads the Go
// heap every few milliseconds and stops the check when it has grown past
// the limit since the check began, whatever it was that grew.
type budget struct {
	ctx     context.Context
	timeout time.Duration // for messages; 0: the caller's context only
	limit   int64         // bytes; < 0: none
	used    atomic.Int64
	peak    atomic.Int64
	heapHit atomic.Bool // the watchdog saw the heap past the limit
}

func newBudget(ctx context.Context, timeout time.Duration, limit int64) *budget {
	return &budget{ctx: ctx, timeout: timeout, limit: limit}
}

// watch starts the heap watchdog; stop ends it.
func (b *budget) watch() (stop func()) {
	if b.limit < 0 {
		return func() {}
	}
	done := make(chan struct{})
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(s)
			if h := s[0].Value.Uint64(); h > base && int64(h-base) > b.limit {
				b.heapHit.Store(true)
				return
			}
		}
	}()
	return func() { close(done) }
}

// charge adds n bytes; it reports false when that passes the limit (the
// bytes stay counted until the caller credits them back), or when the
// watchdog saw the heap pass it.
func (b *budget) charge(n int64) bool {
	if b.heapHit.Load() {
		return false
	}
	u := b.used.Add(n)
	for {
		p := b.peak.Load()
		if u <= p || b.peak.CompareAndSwap(p, u) {
			break
		}
	}
	return b.limit < 0 || u <= b.limit
}

// credit gives n bytes back.
func (b *budget) credit(n int64) { b.used.Add(-n) }

// expired reports whether the time budget is spent (or the caller gave
// up), or the memory budget is: every loop that checks the time stops for
// either.
func (b *budget) expired() bool { return b.ctx.Err() != nil || b.heapHit.Load() }

// reason says why the budget stopped the work, naming the phase.
func (b *budget) reason(phase string) string {
	if b.heapHit.Load() || b.ctx.Err() == nil {
		return b.memReason(phase)
	}
	return b.timeReason(phase)
}

// timeReason says why the time ran out, naming the phase.
func (b *budget) timeReason(phase string) string {
	if b.timeout > 0 && b.ctx.Err() == context.DeadlineExceeded {
		return fmt.Sprintf("the time budget (%v) ran out while %s", b.timeout, phase)
	}
	return fmt.Sprintf("the check was stopped (%v) while %s", b.ctx.Err(), phase)
}

// memReason says why the memory ran out, naming the phase.
func (b *budget) memReason(phase string) string {
	return fmt.Sprintf("the memory budget (%s) was reached while %s", formatBytes(b.limit), phase)
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Estimated sizes, in bytes, of what the searches keep. A Go map entry
// costs its key and value plus about half again in buckets and overhead.
const (
	memoEntryBytes   = 160 // a DFS cache entry: memoKey (two hashes and a timed.State)
	pathNodeBytes    = 72  // a pathNode
	configBytes      = 200 // a sweep configuration in a frontier map
	appliedBaseBytes = 64  // an applied set, beyond its words
)
