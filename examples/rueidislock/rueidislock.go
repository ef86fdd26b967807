// Package rueidislock adapts github.com/redis/rueidis/rueidislock — the
// lock of the rueidis Redis client, and, by the same code, valkey-go's
// valkeylock — to leasecheck: a library that holds while it says so.
//
// The library takes a lock with SET NX PXAT on KeyMajority*2-1 keys, keeps
// it with a goroutine per key that runs an extend script every
// ExtendInterval and again on every client-side-caching invalidation of
// the key, and returns a context that "will be canceled automatically and
// immediately once the KeyMajority is not held anymore" (its README). It
// has no refresh to call and grants no fencing token; the data it protects
// is written with a plain SET.
//
//	library                                  contract
//	TryWithContext (no waiting)              Do(acquire)
//	the extend script of each key's goroutine  Observe (key 0's: the lock's renewals)
//	—  (no refresh of its own)               Do(renew): the next background renewal, or unknown
//	the returned CancelFunc (deletes the keys) Do(release), from the delete script's answer
//	the returned context's Done              Signal
//	a client process, SIGSTOP                StopClient (leasetest.OpenClient)
//
// Each owner has a Locker of its own (its own connection and its own
// client-side cache) in a process of its own.
package rueidislock

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"example.com/leasecheck-examples/redislock"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Config is the library's configuration under test.
type Config struct {
	// Name names it in verify's registry and in Info.
	Name string
	// KeyMajority and NoLoopTracking are LockerOption's; zero values are
	// the library's defaults (KeyMajority 2 of 3 keys, tracking without
	// NOLOOP).
	KeyMajority    int32
	NoLoopTracking bool
}

// Defaults is the library with LockerOption's defaults; README is the
// configuration its README shows: one key ("Use KeyMajority=1 if you have
// only one Redis instance") and NOLOOP tracking ("better performance if
// all your Redis are >= 7.0.5").
var (
	Defaults = Config{Name: "rueidislock-defaults"}
	README   = Config{Name: "rueidislock", KeyMajority: 1, NoLoopTracking: true}
)

// Info describes the library at ttl (its KeyValidity): no fencing token,
// unfenced writes, renewals every half validity (ExtendInterval's
// default). Its promise is a context cancelled "immediately" once the lock
// is not held; the library knows the deadline it set (PXAT, from its own
// clock, before each request left), so the declared lateness is a tenth
// of the TTL: scheduling and one round trip on the loopback, no renewal
// interval.
func Info(c Config, ttl time.Duration) backend.Info {
	return backend.Info{
		Name:         c.Name,
		Fences:       backend.NoFences,
		Writes:       backend.UncheckedWrites,
		FenceSource:  "none: rueidislock grants no fencing token",
		FencedWrite:  "none: a plain SET of the data key while the context is alive",
		Uncertainty:  2 * time.Millisecond, // PXAT in whole milliseconds
		LossLateness: ttl / 10,
		// The declared interval: the library's timer extends every
		// ExtendInterval (TTL/2); the extends on invalidations come on
		// top of it.
		RenewInterval: ttl / 2,
	}
}

// The library's extend and delete scripts, as it sends them: their SHA1
// tells its calls apart on the connection (EVALSHA names the script by
// it). TestRenewalsObserved fails if they ever stop matching the
// library's.
const (
	extendScript = `if redis.call("GET",KEYS[1]) == ARGV[1] then local r = redis.call("PEXPIREAT",KEYS[1],ARGV[2]);redis.call("GET",KEYS[1]);return r end;return 0`
	delkeyScript = `if redis.call("GET",KEYS[1]) == ARGV[1] then return redis.call("DEL",KEYS[1]) end;return 0`
)

var extendSHA, delkeySHA = sum(extendScript), sum(delkeyScript)

