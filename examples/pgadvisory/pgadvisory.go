// Package pgadvisory is PostgreSQL's session advisory lock as Go services
// hold it with github.com/jackc/pgx/v5: pg_try_advisory_lock on a
// connection kept for as long as the lock is held, pg_advisory_unlock to
// let go. It is the adapter docs/findings/postgres-advisory-locks.md
// analyses, in two configurations:
//
//   - Default, as people write it: the lock is taken on a connection the
//     pool lends (pgxpool.Pool.Acquire, kept until the unlock), the server
//     has no timeout of its own, and the work — the protected write — goes
//     through the pool like any other query. Asking whether the lock is
//     still held is a Ping on the lock's connection (Do(renew)). The lock
//     lasts as long as the session, so it has no TTL on the server:
//     Info.ExpiryLateness is an hour ("held until the session ends").
//   - Hardened, the detection people add: a dedicated *pgx.Conn
//     (pgx.Connect) whose session sets idle_session_timeout to the TTL, so
//     the server ends a frozen or cut-off holder's session — and frees its
//     lock — a TTL after its last statement; a heartbeat goroutine pings it
//     every TTL/3 and cancels the lock's context when a ping fails
//     (backend.Holding: Signal, Observe); the protected write goes through
//     the lock's own session, so it runs only while the session — the lock
//     — is alive. pgx closes a connection whose statement's context ends
//     before the answer (a ping that timed out, a write given up), and
//     with it the session and the lock: the library has let go, so it
//     says so (Observe: a Renewal with Release, dated when the context
//     ended) and cancels the lock's context.
//
// The promise (PostgreSQL 15, §13.3.5 Advisory Locks): "Once acquired at
// session level, an advisory lock is held until explicitly released or the
// session ends." pg_try_advisory_lock "will either obtain the lock
// immediately and return true, or return false without waiting if the lock
// cannot be acquired immediately". Nothing in it is a lease: when the session ends
// — the server restarted, the connection reset, the backend terminated —
// the lock is gone at once, and the holder is not told until it next uses
// that connection.
package pgadvisory

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// heldForever is the default configuration's expiry lateness: a session
// lock has no TTL on the server, it is held until the session ends.
const heldForever = time.Hour

// idleSlack is how late past idle_session_timeout the server ends an idle
// session (its timer, and a loaded machine's scheduling).
const idleSlack = 500 * time.Millisecond

// expiryLateness is how late after a TTL past its last renewal the
// hardened configuration's lock may still be held: idle_session_timeout
// counts from the session's last statement, and a write on the lock's
// session is one too — up to a heartbeat interval (TTL/3) after the last
// renewal, when the client stops (a pause, a crash) right after it.
func expiryLateness(ttl time.Duration) time.Duration { return ttl/3 + idleSlack }

// Info describes the configuration at ttl (the TTL verify runs at: the
// hardened heartbeat's interval and loss lateness are counted from it).
func Info(hardened bool, ttl time.Duration) backend.Info {
	if !hardened {
		return backend.Info{
			Name:           "pg-advisory",
			Fences:         backend.NoFences,
			Writes:         backend.UncheckedWrites,
			FenceSource:    "none: an advisory lock grants no token",
			FencedWrite:    "none: the write goes through the pool, like any other query of the service",
			ExpiryLateness: heldForever,
			EndsWithClient: true,
		}
	}
	return backend.Info{
		Name:           "pg-advisory-hardened",
		Fences:         backend.NoFences,
		Writes:         backend.CheckedWrites,
		FenceSource:    "none: an advisory lock grants no token",
		FencedWrite:    "on the lock's own session: it runs only while the session, and so the lock, is alive",
		ExpiryLateness: expiryLateness(ttl),
		EndsWithClient: true,
		LossLateness:   2 * ttl / 3, // the heartbeat's interval plus its timeout
		RenewInterval:  ttl / 3,
	}
}

// Client is one service's locks and its pool, a backend.Backend (with
// backend.Holding when hardened).
type Client struct {
	pool     *pgxpool.Pool
	connCfg  *pgx.ConnConfig
	schema   string // quoted
	ns       string // the lock keys' namespace (the run's prefix)
	hardened bool
	// silentEnd plants the bug the tests must catch: the library ends the
	// lock's session without saying so and goes on as the holder.
	silentEnd bool
	done      context.Context
	stop      context.CancelFunc

	mu        sync.Mutex
	holds     map[[2]string]*hold
	observers []func(backend.Renewal)
}

