package zookeeper

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// session is one ZooKeeper session of the backend: the data session
// (setup, writes, reads, lookups), or one grant's lease session.
//
// A lease session is the lease (package doc), so nothing but the holder's
// own requests may keep it alive:
//
//   - go-zookeeper pings every third of the session timeout, which would
//     renew the lease behind the holder's back (a paused holder's
//     connection is frozen with it, but dropped renewals would not be).
//     The connect response passes through leaseConn, which tells the
//     library the session lasts a day: it then pings once in eight hours.
//     The server keeps the timeout it negotiated, and so does s.ttl.
//   - go-zookeeper reconnects a lost connection and resumes the session
//     on the new one, which also renews it. A lease session dials once;
//     when that connection ends (the server expired the session and closed
//     it, the proxy reset it, the server crashed), the session is lost: it
//     lives on the server until it expires there, untouched.
type session struct {
	conn  *zk.Conn
	lease bool

	ttl         atomic.Int64 // the negotiated timeout (ns), from the connect response
	established chan struct{}
	estOnce     sync.Once
	lost        atomic.Bool // lease session: its one connection ended
	dialErr     atomic.Pointer[error]
	assigned    chan struct{} // closed once conn is set
	closeOnce   sync.Once

	// Set for a grant (immutable once granted).
	key, owner, path string
	fence            int64
}

// libraryTimeout is the session timeout a lease session's client library
// is told: it pings every third of two thirds of it.
const libraryTimeout = 24 * time.Hour

// dialSession connects a new session to addr with the given timeout and
// waits until the server has granted it.
func dialSession(ctx context.Context, addr string, timeout time.Duration, lease bool) (*session, error) {
	s := &session{lease: lease, established: make(chan struct{}), assigned: make(chan struct{})}
	var dials atomic.Int32
	dial := func(network, address string, t time.Duration) (net.Conn, error) {
		if lease && dials.Add(1) > 1 {
			s.lost.Store(true)
			// The library retries at once; a short pause keeps its loop
			// from spinning until the session is closed.
			time.Sleep(100 * time.Millisecond)
			return nil, errNoRedial
		}
		c, err := net.DialTimeout(network, address, t)
		if err != nil {
			s.dialErr.Store(&err)
			return nil, err
		}
		if lease {
			return &leaseConn{Conn: c, s: s}, nil
		}
		return c, nil
	}
	// addr may list an ensemble's servers, comma-separated: the library
	// picks one (a lease session never moves to another: see dial).
	conn, _, err := zk.Connect(strings.Split(addr, ","), timeout, zk.WithDialer(dial), zk.WithLogger(quiet{}), zk.WithLogInfo(false),
		zk.WithEventCallback(s.event))
	if err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	s.conn = conn
	close(s.assigned)
	select {
	case <-s.established:
		return s, nil
	case <-ctx.Done():
		go s.close()
		if e := s.dialErr.Load(); e != nil {
			return nil, fmt.Errorf("zookeeper: no session with %s: %w", addr, *e)
		}
		return nil, fmt.Errorf("zookeeper: no session with %s within the deadline (%w); is it a ZooKeeper server?", addr, ctx.Err())
	}
}

var errNoRedial = errors.New("zookeeper: a lease session does not reconnect")

// event follows the session's state. It runs on the library's goroutines
// and must not block.
func (s *session) event(e zk.Event) {
	if e.Type != zk.EventSession {
		return
	}
	switch e.State {
	case zk.StateHasSession:
		s.estOnce.Do(func() { close(s.established) })
	case zk.StateDisconnected, zk.StateExpired:
		select {
		case <-s.established:
		default:
			return
		}
		if s.lease {
			// Its one connection is gone and will not come back: closing
			// the library's side cannot reach the server any more.
			s.lost.Store(true)
			go s.close()
		}
	}
}

// close closes the session: when its connection is up, the server ends
// the session and deletes its ephemeral nodes. Safe to call many times
// and from any goroutine; the first caller waits for conn.Close (at most
// about three seconds when the server does not answer).
func (s *session) close() {
	<-s.assigned
	s.closeOnce.Do(s.conn.Close)
}

// TTL is the negotiated session timeout.
func (s *session) TTL() time.Duration { return time.Duration(s.ttl.Load()) }

// leaseConn is a lease session's connection: it reads the connect
// response (the first frame the server sends: length, protocolVersion,
// timeOut, sessionId, passwd), records the negotiated timeout and tells
// the library libraryTimeout instead.
type leaseConn struct {
	net.Conn
	s    *session
	buf  []byte
	read bool
}

func (c *leaseConn) Read(p []byte) (int, error) {
	if !c.read {
		var hdr [4]byte
		if _, err := io.ReadFull(c.Conn, hdr[:]); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n < 8 || n > 1<<16 {
			return 0, fmt.Errorf("zookeeper: a connect response of %d bytes", n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.Conn, body); err != nil {
			return 0, err
		}
		ms := int32(binary.BigEndian.Uint32(body[4:8]))
		c.s.ttl.Store(int64(time.Duration(ms) * time.Millisecond))
		binary.BigEndian.PutUint32(body[4:8], uint32(libraryTimeout.Milliseconds()))
		c.buf, c.read = append(hdr[:], body...), true
	}
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// call runs a blocking go-zookeeper request under ctx: go-zookeeper takes
// no context, so the request runs on its own goroutine, and the caller
// returns at ctx's deadline with the outcome unknown (the request may still
// reach the server). The goroutine ends with the request's answer or when
// the session closes.
func call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