func sum(s string) string { h := sha1.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

// Adapter is the library, one Locker per owner, as a backend.Backend with
// backend.Holding and backend.Cleaner.
type Adapter struct {
	cfg    Config
	addr   string
	url    string
	prefix string
	name   string // the connections' name, for Cleanup

	mu        sync.Mutex
	lockers   map[string]*ownerLocker // by owner and TTL
	holds     map[[2]string]*hold
	observers []func(backend.Renewal)
}

// Open returns the library on the Redis at url, reached at addr (the
// harness's proxy; empty: the URL's host), its keys under prefix.
func Open(cfg Config, url, addr, prefix string) (*Adapter, error) {
	if addr == "" {
		o, err := goredis.ParseURL(url)
		if err != nil {
			return nil, err
		}
		addr = o.Addr
	}
	return &Adapter{cfg: cfg, addr: addr, url: url, prefix: prefix, name: redislock.ConnectionName("rueidislock/" + prefix),
		lockers: map[string]*ownerLocker{}, holds: map[[2]string]*hold{}}, nil
}

// Warm loads the library's scripts into the server's cache (a throwaway
// Locker takes and releases a lock of its own, retried while its 20ms
// TryNextAfter runs out on a loaded machine), so that an owner's first
// acquire does not pay the NOSCRIPT round trip on top of its connection's
// setup within that 20ms. What the owners do is unchanged.
func (a *Adapter) Warm(ctx context.Context) error {
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: []string{a.addr}, ClientName: a.name},
		KeyPrefix:    a.prefix + "warm", KeyMajority: a.cfg.KeyMajority, NoLoopTracking: a.cfg.NoLoopTracking,
	})
	if err != nil {
		return err
	}
	defer l.Close()
	for range 20 {
		_, cancel, err := l.TryWithContext(ctx, "warm")
		if err == nil {
			cancel()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// ownerLocker is one owner's Locker, its connection observed.
type ownerLocker struct {
	l     rueidislock.Locker
	owner string
}

// hold is a lock an owner holds: the library's context and cancel, and
// what its goroutines sent.
type hold struct {
	key, owner string
	ctx        context.Context
	cancel     context.CancelFunc
	ttl        time.Duration

	mu sync.Mutex
	// renewed is closed at the next answered renewal of key 0 (ok in
	// renewOK), then replaced.
	renewed chan struct{}
	renewOK bool
	// deleted is the delete script's answers on key 0: 1 deleted, 0 not
	// (the key was gone or another's), -1 no answer.
	deleted []int64
}

func (a *Adapter) locker(owner string, ttl time.Duration) (*ownerLocker, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := owner + "\x00" + ttl.String()
	if ol := a.lockers[id]; ol != nil {
		return ol, nil
	}
	ol := &ownerLocker{owner: owner}
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption:   rueidis.ClientOption{InitAddress: []string{a.addr}, ClientName: a.name},
		KeyPrefix:      a.prefix + "rl",
		KeyValidity:    ttl,
		KeyMajority:    a.cfg.KeyMajority,
		NoLoopTracking: a.cfg.NoLoopTracking,
		ClientBuilder: func(o rueidis.ClientOption) (rueidis.Client, error) {
			c, err := rueidis.NewClient(o)
			if err != nil {
				return nil, err
			}
			return &observed{Client: c, a: a, owner: owner}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	ol.l = l
	a.lockers[id] = ol
	return ol, nil
}

// forget undoes a failed acquire's registration of h: the owner's hold is
// old again — unless another acquire of the owner's registered its own
// since (a request the caller gave up on may end after the next one was
// granted), whose hold stays.
func (a *Adapter) forget(key, owner string, h, old *hold) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := [2]string{key, owner}
	switch {
	case a.holds[k] != h:
	case old != nil:
		a.holds[k] = old
	default:
		delete(a.holds, k)
	}
}

func (a *Adapter) hold(key, owner string) *hold {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.holds[[2]string{key, owner}]
}

// observed is an owner's rueidis client, seen by the adapter: each extend
// script on key 0 of a lock the owner holds is a background renewal, each
// delete script's answer is kept for the release.
type observed struct {
	rueidis.Client
	a     *Adapter
	owner string
}

func (o *observed) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	args := cmd.Commands()
	if len(args) < 6 || args[0] != "EVALSHA" && args[0] != "EVAL" {
		return o.Client.Do(ctx, cmd)
	}
	script := args[1]
	if args[0] == "EVAL" {
		script = sum(script)
	}
	if script != extendSHA && script != delkeySHA {
		return o.Client.Do(ctx, cmd)
	}
	k, ok := strings.CutPrefix(args[3], o.a.prefix+"rl:0:")
	if !ok {
		return o.Client.Do(ctx, cmd)
	}
	// The command's strings are recycled once it is sent: read them first.
	deadline, _ := strconv.ParseInt(args[5], 10, 64)
	h := o.a.hold(k, o.owner)
	start := time.Now()
	res := o.Client.Do(ctx, cmd)
	end := time.Now()
	if h == nil {
		return res
	}
	v, err := res.AsInt64()
	if ret, ok := rueidis.IsRedisErr(err); ok && ret.IsNoScript() {
		return res // the library sends the script itself next (EVAL)
	}
	_, redisErr := rueidis.IsRedisErr(err)
	answered := err == nil || redisErr
	if script == delkeySHA {
		if !answered {
			v = -1
		}
		h.mu.Lock()
		h.deleted = append(h.deleted, v)
		h.mu.Unlock()
		return res
	}
	r := backend.Renewal{Key: k, Owner: o.owner, Start: start, End: end, Answered: answered, OK: err == nil && v == 1,
		TTL: time.UnixMilli(deadline).Sub(start)}
	if r.TTL <= 0 {
		// An extend on an invalidation reuses the key's last deadline;
		// past (after a pause), PEXPIREAT deletes the key and answers 1:
		// no renewal, whatever the library makes of it.
		r.OK, r.TTL = false, time.Millisecond
	}
	h.mu.Lock()
	if answered {
		h.renewOK = r.OK
		close(h.renewed)
		h.renewed = make(chan struct{})
	}
	h.mu.Unlock()
	o.a.mu.Lock()
	obs := append([]func(backend.Renewal){}, o.a.observers...)
	o.a.mu.Unlock()
	for _, fn := range obs {
		fn(r)
	}
	return res
}

// errGone is the unknown outcome of a release when the library had
// already said the lock was lost, or its delete found the key gone or
// another's: the lease expired, perhaps taken since.
var errGone = errors.New("rueidislock: the lock was not held any more at the release (expired, perhaps taken since): outcome unknown")

// Do implements backend.Backend.
func (a *Adapter) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	ttl := req.TTL.Truncate(time.Millisecond)
	switch req.Kind {
	case model.Acquire:
		ol, err := a.locker(req.Owner, ttl)
		if err != nil {
			return backend.Response{}, err
		}
		h := &hold{key: req.Key, owner: req.Owner, ttl: ttl, renewed: make(chan struct{})}
		// The hold is registered before the first extend can come; the
		// lock's context must outlive the request, so it derives from
		// Background (the library bounds each key's SET by TryNextAfter).
		a.mu.Lock()
		old := a.holds[[2]string{req.Key, req.Owner}]
		a.holds[[2]string{req.Key, req.Owner}] = h
		a.mu.Unlock()
		lctx, cancel, err := ol.l.TryWithContext(context.Background(), req.Key)
		// TryNextAfter (20ms) bounds each key's SET: on a loaded machine
		// a try runs out of it, and the library deletes what it set
		// before it returns. Try again within the request's deadline, as
		// the library's own WithContext does; a refusal after a timed-out
		// try stays unknown (a key the failed try could not delete is the
		// owner's own).
		for timedOut := false; err != nil; {
			if errors.Is(err, rueidislock.ErrNotLocked) {
				if timedOut {
					err = errors.New("rueidislock: refused after a try that timed out: outcome unknown")
				}
				break
			}
			if d, ok := ctx.Deadline(); !ok || ctx.Err() != nil || time.Until(d) < 50*time.Millisecond {
				break // the caller gave up: a later try would be an acquire nobody asked for
			}
			timedOut = true
			time.Sleep(10 * time.Millisecond)
			lctx, cancel, err = ol.l.TryWithContext(context.Background(), req.Key)
		}
		if err != nil {
			a.forget(req.Key, req.Owner, h, old)
			// Refused: a key held by another, or too few keys; the
			// library has deleted what it took before it returns.
			if errors.Is(err, rueidislock.ErrNotLocked) {
				return backend.Response{Reason: machine.ReasonHeld}, nil
			}
			return backend.Response{}, err
		}
		h.ctx, h.cancel = lctx, cancel
		if old != nil && old.cancel != nil {
			go old.cancel() // a new grant replaces the owner's old hold
		}
		return backend.Response{OK: true, TTL: ttl}, nil

	case model.Renew:
		h := a.hold(req.Key, req.Owner)
		if h == nil || h.ctx == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		// No refresh of its own: the next background renewal, if it
		// comes within the request's deadline.
		h.mu.Lock()
		next := h.renewed
		h.mu.Unlock()
		select {
		case <-h.ctx.Done():
			return backend.Response{Reason: machine.ReasonExpired}, nil
		case <-next:
			h.mu.Lock()
			ok := h.renewOK
			h.mu.Unlock()
			if !ok {
				return backend.Response{Reason: machine.ReasonExpired}, nil
			}
			return backend.Response{OK: true, TTL: ttl}, nil
		case <-ctx.Done():
			// The hold goes on: ending it here (the library's cancel
			// deletes the key) would be a release the history does not
			// have. The library keeps renewing; the owner's next acquire
			// is refused by its own key.
			return backend.Response{}, errors.New("rueidislock: no background renewal within the request's deadline (the library has no refresh to call): outcome unknown")
		}

	case model.Release:
		h := a.hold(req.Key, req.Owner)
		if h == nil || h.ctx == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		lost := h.ctx.Err() != nil
		done := make(chan struct{})
		go func() {
			h.cancel() // returns once every key's goroutine has run its delete
			a.mu.Lock()
			if a.holds[[2]string{req.Key, req.Owner}] == h {
				delete(a.holds, [2]string{req.Key, req.Owner}) // after its deletes were seen
			}
			a.mu.Unlock()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			return backend.Response{}, errors.New("rueidislock: the release's deletes were not answered within the request's deadline: outcome unknown")
		}
		h.mu.Lock()
		deleted := h.deleted
		h.mu.Unlock()
		if lost || len(deleted) == 0 || deleted[0] != 1 {
			return backend.Response{}, errGone
		}
		return backend.Response{OK: true}, nil

	case model.Write, model.Read:
		ol, err := a.locker(req.Owner, ttl)
		if err != nil {
			return backend.Response{}, err
		}
		c := ol.l.Client()
		data := a.prefix + "data:" + req.Key
		if req.Kind == model.Write {
			// What a user of the library does while the context is alive:
			// write the data. Nothing checks the lock here.
			if err := c.Do(ctx, c.B().Set().Key(data).Value(req.Value).Build()).Error(); err != nil {
				return backend.Response{}, err
			}
			return backend.Response{OK: true}, nil
		}
		v, err := c.Do(ctx, c.B().Get().Key(data).Build()).ToString()
		if rueidis.IsRedisNil(err) {
			return backend.Response{OK: true}, nil
		}
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true, Value: v, HasValue: true}, nil
	}
	return backend.Response{}, errors.New("rueidislock: unknown op " + req.Kind.String())
}

// Signal implements backend.Holding: the lock's context.
func (a *Adapter) Signal(key, owner string) <-chan struct{} {
	if h := a.hold(key, owner); h != nil && h.ctx != nil {
		return h.ctx.Done()
	}
	return nil
}

// Observe implements backend.Holding.
func (a *Adapter) Observe(fn func(backend.Renewal)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.observers = append(a.observers, fn)
}

// Close closes every Locker (their locks are not released: they expire).
func (a *Adapter) Close() error {
	a.mu.Lock()
	lockers := a.lockers
	a.lockers = map[string]*ownerLocker{}
	a.mu.Unlock()
	for _, ol := range lockers {
		ol.l.Close()
	}
	return nil
}

// Cleanup implements backend.Cleaner: it closes the Lockers and deletes
// every key under the prefix once the server has dropped their
// connections (redislock.DeleteAfterClosed).
func (a *Adapter) Cleanup(ctx context.Context) error {
	a.Close()
	opts, err := goredis.ParseURL(a.url)
	if err != nil {
		return err
	}
	opts.Addr = a.addr
	return redislock.DeleteAfterClosed(ctx, *opts, a.name, a.prefix)
}
