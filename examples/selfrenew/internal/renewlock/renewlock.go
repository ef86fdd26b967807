// Package renewlock is the lock library examples/selfrenew adapts, a
// stand-in for someone else's: the shape of the popular Go lock libraries
// that renew in the background and promise that the context they return
// "will be canceled automatically and immediately" once the lock is lost.
//
// It takes a lock from a lease service, starts a goroutine that renews it
// every half validity, and cancels the lock's context when a renewal
// fails. It has no renew to call; its Refresh runs the same renewal step
// at once. Client.LossDelay plants the bug the property loss-signal exists
// for: the context is cancelled that much after the library found the
// lock lost; Client.RenewOnReply the one renew-rate exists for: the next
// renewal goes out as soon as the last one is answered.
package renewlock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// ErrNotObtained: someone else holds the lock.
var ErrNotObtained = errors.New("renewlock: lock not obtained")

// ErrLost: the lock is no longer held.
var ErrLost = errors.New("renewlock: lock lost")

// ErrSilent: the library gave the lock up because the service did not
// answer its renewals within the TTL. The service said nothing: it may
// still hold the lock (a renewal applied whose reply was lost), so this is
// no refusal.
var ErrSilent = errors.New("renewlock: lock given up: the service did not answer within the TTL")

// Client takes locks for one owner over a lease service.
type Client struct {
	conn  backend.Backend
	owner string
	// LossDelay delays cancelling a lost lock's context (a planted bug).
	LossDelay time.Duration
	// SilentLossDelay delays cancelling the context when the loss was
	// found by the service's silence (renewals unanswered past the TTL:
	// "Redis is down") rather than by a refusal (a planted bug).
	SilentLossDelay time.Duration
	// RenewOnReply renews again as soon as each renewal is answered,
	// instead of every half validity (a planted bug: a renewal loop that
	// never settles).
	RenewOnReply bool
	// gate stops the whole client (its renewal goroutines) while closed.
	gate backend.Gate
}

// New returns a client for owner over conn.
func New(conn backend.Backend, owner string) *Client { return &Client{conn: conn, owner: owner} }

// Stop stops the whole client — every renewal goroutine waits before its
// next request — until resume is called: a process pause.
func (c *Client) Stop() (resume func()) { return c.gate.Stop() }

// wait blocks while the client is stopped (or until ctx ends).
func (c *Client) wait(ctx context.Context) { c.gate.Wait(ctx) }

// Lock is a held lock. Its Context is cancelled once the lock is lost (or
// released).
type Lock struct {
	c     *Client
	key   string
	ttl   time.Duration
	fence int64
	ctx   context.Context
	stop  context.CancelFunc // ends the hold: the context and the goroutine

	mu      sync.Mutex
	last    backend.Response // the latest successful grant or renewal
	lost    bool
	silent  bool          // given up for the service's silence, not refused
	done    chan struct{} // the renewal goroutine ended
	onRenew func(backend.Renewal)
}

// Obtain takes the lock on key for ttl and keeps it, renewing every ttl/2,
// until it is released or a renewal fails. onRenew, when set, hears every
// background renewal.
func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration, onRenew func(backend.Renewal)) (*Lock, backend.Response, error) {
	resp, err := c.conn.Do(ctx, backend.Request{Kind: model.Acquire, Key: key, Owner: c.owner, TTL: ttl})
	if err != nil {
		return nil, resp, err
	}
	if !resp.OK {
		return nil, resp, ErrNotObtained
	}
	lctx, cancel := context.WithCancel(context.Background())
	l := &Lock{c: c, key: key, ttl: ttl, fence: resp.Fence, ctx: lctx, stop: cancel, last: resp, done: make(chan struct{}), onRenew: onRenew}
	go l.renewLoop()
	return l, resp, nil
}

// Context is cancelled once the lock is lost or released.
func (l *Lock) Context() context.Context { return l.ctx }

// Fence is the token the grant carried.
func (l *Lock) Fence() int64 { return l.fence }

// Last is the latest successful grant or renewal.
func (l *Lock) Last() backend.Response {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

func (l *Lock) renewLoop() {
	defer close(l.done)
	t := time.NewTicker(l.ttl / 2)
	defer t.Stop()
	for {
		if !l.c.RenewOnReply {
			select {
			case <-l.ctx.Done():
				return
			case <-t.C:
			}
		} // BUG when planted: the next renewal goes out on the last one's reply
		l.c.wait(l.ctx)
		if l.ctx.Err() != nil {
			return
		}
		if err := l.renew(l.ctx, true); err == ErrLost || err == ErrSilent {
			return
		} // an unanswered renewal is retried on the next tick while the lease may live
	}
}

// Refresh renews the lock now, as the background goroutine does.
func (l *Lock) Refresh(ctx context.Context) (backend.Response, error) {
	if l.ctx.Err() != nil {
		l.mu.Lock()
		silent := l.silent
		l.mu.Unlock()
		if silent {
			return backend.Response{}, ErrSilent
		}
		return backend.Response{}, ErrLost
	}
	err := l.renew(ctx, false)
	return l.Last(), err
}

// renew runs one renewal; a definite refusal loses the lock.
func (l *Lock) renew(ctx context.Context, background bool) error {
	rctx, cancel := context.WithTimeout(ctx, l.ttl/3)
	defer cancel()
	start := time.Now()
	resp, err := l.c.conn.Do(rctx, backend.Request{Kind: model.Renew, Key: l.key, Owner: l.c.owner, TTL: l.ttl, Fence: l.fence})
	if background && l.onRenew != nil {
		l.onRenew(backend.Renewal{Key: l.key, Owner: l.c.owner, Fence: l.fence, Start: start, End: time.Now(), Answered: err == nil, OK: err == nil && resp.OK, TTL: l.ttl, At: resp.At})
	}
	switch {
	case err != nil && time.Since(l.Last().At) < l.ttl:
		return err // unknown: retry on the next tick while the lease may live
	case err != nil:
		l.mu.Lock()
		l.silent = true
		l.mu.Unlock()
		l.loseAfter(l.c.LossDelay + l.c.SilentLossDelay) // BUG when planted: silence is a loss too
		return ErrSilent
	case !resp.OK:
		l.loseAfter(l.c.LossDelay)
		return ErrLost
	}
	l.mu.Lock()
	l.last = resp
	l.mu.Unlock()
	return nil
}

// loseAfter cancels the context d after the loss was found.
func (l *Lock) loseAfter(d time.Duration) {
	l.mu.Lock()
	l.lost = true
	l.mu.Unlock()
	if d <= 0 {
		l.stop()
		return
	}
	time.AfterFunc(d, l.stop) // BUG when planted: the promise is "immediately"
}

// Lost reports whether the library found the lock lost (whether or not it
// has said so yet).
func (l *Lock) Lost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// Abandon ends the hold without giving the lock back: the context is
// cancelled and the renewal goroutine stops; stopped is closed once it has.
func (l *Lock) Abandon() (stopped <-chan struct{}) {
	l.stop()
	return l.done
}

// Release gives the lock back and ends the hold.
func (l *Lock) Release(ctx context.Context) (backend.Response, error) {
	l.mu.Lock()
	l.lost = true
	l.mu.Unlock()
	l.stop()
	<-l.done
	return l.c.conn.Do(ctx, backend.Request{Kind: model.Release, Key: l.key, Owner: l.c.owner, Fence: l.fence})
}