// hold is one granted lock and the session that holds it.
type hold struct {
	key, owner string
	pooled     *pgxpool.Conn // default: the pool's connection, kept
	conn       *pgx.Conn     // the session (pooled.Conn() by default)
	ttl        time.Duration
	mu         sync.Mutex // one statement at a time on the session
	lost       chan struct{}
	once       sync.Once
	cancel     context.CancelFunc
	// cancelled is when (UnixNano) the running statement's context ended,
	// 0 if it has not: pgx then closes the connection (below).
	cancelled atomic.Int64
	letGo     sync.Once
}

func (h *hold) signalLost() { h.once.Do(func() { close(h.lost) }) }

// exec runs one statement on the lock's session. pgx closes a connection
// whose statement's context ends before the answer (it cannot tell how
// far the server got), and one whose socket fails; either ends the
// session, and the lock with it once the server sees the socket close.
// end is then the earliest instant that close can have reached the
// server: when the context ended (stamped by the connection's context
// watcher before pgx cuts the socket), else now (the socket failed by
// itself and the server may have ended the session first: nothing the
// library did).
func (h *hold) exec(fn func() error) (end time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn.IsClosed() {
		return time.Time{}, errClosed
	}
	h.cancelled.Store(0)
	err = fn()
	if err != nil && h.conn.IsClosed() {
		end = time.Now()
		if at := h.cancelled.Load(); at != 0 {
			end = time.Unix(0, at)
		}
	}
	return end, err
}

// stamper is the lock's session's context watcher: pgx's own (it cuts the
// socket when a statement's context ends), which first notes when.
type stamper struct {
	h     *hold
	inner ctxwatch.Handler
}

func (s stamper) HandleCancel(ctx context.Context) {
	s.h.cancelled.CompareAndSwap(0, time.Now().UnixNano())
	s.inner.HandleCancel(ctx)
}

func (s stamper) HandleUnwatchAfterCancel() { s.inner.HandleUnwatchAfterCancel() }

// Open connects to url (postgres://...), its host:port replaced by addr
// when addr is not empty (verify's proxy), and makes the run's schema.
func Open(ctx context.Context, url, addr, prefix string, hardened bool) (*Client, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("pgadvisory: bad URL (details withheld: it may hold a password)")
	}
	if addr != "" {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("pgadvisory: bad address %q: %w", addr, err)
		}
		p, _ := strconv.Atoi(port)
		cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Fallbacks = host, uint16(p), nil
	}
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgadvisory: %w", err)
	}
	done, stop := context.WithCancel(context.Background())
	c := &Client{pool: pool, connCfg: cfg.ConnConfig, schema: pgx.Identifier{"pgadvisory_" + sanitize(prefix)}.Sanitize(),
		ns: prefix, hardened: hardened, done: done, stop: stop, holds: map[[2]string]*hold{}}
	if err := c.setup(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("pgadvisory: %w", err)
	}
	return c, nil
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func (c *Client) setup(ctx context.Context) error {
	tx, err := c.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	// One client creates the schema at a time.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, c.schema); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+c.schema+"; CREATE TABLE IF NOT EXISTS "+c.schema+".data (k text PRIMARY KEY, v text)"); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// lockID is the advisory lock's bigint key for a lease key.
const lockID = `hashtextextended($1, 0)`

func (c *Client) hold(key, owner string) *hold {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holds[[2]string{key, owner}]
}

// Do implements backend.Backend.
func (c *Client) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	switch req.Kind {
	case model.Acquire:
		return c.acquire(ctx, req)
	case model.Renew:
		h := c.hold(req.Key, req.Owner)
		if h == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		if err := c.ping(ctx, h); err != nil {
			c.endedSession(h, ended(err))
			if gone(err) {
				return backend.Response{Reason: machine.ReasonExpired}, nil
			}
			return backend.Response{}, err
		}
		return backend.Response{OK: true, TTL: h.ttl}, nil
	case model.Release:
		h := c.hold(req.Key, req.Owner)
		if h == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		var ok bool
		// A release that ends the session (its context ended first) is
		// this release: its own outcome, unknown, says so.
		_, err := h.exec(func() error {
			return h.conn.QueryRow(ctx, `SELECT pg_advisory_unlock(`+lockID+`)`, c.ns+"/"+req.Key).Scan(&ok)
		})
		c.drop(req.Key, req.Owner, h)
		switch {
		case err == nil && ok:
			return backend.Response{OK: true}, nil
		case err == nil || gone(err):
			// false: this session did not hold it (a WARNING on the
			// server); gone: the session, and the lock with it, ended.
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		return backend.Response{}, err
	case model.Write:
		up := `INSERT INTO ` + c.schema + `.data(k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v`
		if !c.hardened {
			// The service's work goes through its pool, as every other
			// query does: nothing ties it to the lock's session.
			if _, err := c.pool.Exec(ctx, up, req.Key, req.Value); err != nil {
				return backend.Response{}, err
			}
			return backend.Response{OK: true}, nil
		}
		h := c.hold(req.Key, req.Owner)
		if h == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		end, err := h.exec(func() error {
			_, err := h.conn.Exec(ctx, up, req.Key, req.Value)
			return err
		})
		c.endedSession(h, end)
		if err != nil {
			if gone(err) {
				return backend.Response{Reason: machine.ReasonExpired}, nil
			}
			return backend.Response{}, err
		}
		return backend.Response{OK: true}, nil
	case model.Read:
		var v *string
		err := c.pool.QueryRow(ctx, `SELECT (SELECT v FROM `+c.schema+`.data WHERE k = $1)`, req.Key).Scan(&v)
		if err != nil {
			return backend.Response{}, err
		}
		r := backend.Response{OK: true}
		if v != nil {
			r.Value, r.HasValue = *v, true
		}
		return r, nil
	}
	return backend.Response{}, errors.New("pgadvisory: unknown op " + req.Kind.String())
}

// gone reports whether err says for certain that the session, and the
// lock with it, has ended on the server, before it ran the statement: the
// server said so. Anything else — a timeout, a reset, a connection this
// client closed itself — leaves the session's fate unknown: the server
// may not have noticed yet, and the lock may still be held.
func gone(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P05", // idle_session_timeout: the session ended while idle
			"57P01", "57P02", "57P03": // admin shutdown, crash shutdown, cannot connect now
			return true
		}
	}
	return false
}

