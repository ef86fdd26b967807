// Package selfrenew is the leasecheck adapter of a lock library that holds
// while it says so: renewlock (internal/renewlock, a stand-in for someone
// else's library), the shape of the popular Go lock libraries that renew
// in the background and promise that the context they return "will be
// canceled automatically and immediately" once the lock is lost.
//
// The adapter (NewAdapter) maps the library onto backend.Backend with the
// optional capabilities for such libraries: backend.Holding (the
// library's own loss signal, its background renewals as they happen),
// backend.Stopper (a pause stops the whole client, the renewal goroutine
// included) and backend.Clock. The service in the tests is an in-process
// lease table (examples/machine/tablestore, another third party's
// coordinator); Verify runs the same adapter over bsm/redislock on a real
// Redis (examples/redislock; docs/holding-libraries.md).
//
// NewAdapter's lossDelay plants the bug the property loss-signal exists
// for: the context is cancelled that much after the library found the
// lock lost. AdapterOver runs the library over a service it is given —
// the one leasetest.Processes serves each owner's client process — with
// that bug or the renewal loop renew-rate exists for (Bugs).
package selfrenew

import (
	"context"
	"errors"
	"sync"
	"time"

	"example.com/leasecheck-examples/machine/tablestore"
	"example.com/leasecheck-examples/selfrenew/internal/renewlock"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Info describes the adapter: the lease table's fences (a counter per key)
// and checked writes, its clock in every answer, and the library's loss
// lateness: it finds a loss on its next renewal, at most half a TTL after
// the client resumes, plus the renewal's own timeout (a third of a TTL).
// It renews every half TTL (Info.RenewInterval, judged by renew-rate).
func Info(ttl time.Duration) backend.Info {
	i := backend.InProcessInfo("selfrenew")
	i.LossLateness = ttl/2 + ttl/3
	i.RenewInterval = ttl / 2
	return i
}

// Bugs plant what the properties exist for.
type Bugs struct {
	// LossDelay: every client cancels a lost lock's context that long
	// after it finds the lock lost (loss-signal).
	LossDelay time.Duration
	// SilentLossDelay: the same, only when the loss was found by the
	// service's silence (renewals unanswered past the TTL), not by a
	// refusal: a bug only a partition shows, not a pause.
	SilentLossDelay time.Duration
	// RenewOnReply: the library renews again as soon as each renewal is
	// answered, instead of every half TTL (renew-rate).
	RenewOnReply bool
}

// NewService is the lease service the tests run the library over: a fresh
// in-process reference coordinator. Served to client processes by
// leasetest.Processes, each owner's library reaches it over its pipe.
func NewService() backend.Backend {
	return backend.InProcess(tablestore.New(), time.Millisecond, nil)
}

// AdapterOver returns the library over conn (NewService's, as a client
// process reaches it: leasetest.Service.Backend), with bugs planted.
func AdapterOver(conn backend.Backend, bugs Bugs) backend.Backend {
	a := newAdapter(conn, bugs.LossDelay)
	a.renewOnReply, a.silentLossDelay = bugs.RenewOnReply, bugs.SilentLossDelay
	return a
}

// adapter is the library as a backend.Backend, with backend.Holding,
// backend.Stopper and backend.Clock. Acquire is Obtain, renew is Refresh,
// release is Release; writes and reads go to the service as they are.
type adapter struct {
	conn backend.Backend
	// lossDelay and renewOnReply are set on every client (planted bugs).
	lossDelay       time.Duration
	silentLossDelay time.Duration
	renewOnReply    bool

	mu        sync.Mutex
	clients   map[string]*renewlock.Client
	locks     map[[2]string]*renewlock.Lock
	observers []func(backend.Renewal)
}

// NewAdapter returns the library over a fresh in-process lease table, as a backend.Backend with backend.Holding, backend.Stopper
// and backend.Clock. A lossDelay above zero plants a broken promise: every
// client cancels a lost lock's context that long after it finds the lock
// lost. Verify runs the same adapter over a real Redis.
func NewAdapter(lossDelay time.Duration) backend.Backend {
	return newAdapter(NewService(), lossDelay)
}

// newAdapter returns the library over conn, any lease service (bsm/redislock
// on a real Redis: verify.go).
func newAdapter(conn backend.Backend, lossDelay time.Duration) *adapter {
	return &adapter{conn: conn, lossDelay: lossDelay, clients: map[string]*renewlock.Client{}, locks: map[[2]string]*renewlock.Lock{}}
}

// Cleanup implements backend.Cleaner when the service does.
func (a *adapter) Cleanup(ctx context.Context) error {
	if c, ok := a.conn.(backend.Cleaner); ok {
		return c.Cleanup(ctx)
	}
	return nil
}

func (a *adapter) client(owner string) *renewlock.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.clients[owner]
	if c == nil {
		c = renewlock.New(a.conn, owner)
		c.LossDelay = a.lossDelay
		c.RenewOnReply, c.SilentLossDelay = a.renewOnReply, a.silentLossDelay
		a.clients[owner] = c
	}
	return c
}

