// Package redsync adapts github.com/go-redsync/redsync/v4 — the Go
// implementation of Redis's Redlock — to leasecheck's backend.Backend, on
// one Redis (a quorum of one), as its README shows it: a go-redis client
// with its default options, goredis.NewPool, redsync.New, NewMutex.
//
//	library                          contract
//	Mutex.TryLockContext (one try)   Do(acquire)
//	Mutex.ExtendContext              Do(renew)
//	Mutex.UnlockContext              Do(release)
//	a plain SET of the data key      Do(write)
//
// The mutex is per owner and key: its random value is the owner's
// identity towards Redis. Redsync grants no fencing token, and renews only
// when asked (Extend): it is no holding library.
package redsync

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"

	"example.com/leasecheck-examples/redislock"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Info describes the adapter: no fencing token, unfenced writes, and the
// validity redsync counts on (TTL minus 1% drift minus the acquire's
// duration) is shorter than the key's PX: Redis's millisecond clock is
// the uncertainty.
func Info() backend.Info {
	return backend.Info{
		Name:        "redsync",
		Fences:      backend.NoFences,
		Writes:      backend.UncheckedWrites,
		FenceSource: "none: redsync grants no fencing token",
		FencedWrite: "none: a plain SET of the data key after taking the mutex",
		Uncertainty: 2 * time.Millisecond,
	}
}

// Adapter is redsync on one go-redis client: a backend.Backend and a
// backend.Cleaner.
type Adapter struct {
	rdb    *goredis.Client
	rs     *redsync.Redsync
	prefix string

	mu      sync.Mutex
	mutexes map[[2]string]*redsync.Mutex
}

// Open connects to the Redis at url, reached at addr (the harness's proxy;
// empty: the URL's), its keys under prefix. The go-redis options are the
// URL's defaults, as the README's client: its retries (MaxRetries 3) and
// socket timeouts are the configuration under test.
func Open(ctx context.Context, url, addr, prefix string) (*Adapter, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redsync: bad URL: %w", err)
	}
	if addr != "" {
		opts.Addr = addr
	}
	opts.ClientName = redislock.ConnectionName("redsync/" + prefix) // Cleanup waits for these connections
	rdb := goredis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redsync: PING: %w", err)
	}
	return &Adapter{rdb: rdb, rs: redsync.New(rsgoredis.NewPool(rdb)), prefix: prefix, mutexes: map[[2]string]*redsync.Mutex{}}, nil
}

func (a *Adapter) mutex(key, owner string) *redsync.Mutex {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mutexes[[2]string{key, owner}]
}

func (a *Adapter) setMutex(key, owner string, m *redsync.Mutex) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m == nil {
		delete(a.mutexes, [2]string{key, owner})
		return
	}
	a.mutexes[[2]string{key, owner}] = m
}

var errGone = errors.New("redsync: the mutex's key was gone at the unlock (expired, perhaps taken since): outcome unknown")

// taken reports whether err says the key holds another's value (a
// definite refusal).
func taken(err error) bool {
	var t *redsync.ErrTaken
	var nt *redsync.ErrNodeTaken
	return errors.As(err, &t) || errors.As(err, &nt)
}

// Do runs one operation with one library call (or one Redis command).
func (a *Adapter) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	ttl := req.TTL.Truncate(time.Millisecond)
	key := a.prefix + "lock:" + req.Key
	switch req.Kind {
	case model.Acquire:
		m := a.rs.NewMutex(key, redsync.WithExpiry(ttl))
		err := m.TryLockContext(ctx) // one try: the harness's holders retry
		if taken(err) {
			return backend.Response{Reason: machine.ReasonHeld}, nil
		}
		if err != nil {
			// ErrFailed after a quorum of SETs (too slow for the
			// validity: the library released them) or an error: unknown.
			return backend.Response{}, err
		}
		a.setMutex(req.Key, req.Owner, m)
		return backend.Response{OK: true, TTL: ttl}, nil

	case model.Renew:
		m := a.mutex(req.Key, req.Owner)
		if m == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		ok, err := m.ExtendContext(ctx)
		if ok {
			return backend.Response{OK: true, TTL: ttl}, nil
		}
		if err == nil || taken(err) {
			// The touch script found the value gone or another's.
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		// ErrExtendFailed (the key was extended, too slowly for the
		// validity) or an error: unknown.
		return backend.Response{}, err

	case model.Release:
		m := a.mutex(req.Key, req.Owner)
		if m == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		ok, err := m.UnlockContext(ctx)
		if ok {
			a.setMutex(req.Key, req.Owner, nil)
			return backend.Response{OK: true}, nil
		}
		if errors.Is(err, redsync.ErrLockAlreadyExpired) || taken(err) {
			a.setMutex(req.Key, req.Owner, nil)
			return backend.Response{}, errGone
		}
		return backend.Response{}, err

	case model.Write:
		// What a user does with the mutex held: write the data. Nothing
		// checks the lock here.
		if err := a.rdb.Set(ctx, a.prefix+"data:"+req.Key, req.Value, 0).Err(); err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true}, nil

	case model.Read:
		v, err := a.rdb.Get(ctx, a.prefix+"data:"+req.Key).Result()
		if errors.Is(err, goredis.Nil) {
			return backend.Response{OK: true}, nil
		}
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true, Value: v, HasValue: true}, nil
	}
	return backend.Response{}, errors.New("redsync: unknown op " + req.Kind.String())
}

// Cleanup implements backend.Cleaner: it closes the client and deletes
// every key under the prefix once the server has dropped its connections.
func (a *Adapter) Cleanup(ctx context.Context) error {
	opts := *a.rdb.Options()
	a.rdb.Close()
	return redislock.DeleteAfterClosed(ctx, opts, opts.ClientName, a.prefix)
}

// Close closes the client (mutexes are not unlocked: they expire).
func (a *Adapter) Close() error { a.rdb.Close(); return nil }