// errClosed: the lock's connection was closed by this client (its
// heartbeat gave up on it); the server may still hold the session.
var errClosed = errors.New("pgadvisory: the lock's connection is closed")

// ping asks the lock's session whether it is alive; an error is a
// *sessionEnd when the ping ended the session (see exec).
func (c *Client) ping(ctx context.Context, h *hold) error {
	end, err := h.exec(func() error { return h.conn.Ping(ctx) })
	if !end.IsZero() {
		return &sessionEnd{err: err, at: end}
	}
	return err
}

// sessionEnd is a statement's error that ended the lock's session.
type sessionEnd struct {
	err error
	at  time.Time
}

func (e *sessionEnd) Error() string { return e.err.Error() }
func (e *sessionEnd) Unwrap() error { return e.err }

// ended is when err's statement ended the lock's session, zero if it did not.
func ended(err error) time.Time {
	var e *sessionEnd
	if errors.As(err, &e) {
		return e.at
	}
	return time.Time{}
}

// endedSession reports that the library ended h's session at `at` (zero:
// it did not): the lock goes when the server sees the socket close, at an
// instant the server reports to no one — a release of the owner's own,
// unanswered (backend.Renewal.Release) — and the lock's context is
// cancelled, for the library knows it let go. Once per session.
func (c *Client) endedSession(h *hold, at time.Time) {
	if at.IsZero() || !c.hardened || c.silentEnd {
		return
	}
	h.letGo.Do(func() {
		c.renewed(backend.Renewal{Key: h.key, Owner: h.owner, Start: at, End: at, Release: true})
		h.signalLost()
	})
}

