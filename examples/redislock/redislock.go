// Package redislock adapts github.com/bsm/redislock — a popular Redis lock
// library — to leasecheck's backend.Backend, the way a user adapts their own
// lock: nothing of leasecheck inside the lock, a thin Do on the outside.
//
// The library takes a lock with SET NX PX under a random token, refreshes
// it with a compare-and-PEXPIRE script and releases it with a
// compare-and-DEL script. It grants no fencing token, and the data it
// protects is written with a plain SET: the honest Info is the zero one
// (no fences, writes not fenced). leasetest then checks everything that
// applies and reports the one missing protection, once: a holder paused
// past its TTL writes after the lock moved on (redislock_test.go). See
// README.md for adapting another library.
package redislock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	goredis "github.com/redis/go-redis/v9"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Info describes the adapter: no fencing token, a plain write, interval
// mode (the library reports no server time).
func Info() backend.Info {
	return backend.Info{
		Name:        "bsm/redislock",
		Fences:      backend.NoFences,
		Writes:      backend.UncheckedWrites,
		FenceSource: "none: redislock grants no fencing token",
		FencedWrite: "none: a plain SET of the data key after taking the lock",
		// Redis expires a key when its millisecond clock is past the
		// deadline (PX in whole milliseconds): up to about 2 ms after the
		// TTL, never before it.
		Uncertainty: 2 * time.Millisecond,
	}
}

// errGone is the unknown outcome of a release whose lock redislock no
// longer holds (ErrLockNotHeld): the lease expired, and either nobody took
// it since (the release would be ok: the owner check is all a release
// does) or someone did (it would be refused). The adapter cannot tell, so
// it says so rather than guess (the adapter contract in impl/backend/README.md,
// release-mine-expired).
var errGone = errors.New("redislock: the lock is not held any more (expired, perhaps taken since): outcome unknown")

// adapter is a redislock client seen as a lease service, a backend.Backend
// and backend.Cleaner. Safe for concurrent use.
type adapter struct {
	rdb    *goredis.Client
	locker *redislock.Client
	prefix string
	// closeOnce closes rdb once: in Cleanup or Close.
	closeOnce sync.Once
	closeErr  error

	mu sync.Mutex
	// locks holds each owner's lock object by key: redislock's token is
	// random, so the object is the owner's identity towards Redis. An owner
	// without one holds nothing: its renew and release are refused here.
	locks map[string]*redislock.Lock
}

// Open connects to the Redis at url (redis://host:port[/db]) and returns
// the library as a backend.Backend; a non-empty addr replaces the URL's
// host:port (leasecheck's proxy). Keys live under prefix, and the
// backend is also a backend.Cleaner that deletes them.
func Open(ctx context.Context, url, addr, prefix string) (backend.Backend, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redislock: bad URL: %w", err)
	}
	if addr != "" {
		opts.Addr = addr
	}
	// The client settings that matter (the adapter contract in impl/backend/README.md): no silent
	// retries (a retried SET NX could take a lock the caller was told it
	// did not get), and every call bounded by the context's deadline.
	opts.MaxRetries = -1
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = 2 * time.Second
	opts.ClientName = ConnectionName("redislock/" + prefix) // Cleanup waits for these connections
	rdb := goredis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redislock: PING: %w", err)
	}
	return &adapter{rdb: rdb, locker: redislock.New(rdb), prefix: prefix, locks: map[string]*redislock.Lock{}}, nil
}

func (b *adapter) lockKey(key string) string { return b.prefix + "lock:" + key }
func (b *adapter) dataKey(key string) string { return b.prefix + "data:" + key }

func (b *adapter) lock(key, owner string) *redislock.Lock {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.locks[key+"\x00"+owner]
}

func (b *adapter) setLock(key, owner string, l *redislock.Lock) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l == nil {
		delete(b.locks, key+"\x00"+owner)
		return
	}
	b.locks[key+"\x00"+owner] = l
}