func (a *adapter) lock(key, owner string) *renewlock.Lock {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.locks[[2]string{key, owner}]
}

func (a *adapter) renewed(r backend.Renewal) {
	a.mu.Lock()
	obs := append([]func(backend.Renewal){}, a.observers...)
	a.mu.Unlock()
	for _, fn := range obs {
		fn(r)
	}
}

// Do implements backend.Backend.
func (a *adapter) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	switch req.Kind {
	case model.Acquire:
		// The service decides (a live holder's second acquire is refused
		// there); a new grant replaces the owner's old hold, whose
		// goroutine ends without a release.
		l, resp, err := a.client(req.Owner).Obtain(ctx, req.Key, req.TTL, a.renewed)
		if err == nil {
			a.mu.Lock()
			old := a.locks[[2]string{req.Key, req.Owner}]
			a.locks[[2]string{req.Key, req.Owner}] = l
			a.mu.Unlock()
			if old != nil {
				old.Abandon()
			}
		}
		if err == renewlock.ErrNotObtained {
			err = nil
		}
		return resp, err
	case model.Renew:
		l := a.lock(req.Key, req.Owner)
		if l == nil || req.Fence != 0 && req.Fence != l.Fence() {
			// Nothing of the owner's to refresh: the library refuses
			// locally, definitely.
			if l == nil {
				return backend.Response{OK: false, Reason: machine.ReasonNotHolder}, nil
			}
			return backend.Response{OK: false, Reason: machine.ReasonStaleFence}, nil
		}
		resp, err := l.Refresh(ctx)
		if err == renewlock.ErrLost {
			return backend.Response{OK: false, Reason: machine.ReasonExpired}, nil
		}
		// ErrSilent: the library gave up for the service's silence; the
		// service refused nothing and may still hold the lock (a renewal
		// applied, its reply lost), so the outcome is unknown, never a
		// refusal the history would blame on the service.
		return resp, err
	case model.Release:
		l := a.lock(req.Key, req.Owner)
		if l == nil || req.Fence != 0 && req.Fence != l.Fence() {
			return a.conn.Do(ctx, req) // the service decides a stranger's release
		}
		a.mu.Lock()
		delete(a.locks, [2]string{req.Key, req.Owner})
		a.mu.Unlock()
		return l.Release(ctx)
	}
	return a.conn.Do(ctx, req)
}

// Signal implements backend.Holding: the lock's context.
func (a *adapter) Signal(key, owner string) <-chan struct{} {
	if l := a.lock(key, owner); l != nil {
		return l.Context().Done()
	}
	return nil
}

// Observe implements backend.Holding.
func (a *adapter) Observe(fn func(backend.Renewal)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.observers = append(a.observers, fn)
}

// StopClient implements backend.Stopper: the owner's whole client stops.
func (a *adapter) StopClient(owner string) func() { return a.client(owner).Stop() }

// ServerNow implements backend.Clock when the service reports its clock
// (its Info's ServerTime says whether anyone asks).
func (a *adapter) ServerNow(ctx context.Context) (time.Time, error) {
	if c, ok := a.conn.(backend.Clock); ok {
		return c.ServerNow(ctx)
	}
	return time.Time{}, errors.New("selfrenew: the lease service reports no clock")
}

// Close ends every hold.
func (a *adapter) Close() error {
	a.mu.Lock()
	locks := a.locks
	a.locks = map[[2]string]*renewlock.Lock{}
	a.mu.Unlock()
	for _, l := range locks {
		<-l.Abandon()
	}
	return a.conn.Close()
}
