package selfrenew

import (
	"context"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// Info describes the adapter: the reference coordinator's fences and
// checked writes, its clock in every answer, and the library's loss
// lateness: it finds a loss on its next renewal, at most half a TTL after
// the client resumes, plus the renewal's own timeout (a third of a TTL).
func Info(ttl time.Duration) backend.Info {
	i := backend.InProcessInfo("selfrenew")
	i.LossLateness = ttl/2 + ttl/3
	return i
}

// Adapter is the library as a backend.Backend, with backend.Holding,
// backend.Stopper and backend.Clock. Acquire is Obtain, renew is Refresh,
// release is Release; writes and reads go to the service as they are.
type Adapter struct {
	conn backend.Backend
	// LossDelay is set on every client (a planted late loss signal).
	LossDelay time.Duration

	mu        sync.Mutex
	clients   map[string]*Client
	locks     map[[2]string]*Lock
	observers []func(backend.Renewal)
}

// NewAdapter returns the library over a fresh in-process reference
// coordinator.
func NewAdapter() *Adapter {
	return NewAdapterOver(backend.InProcess(memstore.New(), time.Millisecond, nil))
}

// NewAdapterOver returns the library over conn, any lease service (a real
// Redis through internal/impl/redis: verify.go).
func NewAdapterOver(conn backend.Backend) *Adapter {
	return &Adapter{conn: conn, clients: map[string]*Client{}, locks: map[[2]string]*Lock{}}
}

// Cleanup implements backend.Cleaner when the service does.
func (a *Adapter) Cleanup(ctx context.Context) error {
	if c, ok := a.conn.(backend.Cleaner); ok {
		return c.Cleanup(ctx)
	}
	return nil
}

func (a *Adapter) client(owner string) *Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.clients[owner]
	if c == nil {
		c = New(a.conn, owner)
		c.LossDelay = a.LossDelay
		a.clients[owner] = c
	}
	return c
}

func (a *Adapter) lock(key, owner string) *Lock {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.locks[[2]string{key, owner}]
}

func (a *Adapter) renewed(r backend.Renewal) {
	a.mu.Lock()
	obs := append([]func(backend.Renewal){}, a.observers...)
	a.mu.Unlock()
	for _, fn := range obs {
		fn(r)
	}
}

// Do implements backend.Backend.
func (a *Adapter) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
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
				old.stop()
			}
		}
		if err == ErrNotObtained {
			err = nil
		}
		return resp, err
	case model.Renew:
		l := a.lock(req.Key, req.Owner)
		if l == nil || req.Fence != 0 && req.Fence != l.Fence() {
			// Nothing of the owner's to refresh: the library refuses
			// locally, definitely.
			if l == nil {
				return backend.Response{OK: false, Reason: backend.ReasonNotHolder}, nil
			}
			return backend.Response{OK: false, Reason: backend.ReasonStaleFence}, nil
		}
		resp, err := l.Refresh(ctx)
		if err == ErrLost {
			return backend.Response{OK: false, Reason: backend.ReasonExpired}, nil
		}
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
func (a *Adapter) Signal(key, owner string) <-chan struct{} {
	if l := a.lock(key, owner); l != nil {
		return l.Context().Done()
	}
	return nil
}

// Observe implements backend.Holding.
func (a *Adapter) Observe(fn func(backend.Renewal)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.observers = append(a.observers, fn)
}

// StopClient implements backend.Stopper: the owner's whole client stops.
func (a *Adapter) StopClient(owner string) func() { return a.client(owner).Stop() }

// ServerNow implements backend.Clock.
func (a *Adapter) ServerNow(ctx context.Context) (time.Time, error) {
	return a.conn.(backend.Clock).ServerNow(ctx)
}

// Close ends every hold.
func (a *Adapter) Close() error {
	a.mu.Lock()
	locks := a.locks
	a.locks = map[[2]string]*Lock{}
	a.mu.Unlock()
	for _, l := range locks {
		l.stop()
		<-l.done
	}
	return a.conn.Close()
}