// Do runs one operation with one library call (or one Redis command).
func (b *adapter) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	// redislock takes TTLs in whole milliseconds.
	ttl := req.TTL.Truncate(time.Millisecond)
	switch req.Kind {
	case model.Acquire:
		l, err := b.locker.Obtain(ctx, b.lockKey(req.Key), ttl, nil) // no retry: one attempt
		if errors.Is(err, redislock.ErrNotObtained) {
			return backend.Response{Reason: machine.ReasonHeld}, nil
		}
		if err != nil {
			return backend.Response{}, err
		}
		b.setLock(req.Key, req.Owner, l)
		return backend.Response{OK: true, TTL: ttl}, nil

	case model.Renew:
		l := b.lock(req.Key, req.Owner)
		if l == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		err := l.Refresh(ctx, ttl, nil)
		if errors.Is(err, redislock.ErrNotObtained) {
			// The token is gone or another's: the lease expired. The lock
			// object stays: until someone else acquires, the owner may
			// still release.
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true, TTL: ttl}, nil

	case model.Release:
		l := b.lock(req.Key, req.Owner)
		if l == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		err := l.Release(ctx)
		switch {
		case err == nil:
			b.setLock(req.Key, req.Owner, nil)
			return backend.Response{OK: true}, nil
		case errors.Is(err, redislock.ErrLockNotHeld):
			b.setLock(req.Key, req.Owner, nil)
			return backend.Response{}, errGone
		}
		return backend.Response{}, err

	case model.Write:
		// What a user of the library does with the lock held: write the
		// data. Nothing checks the lock here.
		if err := b.rdb.Set(ctx, b.dataKey(req.Key), req.Value, 0).Err(); err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true}, nil

	case model.Read:
		v, err := b.rdb.Get(ctx, b.dataKey(req.Key)).Result()
		if errors.Is(err, goredis.Nil) {
			return backend.Response{OK: true}, nil
		}
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true, Value: v, HasValue: true}, nil
	}
	return backend.Response{}, errors.New("redislock: unknown op " + req.Kind.String())
}

// Cleanup implements backend.Cleaner: it deletes every key under the
// prefix (SCAN + DEL).
//
// A write whose caller gave up (its context timed out) may still be on its
// way to the server, and a plain SET landing after the delete would be
// left behind. So Cleanup first closes the adapter's connections (it is
// not usable afterwards; Close then does nothing), waits until the server
// has dropped every connection named after the prefix (CLIENT LIST) — by
// then every command they carried has been applied — and only then
// deletes, through a connection of its own.
func (b *adapter) Cleanup(ctx context.Context) error {
	b.closeOnce.Do(func() { b.closeErr = cleanup(ctx, b.rdb, b.prefix) })
	return b.closeErr
}

// Close closes the connections (after Cleanup, which closed them, it does
// nothing). Locks are not released: they expire.
func (b *adapter) Close() error {
	b.closeOnce.Do(func() { b.closeErr = b.rdb.Close() })
	return nil
}

// ConnectionName is s as the name of a connection (CLIENT SETNAME takes no
// spaces or newlines): the name of the connections of one prefix's
// adapters, which a cleanup waits for (DeleteAfterClosed).
func ConnectionName(s string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' {
			return '_'
		}
		return r
	}, s)
}

// cleanup closes rdb, then deletes every key under prefix once the server
// has dropped rdb's connections (DeleteAfterClosed).
func cleanup(ctx context.Context, rdb *goredis.Client, prefix string) error {
	opts := *rdb.Options()
	rdb.Close()
	return DeleteAfterClosed(ctx, opts, opts.ClientName, prefix)
}

// DeleteAfterClosed waits (up to 10 s, or ctx's deadline) until the Redis
// at opts lists no connection named name — by then every command those
// connections carried has been applied, late writes included — and
// deletes every key under prefix, through a connection of its own. The
// adapters of other Redis lock libraries (examples/redsync,
// examples/rueidislock) clean up with it after closing their clients.
func DeleteAfterClosed(ctx context.Context, opts goredis.Options, name, prefix string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	opts.ClientName = "" // not one of the connections waited for
	admin := goredis.NewClient(&opts)
	defer admin.Close()
	waitErr := waitGone(ctx, admin, name)
	iter := admin.Scan(ctx, 0, prefix+"*", 100).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(keys) > 0 {
		if err := admin.Del(ctx, keys...).Err(); err != nil {
			return err
		}
	}
	return waitErr
}

// waitGone waits until the server lists no connection named name.
func waitGone(ctx context.Context, admin *goredis.Client, name string) error {
	for {
		list, err := admin.ClientList(ctx).Result()
		if err != nil {
			return fmt.Errorf("redislock: cleanup: cannot tell whether late writes are still on the way (CLIENT LIST: %w); deleted what was there", err)
		}
		if !strings.Contains(list, " name="+name+" ") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redislock: cleanup: connections of %q still open on the server: a command on them may still write after this cleanup", name)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