func (c *Client) acquire(ctx context.Context, req backend.Request) (backend.Response, error) {
	h := &hold{key: req.Key, owner: req.Owner, ttl: req.TTL, lost: make(chan struct{})}
	if c.hardened {
		cfg := c.connCfg.Copy()
		cfg.RuntimeParams["idle_session_timeout"] = strconv.FormatInt(req.TTL.Milliseconds(), 10)
		cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
			return stamper{h: h, inner: &pgconn.DeadlineContextWatcherHandler{Conn: pc.Conn()}}
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return backend.Response{}, err
		}
		h.conn = conn
	} else {
		pc, err := c.pool.Acquire(ctx)
		if err != nil {
			return backend.Response{}, err
		}
		h.pooled, h.conn = pc, pc.Conn()
	}
	var ok bool
	end, err := h.exec(func() error {
		return h.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+lockID+`)`, c.ns+"/"+req.Key).Scan(&ok)
	})
	if err != nil {
		// The outcome is unknown: the session ends with the connection,
		// and the lock with it if it was granted — a release of the
		// owner's, unless the owner already holds the key on another
		// session (then this one was granted nothing).
		if end.IsZero() {
			end = time.Now()
		}
		if c.hold(req.Key, req.Owner) == nil {
			c.endedSession(h, end)
		}
		h.close()
		return backend.Response{}, err
	}
	if !ok {
		h.close()
		return backend.Response{Reason: machine.ReasonHeld}, nil
	}
	c.mu.Lock()
	old := c.holds[[2]string{req.Key, req.Owner}]
	c.holds[[2]string{req.Key, req.Owner}] = h
	c.mu.Unlock()
	if old != nil {
		old.close()
	}
	if c.hardened {
		hctx, cancel := context.WithCancel(c.done)
		h.cancel = cancel
		go c.heartbeat(hctx, req.Key, req.Owner, h)
	}
	return backend.Response{OK: true, TTL: req.TTL}, nil
}

// heartbeat pings the lock's session every TTL/3, each ping given TTL/3
// to answer; the first that fails cancels the lock (the service stops its
// work on it) and closes the session.
func (c *Client) heartbeat(ctx context.Context, key, owner string, h *hold) {
	every := h.ttl / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, every)
		start := time.Now()
		err := c.ping(pctx, h)
		cancel()
		if ctx.Err() != nil {
			return // released meanwhile
		}
		if errors.Is(err, errClosed) {
			return // the session was ended already, and said so; nothing was sent
		}
		c.renewed(backend.Renewal{Key: key, Owner: owner, Start: start, End: time.Now(), Answered: err == nil || gone(err), OK: err == nil, TTL: h.ttl})
		if err != nil {
			// The library gives the lock up: it ends the session (pgx did
			// already if the ping timed out), which frees the lock once
			// the server sees the socket close.
			at := ended(err)
			if at.IsZero() {
				at = time.Now()
				go func() {
					h.mu.Lock()
					defer h.mu.Unlock()
					h.conn.Close(context.Background())
				}()
			}
			c.endedSession(h, at)
			if !c.silentEnd {
				h.signalLost()
			}
			return
		}
	}
}

func (c *Client) renewed(r backend.Renewal) {
	c.mu.Lock()
	obs := append([]func(backend.Renewal){}, c.observers...)
	c.mu.Unlock()
	for _, fn := range obs {
		fn(r)
	}
}

func (c *Client) drop(key, owner string, h *hold) {
	c.mu.Lock()
	if c.holds[[2]string{key, owner}] == h {
		delete(c.holds, [2]string{key, owner})
	}
	c.mu.Unlock()
	h.close()
}

// close ends the hold: a pooled connection goes back to the pool (its
// session, unlocked or not, lives on: the pool's to keep), a dedicated one
// is closed.
func (h *hold) close() {
	if h.cancel != nil {
		h.cancel()
	}
	if h.pooled != nil {
		h.pooled.Release()
		return
	}
	go h.conn.Close(context.Background())
}

// Hardened is the hardened configuration's Client: its heartbeat is a
// library that holds while it says so (backend.Holding). The default
// configuration has no signal, as the code it stands for has none.
type Hardened struct{ *Client }

// Signal implements backend.Holding: the lock's context, cancelled by the
// first failed heartbeat.
func (h Hardened) Signal(key, owner string) <-chan struct{} {
	if hd := h.hold(key, owner); hd != nil {
		return hd.lost
	}
	return nil
}

// Observe implements backend.Holding: every heartbeat ping.
func (h Hardened) Observe(fn func(backend.Renewal)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.observers = append(h.observers, fn)
}

// Cleanup drops the run's schema.
func (c *Client) Cleanup(ctx context.Context) error {
	_, err := c.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+c.schema+" CASCADE")
	return err
}

// Close ends every session, and the locks with them.
func (c *Client) Close() error {
	c.stop()
	c.mu.Lock()
	holds := c.holds
	c.holds = map[[2]string]*hold{}
	c.mu.Unlock()
	for _, h := range holds {
		if h.pooled != nil {
			h.pooled.Release()
		} else {
			h.conn.Close(context.Background())
		}
	}
	c.pool.Close()
	return nil
}
