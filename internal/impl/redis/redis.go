// Package redis is the Redis lease backend: one redis-server, Lua scripts
// for every operation, the server's TIME read inside each script.
//
// Per lease key K, under a unique prefix P:
//
//   - P:lease:K, a hash {owner, fence, exp}: the lease. It is created like
//     SET NX PX (only when there is no live holder) and carries a PEXPIRE
//     backstop, but the deadline that decides is exp, in microseconds of
//     the script's TIME. Redis's own key expiry compares a millisecond
//     snapshot taken when the script started with `>`, while `at` is the
//     microsecond TIME; deciding on TIME makes `at` exactly the clock the
//     decision read (exact mode, docs/specification.md §3) instead of one that may
//     differ by a millisecond at the very instant of expiry.
//   - P:fence:K, the fence: INCR on every grant, so fences are 1, 2, 3, ...
//     (model.Sequential).
//   - P:data:K, the data. The fenced write is a script: holder == owner,
//     TIME < exp and fence == current, then SET.
//
// Renew and release are compare-and-act scripts on owner and fence; release
// checks no deadline (the seed semantics of reference/lease.py). Retries
// are off: a retried INCR would grant twice.
package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// Info describes the backend.
func Info() backend.Info {
	return backend.Info{
		Name:        "redis",
		FenceSource: "INCR P:fence:K inside the acquire script (sequential: 1, 2, 3, ...)",
		FencedWrite: "Lua: holder == owner, TIME < exp, fence == current, then SET P:data:K",
		Fences:      backend.SequentialFences,
		Writes:      backend.CheckedWrites,
		ServerTime:  true,
	}
}

// backstop is the PEXPIRE on lease hashes: it only collects what a crashed
// run left behind, long after any lease it could decide.
const backstop = 10 * time.Minute

const preamble = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
`

var (
	acquireScript = goredis.NewScript(preamble + `
local h = redis.call('HMGET', KEYS[1], 'owner', 'exp')
if h[1] and now < tonumber(h[2]) then return {0, t[1], t[2], 'held'} end
local f = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'fence', f, 'exp', string.format('%.0f', now + tonumber(ARGV[2])))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, t[1], t[2], f}`)

	check = `
local h = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'exp')
if not h[1] or h[1] ~= ARGV[1] then return {0, t[1], t[2], 'not-holder'} end
`
	renewScript = goredis.NewScript(preamble + check + `
