package zookeeper

// Lock ("zk-lock") is go-zookeeper's own lock recipe as its users run it:
// zk.Connect with a session timeout (the library pings the server every
// third of it in the background, and reconnects), zk.NewLock on it, Lock
// and Unlock. It is a library that holds while it says so
// (backend.Holding, backend.Stopper): the session is the lease, and the
// library renews it by itself.
//
// # The promise, from the library's documentation (github.com/go-zookeeper/zk)
//
//   - NewLock: "creates a new lock instance using the provided connection,
//     path, and acl. The path must be a node that is only used by this
//     lock." LockWithData "will wait to return until the lock is acquired
//     or an error occurs": it creates an ephemeral sequential node
//     (protected: "_c_<guid>-lock-SEQ") and holds when its node is the
//     lowest. The node is ephemeral, so the lock lasts as long as the
//     session: ZooKeeper deletes it when the session expires.
//   - The session's state reaches the user as events: StateDisconnected
//     when the connection is lost (the library gives up on a connection
//     that has said nothing for two thirds of the session timeout, pinging
//     every third), StateHasSession when it is back within the session,
//     StateExpired when the server says the session is gone. The library
//     learns of an expiry only when it reaches the server again
//     (ZooKeeper's programmer's guide: a disconnected client "will not be
//     notified of session expiration until it reconnects"); after a
//     reconnect that finds the session expired, it says so at once.
//
// # The loss signal
//
// A disconnected holder cannot know whether its session lives, so the
// correct recipe (Apache Curator's standard ConnectionStateErrorPolicy,
// which takes SUSPENDED, its disconnection, for an error state) stops
// acting as the holder at StateDisconnected: "zk-lock" signals the loss
// then. A connection is given up two thirds of a session timeout after
// its last reply, before the server can expire the session (a full
// timeout after it last heard from the client), so the signal comes
// before the loss. The adapter then gives the lock up: it writes and
// renews no more (a renew or write asked after the signal is not sent,
// the outcome unknown), and if the library gets the session back it
// deletes the lock node, as Curator's release does, so that others are
// not blocked by a session that lives on (the node is deleted no sooner
// than the last renewal anyone recorded plus the TTL: the history's
// lease, which knows nothing of the library's reconnect, ends there),
// then closes the session. An expiry it learns closes the session.
//
// LockOnExpiry ("zk-lock-expiry") is the naive use: the loss signalled
// at StateExpired only. Under a partition that comes only after the
// partition heals (the reconnect loop waits a second once it has tried
// every server), long after the server expired the session and granted
// the lock to another: loss-signal catches it.
//
// Nothing in it fences a holder's writes: a holder paused past its session
// timeout writes as a holder when it resumes. That is the documented
// hazard of a lock without fencing; "zk-lock-unfenced" writes with a plain
// setData and the checker catches it. "zk-lock" fences the write with the
// token the recipe gives, the lock node itself (its sequence number is the
// fence): multi(check(the lock node), setData), which ZooKeeper applies
// only while the node — the session, the lock — is there.
//
// # The mapping
//
//	contract  library
//	acquire   zk.Connect (timeout TTL, a session of the grant's own); Children of the lock path: a node
//	          exists: refused ("held"); else NewLock + LockWithData(owner): held, fence = the lowest
//	          node's sequence + 1, the node found by its ephemeral owner (our session); cut short by the
//	          deadline: the session is closed (its node goes with it), the outcome unknown
//	renew     Exists(the lock node) on the session (any request renews a session), answered by the server
//	release   Unlock (Delete of the node; no node: unknown, the session expired), then Close
//	write     fenced: multi(check(node), setData(P/data/K)) on the lock's session; unfenced: setData
//	          on the process's data session
//	signal    the session's StateDisconnected or StateExpired event (zk-lock); StateExpired only
//	          (zk-lock-expiry)
//	give up   after the signal: renew and write answer unknown, unsent; the session back: Unlock once the
//	          recorded lease is over, then Close; expired: Close
//	renewals  every ping the library sends and the server answers, read off the connection (Observe)
//	stop      the connection's reads and writes wait (Stopper); over verify's proxy it is frozen too

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// LockLossLateness is how late the recipe may say a lost session is lost:
// the reconnect loop's second, and a reconnect's round trip on a loaded
// machine. The same bound for both signals: the one on disconnection
// comes before the loss, the one on expiry after a partition heals.
const LockLossLateness = 1500 * time.Millisecond

// LockSignal is which of the library's session events the adapter takes
// for the loss of the lock.
type LockSignal int

const (
	// LockOnDisconnect: StateDisconnected (or StateExpired), Curator's
	// standard policy; the lock is then given up ("zk-lock").
	LockOnDisconnect LockSignal = iota
	// LockOnExpiry: StateExpired only, which a partitioned client hears
	// only once it reconnects ("zk-lock-expiry").
	LockOnExpiry
)

// LockInfo describes Lock: fenced (multi: check the lock node, setData) or
// not (a plain setData), its loss signalled as sig says.
func LockInfo(fenced bool, sig LockSignal) backend.Info {
	i := info(fenced, Uncertainty, 0)
	i.Name = "zk-lock"
	i.FenceSource = "the lock node's sequence number + 1 (zk.NewLock's _c_<guid>-lock-SEQ, ephemeral sequential)"
	i.FencedWrite = "multi: check(the lock node), setData(P/data/K)"
	if !fenced {
		i.Name = "zk-lock-unfenced"
		i.FencedWrite = "none: a plain setData(P/data/K) by the holder"
	}
	if sig == LockOnExpiry {
		i.Name += "-expiry"
	}
	i.LossLateness = LockLossLateness
	return i
}

// errGivenUp answers a renew or write asked after the loss signal: the
// recipe acts as the holder no more, so nothing was sent.
var errGivenUp = errors.New("zk-lock: the library was disconnected (the lock may be lost): not sent, the holder gave the lock up")

// Lock is go-zookeeper's lock recipe as a backend.Backend with
// backend.Holding and backend.Stopper.
type Lock struct {
	b      *Backend // the data session: setup, reads, cleanup
	fenced bool
	sig    LockSignal
	done   context.Context // ends with Close
	close  context.CancelFunc

	mu        sync.Mutex
	gates     map[string]*backend.Gate
	holds     map[[2]string]*lockHold
	observers []func(backend.Renewal)
}

type lockHold struct {
	key, owner string
	conn       *zk.Conn
	lock       *zk.Lock
	node       string
	fence      int64
	ttl        time.Duration
	lost       chan struct{} // the loss signal
	expired    chan struct{} // the library said the session expired
	back       chan struct{} // the library has a session again (after a disconnection)
	ended      chan struct{} // released or closed by the adapter
	held       atomic.Bool   // set once granted: its pings are renewals
	sid        int64         // the granted session
	// lastStart is the latest start (unix ns) of the hold's grant or
	// renewals as the history has them: the lease it records ends a TTL
	// after it.
	lastStart atomic.Int64

	lostOnce, expOnce, endOnce sync.Once
	mu                         sync.Mutex
	unlocked                   bool // the adapter deleted the lock node
}

func (h *lockHold) renewedAt(t time.Time) {
	for {
		old := h.lastStart.Load()
		if t.UnixNano() <= old || h.lastStart.CompareAndSwap(old, t.UnixNano()) {
			return
		}
	}
}

// end marks the hold ended by the adapter (a release, a give-up, Close)
// and closes its session.
func (h *lockHold) end() {
	h.endOnce.Do(func() { close(h.ended) })
	h.conn.Close()
}

// unlock deletes the lock node once (the library's Unlock), for a release
// and for a give-up, whichever comes first; zk.ErrNoNode once it is
// deleted.
func (h *lockHold) unlock() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.unlocked {
		return zk.ErrNoNode
	}
	err := h.lock.Unlock()
	if err == nil {
		h.unlocked = true
	}
	return err
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// OpenLock connects to the ZooKeeper at addr; znodes live under root.
func OpenLock(ctx context.Context, addr, root string, fenced bool, sig LockSignal) (*Lock, error) {
	b, err := open(ctx, addr, root, fenced)
	if err != nil {
		return nil, err
	}
	done, cancel := context.WithCancel(context.Background())
	return &Lock{b: b, fenced: fenced, sig: sig, done: done, close: cancel, gates: map[string]*backend.Gate{}, holds: map[[2]string]*lockHold{}}, nil
}