if h[2] ~= ARGV[2] then return {0, t[1], t[2], 'stale-fence'} end
if now >= tonumber(h[3]) then return {0, t[1], t[2], 'expired'} end
redis.call('HSET', KEYS[1], 'exp', string.format('%.0f', now + tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, t[1], t[2]}`)

	releaseScript = goredis.NewScript(preamble + check + `
if h[2] ~= ARGV[2] then return {0, t[1], t[2], 'stale-fence'} end
redis.call('HDEL', KEYS[1], 'owner')
return {1, t[1], t[2]}`)

	writeScript = goredis.NewScript(preamble + check + `
if now >= tonumber(h[3]) then return {0, t[1], t[2], 'expired'} end
if h[2] ~= ARGV[2] then return {0, t[1], t[2], 'stale-fence'} end
redis.call('SET', KEYS[2], ARGV[3])
return {1, t[1], t[2]}`)

	readScript = goredis.NewScript(preamble + `
local v = redis.call('GET', KEYS[1])
return {1, t[1], t[2], v}`)
)

// quietLogger drops go-redis's internal log lines (pool dial retries): the
// errors reach the caller anyway, and a report must not be interleaved with
// them. go-redis's logger is process-wide; it is replaced once, on Open.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

var quiet sync.Once

// Backend is a Redis lease client. Safe for concurrent use.
type Backend struct {
	rdb    *goredis.Client
	prefix string
	// closeOnce closes rdb once: in Cleanup (which must close it before it
	// waits) or Close.
	closeOnce sync.Once
	closeErr  error
}

// ClientName is the connection name (go-redis Options.ClientName) of the
// clients of one prefix, by which CleanupClient knows their connections:
// the prefix, with anything CLIENT SETNAME refuses (spaces, newlines)
// replaced.
func ClientName(prefix string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' {
			return '_'
		}
		return r
	}, "leasecheck/"+prefix)
}

// Open connects to the server at url (redis://[user:password@]host:port[/db]);
// a non-empty addr replaces the URL's host:port (the runner's proxy). The
// connection is checked with PING and TIME before Open returns.
func Open(ctx context.Context, url, addr, prefix string) (*Backend, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis: bad URL: %w", err)
	}
	if addr != "" {
		opts.Addr = addr
	}
	quiet.Do(func() { goredis.SetLogger(quietLogger{}) })
	opts.MaxRetries = -1 // a retried script could apply twice
	opts.DialTimeout = 2 * time.Second
	opts.ReadTimeout = 2 * time.Second
	opts.WriteTimeout = 2 * time.Second
	opts.ContextTimeoutEnabled = true
	opts.PoolSize = 4
	opts.Protocol = 2
	opts.DisableIdentity = true
	opts.ClientName = ClientName(prefix)
	rdb := goredis.NewClient(opts)
	b := &Backend{rdb: rdb, prefix: prefix}
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis: PING: %w", err)
	}
	if _, err := b.ServerNow(ctx); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis: TIME: %w", err)
	}
	return b, nil
}

// ServerNow is the server's TIME.
func (b *Backend) ServerNow(ctx context.Context) (time.Time, error) {
	return b.rdb.Time(ctx).Result()
}

func (b *Backend) k(kind, key string) string { return b.prefix + kind + ":" + key }

// Do runs one operation as one script.
func (b *Backend) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	lease := b.k("lease", req.Key)
	us := strconv.FormatInt(req.TTL.Microseconds(), 10)
	bs := strconv.FormatInt(backstop.Milliseconds(), 10)
	f := strconv.FormatInt(req.Fence, 10)
	var v any
	var err error
	switch req.Kind {
	case model.Acquire:
		v, err = acquireScript.Run(ctx, b.rdb, []string{lease, b.k("fence", req.Key)}, req.Owner, us, bs).Result()
	case model.Renew:
		v, err = renewScript.Run(ctx, b.rdb, []string{lease}, req.Owner, f, us, bs).Result()
	case model.Release:
		v, err = releaseScript.Run(ctx, b.rdb, []string{lease}, req.Owner, f).Result()
	case model.Write:
		v, err = writeScript.Run(ctx, b.rdb, []string{lease, b.k("data", req.Key)}, req.Owner, f, req.Value).Result()
	case model.Read:
		v, err = readScript.Run(ctx, b.rdb, []string{b.k("data", req.Key)}).Result()
	default:
		return backend.Response{}, errors.New("redis: unknown op " + req.Kind.String())
	}
	if err != nil {
		return backend.Response{}, err
	}
	return parse(req.Kind, v)
}

// parse reads a script's reply {ok, sec, usec, extra}. Anything else is a
// garbage answer: an error (outcome unknown), never a guess.
func parse(kind model.Kind, v any) (backend.Response, error) {
	a, ok := v.([]any)
	if !ok || len(a) < 3 {
		return backend.Response{}, fmt.Errorf("redis: unexpected reply %v", v)
	}
	okv, ok1 := a[0].(int64)
	sec, err1 := strconv.ParseInt(fmt.Sprint(a[1]), 10, 64)
	usec, err2 := strconv.ParseInt(fmt.Sprint(a[2]), 10, 64)
	if !ok1 || err1 != nil || err2 != nil {
		return backend.Response{}, fmt.Errorf("redis: unexpected reply %v", v)
	}
	r := backend.Response{OK: okv == 1, At: time.Unix(sec, usec*1000)}
	var extra any
	if len(a) > 3 {
		extra = a[3]
	}
	switch {
	case kind == model.Read:
		if s, ok := extra.(string); ok {
			r.Value, r.HasValue = s, true
		}
	case !r.OK:
		r.Reason, _ = extra.(string)
	case kind == model.Acquire:
		f, ok := extra.(int64)
		if !ok || f < 1 {
			return backend.Response{}, fmt.Errorf("redis: acquire granted no fence: %v", v)
		}
		r.Fence = f
	}
	return r, nil
}

// cleanupWait bounds how long Cleanup waits for the server to finish with
// the closed connections when its context has no deadline.
const cleanupWait = 10 * time.Second

// Cleanup deletes every key under the prefix, once nothing can write there
// any more. Commands on different connections are not ordered: a write
// whose client gave up (a timeout) may still sit in its connection's
// buffers, on the server or in a slow network, and a DEL sent on another
// connection could run first and leave that write's key behind. So Cleanup
// first closes this Backend's connections (it is not usable afterwards;
// Close is then a no-op), waits until the server has dropped every
// connection of this prefix's clients (CLIENT LIST, by name) — by then
// every command they carried has been applied — and only then deletes,
// through a connection of its own. Backends of the same prefix opened
// elsewhere must be closed first, as the runner and the conformance suite
// do. When the server lists no connection names (CLIENT LIST refused), it
// deletes anyway and says so.
func (b *Backend) Cleanup(ctx context.Context) error {
	b.closeOnce.Do(func() { b.closeErr = CleanupClient(ctx, b.rdb, b.prefix) })
	return b.closeErr
}

// CleanupClient is Cleanup for any go-redis client whose connections are
// named (Options.ClientName, unique to the prefix): it closes rdb, waits
// until the server has dropped every connection of that name, and deletes
// every key under prefix through a connection of its own.
// examples/redislock, a module outside leasecheck, does the same with code
// of its own.
func CleanupClient(ctx context.Context, rdb *goredis.Client, prefix string) error {
	opts := *rdb.Options()
	name := opts.ClientName
	rdb.Close()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cleanupWait)
		defer cancel()
	}
	opts.ClientName = "" // not one of the connections waited for
	admin := goredis.NewClient(&opts)
	defer admin.Close()
	var waitErr error
	if name == "" {
		waitErr = errors.New("redis: cleanup: the client's connections have no name (Options.ClientName): late writes cannot be waited for; deleted what was there")
	} else {
		waitErr = waitGone(ctx, admin, name)
	}
	if err := deletePrefix(ctx, admin, prefix); err != nil {
		return err
	}
	return waitErr
}

// waitGone waits until the server lists no connection named name.
func waitGone(ctx context.Context, admin *goredis.Client, name string) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		list, err := admin.ClientList(ctx).Result()
		if err != nil {
			return fmt.Errorf("redis: cleanup: cannot tell whether late writes are still on the way (CLIENT LIST: %w); deleted what was there", err)
		}
		open := 0
		for _, line := range strings.Split(list, "\n") {
			for _, f := range strings.Fields(line) {
				if f == "name="+name {
					open++
				}
			}
		}
		if open == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redis: cleanup: %d connection(s) of prefix %q still open on the server: a command on them may still write after this cleanup", open, name)
		case <-tick.C:
		}
	}
}

// DeletePrefix deletes every key under the prefix (SCAN + DEL) now, with no
// wait for commands in flight: Cleanup is the one that waits.
func (b *Backend) DeletePrefix(ctx context.Context) error { return deletePrefix(ctx, b.rdb, b.prefix) }

func deletePrefix(ctx context.Context, rdb *goredis.Client, prefix string) error {
	iter := rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
	var ks []string
	for iter.Next(ctx) {
		ks = append(ks, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(ks) == 0 {
		return nil
	}
	return rdb.Del(ctx, ks...).Err()
}

// Close closes the connections; after Cleanup (which closed them) it does
// nothing.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() { b.closeErr = b.rdb.Close() })
	return nil
}

// Addr returns the host:port of a redis:// URL.
func Addr(url string) (string, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return "", err
	}
	return opts.Addr, nil
}