func (l *Lock) gate(owner string) *backend.Gate {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.gates[owner]
	if g == nil {
		g = &backend.Gate{}
		l.gates[owner] = g
	}
	return g
}

func (l *Lock) lockPath(key string) string { return l.b.root + "/zklock/" + escape(key) }

func (l *Lock) hold(key, owner string) *lockHold {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holds[[2]string{key, owner}]
}

func (l *Lock) renewed(r backend.Renewal) {
	l.mu.Lock()
	obs := append([]func(backend.Renewal){}, l.observers...)
	l.mu.Unlock()
	for _, fn := range obs {
		fn(r)
	}
}

// Do implements backend.Backend.
func (l *Lock) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	switch req.Kind {
	case model.Acquire:
		return l.acquire(ctx, req)
	case model.Renew:
		h := l.hold(req.Key, req.Owner)
		if h == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		if req.Fence != 0 && req.Fence != h.fence {
			return backend.Response{Reason: machine.ReasonStaleFence}, nil
		}
		if l.gone(ctx, h) {
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		if l.givenUp(h) {
			return backend.Response{}, errGivenUp
		}
		h.renewedAt(time.Now())
		ok, err := call(ctx, func() (bool, error) {
			ok, _, err := h.conn.Exists(h.node)
			return ok, err
		})
		if errors.Is(err, zk.ErrSessionExpired) || err == nil && !ok || err != nil && l.gone(ctx, h) {
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true, TTL: h.ttl}, nil
	case model.Release:
		h := l.hold(req.Key, req.Owner)
		if h == nil || req.Fence != 0 && req.Fence != h.fence {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		_, err := call(ctx, func() (struct{}, error) { return struct{}{}, h.unlock() })
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return backend.Response{}, err
		}
		l.mu.Lock()
		delete(l.holds, [2]string{req.Key, req.Owner})
		l.mu.Unlock()
		go h.end()
		if err != nil {
			// The node is gone: the session expired (and perhaps someone
			// holds since): the release may count either way.
			return backend.Response{}, fmt.Errorf("zk-lock: release: the lock node is gone (the session expired, or the holder gave the lock up after a disconnection): outcome unknown")
		}
		return backend.Response{OK: true}, nil
	case model.Write:
		if err := l.b.ensure(ctx, req.Key); err != nil {
			return backend.Response{}, err
		}
		data := l.b.dataPath(req.Key)
		h := l.hold(req.Key, req.Owner)
		if !l.fenced {
			// The process's long-lived connection (the data session): a
			// lock's own session may be in the library's reconnect loop
			// after an expiry, and the hazard is the same either way.
			_, err := call(ctx, func() (*zk.Stat, error) { return l.b.data.conn.Set(data, []byte(req.Value), -1) })
			if err != nil {
				return backend.Response{}, err
			}
			return backend.Response{OK: true}, nil
		}
		if h == nil {
			// Each owner locks through sessions of its own: "no grant of
			// the owner's" is definite.
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		if req.Fence != h.fence {
			return backend.Response{Reason: machine.ReasonStaleFence}, nil
		}
		if l.gone(ctx, h) {
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		if l.givenUp(h) {
			return backend.Response{}, errGivenUp
		}
		_, err := call(ctx, func() ([]zk.MultiResponse, error) {
			return h.conn.Multi(&zk.CheckVersionRequest{Path: h.node, Version: -1}, &zk.SetDataRequest{Path: data, Data: []byte(req.Value), Version: -1})
		})
		switch {
		case err == nil:
			return backend.Response{OK: true}, nil
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired):
			return backend.Response{Reason: machine.ReasonExpired}, nil
		case errors.Is(err, zk.ErrNoServer) && l.gone(ctx, h):
			// Never sent (the library flushed it while reconnecting), and
			// the lock is gone: definitely not applied.
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		return backend.Response{}, err
	case model.Read:
		return l.b.Do(ctx, req)
	}
	return backend.Response{}, errors.New("zk-lock: unknown op " + req.Kind.String())
}

func (l *Lock) acquire(ctx context.Context, req backend.Request) (backend.Response, error) {
	h := &lockHold{key: req.Key, owner: req.Owner, lost: make(chan struct{}), expired: make(chan struct{}),
		back: make(chan struct{}, 1), ended: make(chan struct{})}
	var established = make(chan struct{})
	var estOnce sync.Once
	gate := l.gate(req.Owner)
	var ttl atomic.Int64
	dial := func(network, address string, t time.Duration) (net.Conn, error) {
		// A stopped client dials nothing (a reconnect waits for it, or
		// for the adapter's Close).
		if err := gate.Wait(l.done); err != nil {
			return nil, err
		}
		c, err := net.DialTimeout(network, address, t)
		if err != nil {
			return nil, err
		}
		return newGatedConn(c, gate, &ttl, func(start, end time.Time, answered, ok bool) {
			// Only the granted session's pings renew the lock: after an
			// expiry the library opens a new session on the same Conn.
			// After the loss signal the holder has given the lock up.
			if h.held.Load() && h.conn.SessionID() == h.sid && !isClosed(h.lost) && !isClosed(h.ended) {
				h.renewedAt(start)
				l.renewed(backend.Renewal{Key: h.key, Owner: h.owner, Start: start, End: end, Answered: answered, OK: ok, TTL: time.Duration(ttl.Load())})
			}
		}), nil
	}
	conn, _, err := zk.Connect(strings.Split(l.b.addr, ","), req.TTL, zk.WithDialer(dial), zk.WithLogger(quiet{}), zk.WithLogInfo(false),
		zk.WithEventCallback(func(e zk.Event) {
			if e.Type != zk.EventSession {
				return
			}
			// The callback runs on the library's loop: it must not wait.
			switch e.State {
			case zk.StateHasSession:
				estOnce.Do(func() { close(established) })
				if isClosed(h.lost) {
					select {
					case h.back <- struct{}{}:
					default:
					}
				}
			case zk.StateExpired:
				h.expOnce.Do(func() { close(h.expired) })
				h.lostOnce.Do(func() { close(h.lost) })
			case zk.StateDisconnected:
				if l.sig == LockOnDisconnect && h.held.Load() && !isClosed(h.ended) {
					h.lostOnce.Do(func() {
						close(h.lost)
						go l.giveUp(h)
					})
				}
			}
		}))
	if err != nil {
		return backend.Response{}, fmt.Errorf("zookeeper: %w", err)
	}
	h.conn = conn
	fail := func(err error) (backend.Response, error) {
		go conn.Close()
		return backend.Response{}, err
	}
	select {
	case <-established:
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	h.ttl = time.Duration(ttl.Load())
	path := l.lockPath(req.Key)
	children, err := call(ctx, func() ([]string, error) {
		c, _, err := conn.Children(path)
		return c, err
	})
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fail(err)
	}
	if len(children) > 0 {
		go conn.Close()
		return backend.Response{Reason: machine.ReasonHeld}, nil
	}
	h.lock = zk.NewLock(conn, path, acl)
	if _, err := call(ctx, func() (struct{}, error) { return struct{}{}, h.lock.LockWithData([]byte(req.Owner)) }); err != nil {
		// Someone took a node between Children and Lock and the deadline
		// cut the wait: the node goes with the session.
		return fail(err)
	}
	// The recipe keeps its node's name to itself: ours is the lowest node,
	// the one our session owns.
	children, err = call(ctx, func() ([]string, error) {
		c, _, err := conn.Children(path)
		return c, err
	})
	if err != nil {
		return fail(err)
	}
	for _, c := range children {
		st, err := call(ctx, func() (*zk.Stat, error) {
			_, st, err := conn.Exists(path + "/" + c)
			return st, err
		})
		if err != nil {
			return fail(err)
		}
		if st != nil && st.EphemeralOwner == conn.SessionID() {
			h.node, h.fence = path+"/"+c, seqOf(c)+1
		}
	}
	if h.node == "" {
		// Lock returned, and our node is gone: the session expired since.
		go conn.Close()
		return backend.Response{}, errors.New("zk-lock: the lock node is gone right after Lock returned: outcome unknown")
	}
	h.sid = conn.SessionID()
	h.renewedAt(time.Now())
	h.held.Store(true)
	l.mu.Lock()
	old := l.holds[[2]string{req.Key, req.Owner}]
	l.holds[[2]string{req.Key, req.Owner}] = h
	l.mu.Unlock()
	if old != nil {
		go old.end()
	}
	return backend.Response{OK: true, Fence: h.fence, TTL: h.ttl}, nil
}

// givenUp reports whether the holder has given h up on the library's
// signal of a disconnection.
func (l *Lock) givenUp(h *lockHold) bool { return l.sig == LockOnDisconnect && isClosed(h.lost) }

// giveUp gives h's lock up after the library said its connection was
// lost: if the library gets the session back, the lock node is deleted
// (the session would otherwise hold it for as long as it lives) once the
// lease the history recorded is over — a TTL after the last grant or
// renewal it has, plus a margin for its rounding — and the session
// closed; if the session expired, it is closed.
func (l *Lock) giveUp(h *lockHold) {
	for {
		select {
		case <-l.done.Done():
			return
		case <-h.ended:
			return
		case <-h.expired:
			h.end()
			return
		case <-h.back:
			if h.conn.SessionID() != h.sid {
				continue
			}
		}
		break
	}
	due := time.Unix(0, h.lastStart.Load()).Add(h.ttl + giveUpMargin)
	t := time.NewTimer(time.Until(due))
	defer t.Stop()
	select {
	case <-l.done.Done():
		return
	case <-h.ended:
		return
	case <-h.expired:
	case <-t.C:
		h.unlock()
	}
	h.end()
}

// giveUpMargin is added to the recorded lease's end before a given-up
// lock node is deleted: the history rounds times to the µs and starts a
// renewal no sooner than the previous one returned.
const giveUpMargin = 50 * time.Millisecond

// gone reports whether h's lock node is definitely gone, read on the data
// session after a sync: the library said its session expired, or the node
// (ephemeral: it goes with the session) is not there. A holder's own
// session may sit in the library's reconnect loop, where a request waits
// a second and is then failed; the server's record answers at once.
func (l *Lock) gone(ctx context.Context, h *lockHold) bool {
	if isClosed(h.expired) {
		return true
	}
	if err := l.b.syncData(ctx, l.lockPath(h.key)); err != nil {
		return false
	}
	ok, err := call(ctx, func() (bool, error) {
		ok, _, err := l.b.data.conn.Exists(h.node)
		return ok, err
	})
	return err == nil && !ok
}

// Signal implements backend.Holding: the session's StateDisconnected or
// StateExpired event, or StateExpired alone (LockOnExpiry).
func (l *Lock) Signal(key, owner string) <-chan struct{} {
	if h := l.hold(key, owner); h != nil {
		return h.lost
	}
	return nil
}

// Observe implements backend.Holding.
func (l *Lock) Observe(fn func(backend.Renewal)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.observers = append(l.observers, fn)
}

// StopClient implements backend.Stopper: every connection of owner's
// sessions stops reading and writing (its pings wait).
func (l *Lock) StopClient(owner string) func() { return l.gate(owner).Stop() }

// Cleanup deletes every znode under the root.
func (l *Lock) Cleanup(ctx context.Context) error { return l.b.Cleanup(ctx) }

// Close closes every session (deleting its lock node) and the data
// session.
func (l *Lock) Close() error {
	l.close()
	l.mu.Lock()
	holds := l.holds
	l.holds = map[[2]string]*lockHold{}
	l.mu.Unlock()
	var wg sync.WaitGroup
	for _, h := range holds {
		wg.Add(1)
		go func() { defer wg.Done(); h.end() }()
	}
	wg.Wait()
	return l.b.Close()
}

// gatedConn is a session's connection as the Stopper sees it: reads and
// writes wait while the owner's client is stopped. It reads the protocol's
// frames as they pass: the connect response's negotiated timeout, and
// every ping (xid -2) the library sends and the answer the server gives,
// which is a background renewal of the session.
type gatedConn struct {
	net.Conn
	gate   *backend.Gate
	ttl    *atomic.Int64
	onPing func(start, end time.Time, answered, ok bool)
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	in        []byte
	connected bool
	pings     []time.Time
	// The library's deadlines, and the gate's stopped time when each was set.
	rd, wd         time.Time
	rdStop, wdStop time.Duration
}

func newGatedConn(c net.Conn, g *backend.Gate, ttl *atomic.Int64, onPing func(start, end time.Time, answered, ok bool)) *gatedConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &gatedConn{Conn: c, gate: g, ttl: ttl, onPing: onPing, ctx: ctx, cancel: cancel}
}

const pingXid = -2

func (c *gatedConn) Write(p []byte) (int, error) {
	if err := c.gate.Wait(c.ctx); err != nil {
		return 0, net.ErrClosed
	}
	c.mu.Lock()
	// go-zookeeper writes one whole request per Write: length, xid, op.
	if len(p) >= 8 && int32(binary.BigEndian.Uint32(p[4:8])) == pingXid {
		c.pings = append(c.pings, time.Now())
	}
	if extra := c.gate.Stopped() - c.wdStop; extra > 0 && !c.wd.IsZero() {
		c.wd, c.wdStop = c.wd.Add(extra), c.wdStop+extra
		c.Conn.SetWriteDeadline(c.wd)
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *gatedConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		end := time.Now()
		var ne net.Error
		if n == 0 && errors.As(err, &ne) && ne.Timeout() {
			// The library's read deadline ran while its client was
			// stopped: the stopped time does not count.
			c.mu.Lock()
			extra := c.gate.Stopped() - c.rdStop
			if extra > 0 && !c.rd.IsZero() {
				c.rd, c.rdStop = c.rd.Add(extra), c.rdStop+extra
				c.Conn.SetReadDeadline(c.rd)
				c.mu.Unlock()
				continue
			}
			c.mu.Unlock()
		}
		if n > 0 {
			c.frames(p[:n], end)
		}
		if werr := c.gate.Wait(c.ctx); werr != nil && err == nil {
			return n, net.ErrClosed
		}
		return n, err
	}
}

func (c *gatedConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rd, c.rdStop = t, c.gate.Stopped()
	return c.Conn.SetReadDeadline(t)
}

func (c *gatedConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wd, c.wdStop = t, c.gate.Stopped()
	return c.Conn.SetWriteDeadline(t)
}

func (c *gatedConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// frames parses the server's frames: the connect response first (its
// timeout), then replies (xid, zxid, err).
func (c *gatedConn) frames(b []byte, at time.Time) {
	c.mu.Lock()
	c.in = append(c.in, b...)
	var done []bool
	var starts []time.Time
	for len(c.in) >= 4 {
		n := int(binary.BigEndian.Uint32(c.in[:4]))
		if len(c.in) < 4+n {
			break
		}
		body := c.in[4 : 4+n]
		if !c.connected {
			c.connected = true
			// A reconnect that finds the session expired is granted 0.
			if len(body) >= 8 && int32(binary.BigEndian.Uint32(body[4:8])) > 0 {
				c.ttl.Store(int64(time.Duration(int32(binary.BigEndian.Uint32(body[4:8]))) * time.Millisecond))
			}
		} else if len(body) >= 16 && int32(binary.BigEndian.Uint32(body[:4])) == pingXid && len(c.pings) > 0 {
			// A renewer's renewals must not overlap: when a later ping
			// was sent before this one's answer came (a stop held the
			// answer), the later one, applied after it, stands for both.
			if len(c.pings) == 1 {
				starts = append(starts, c.pings[0])
				done = append(done, int32(binary.BigEndian.Uint32(body[12:16])) == 0)
			}
			c.pings = c.pings[1:]
		}
		c.in = c.in[4+n:]
	}
	c.mu.Unlock()
	for i := range done {
		c.onPing(starts[i], at, true, done[i])
	}
}

// Close closes the connection; a ping still unanswered then (the library
// gave the connection up) may have been applied: it is a renewal with no
// answer, the latest standing for the others.
func (c *gatedConn) Close() error {
	c.cancel()
	c.mu.Lock()
	var last time.Time
	if n := len(c.pings); n > 0 {
		last = c.pings[n-1]
		c.pings = nil
	}
	c.mu.Unlock()
	if !last.IsZero() {
		c.onPing(last, time.Now(), false, false)
	}
	return c.Conn.Close()
}
