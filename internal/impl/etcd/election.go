package etcd

// Election ("etcd-election") is etcd's own election recipe as its users
// run it: concurrency.NewSession (a lease the client keeps alive in the
// background) and concurrency.NewElection's Campaign, Resign and the
// session's Done. It is a library that holds while it says so
// (backend.Holding, backend.Stopper).
//
// # The promise, from the library's documentation (client/v3/concurrency)
//
//   - Session: "Session represents a lease kept alive for the lifetime of
//     a client." Done "returns a channel that closes when the lease is
//     orphaned, expires, or is otherwise no longer being refreshed." The
//     keepalive is clientv3's lessor: a keepalive every TTL/3, and a
//     deadline of TTL after the last answer; a sweep once a second closes
//     the keepalive channels past their deadline ("waited too long for
//     response; lease may be expired"), and an answer with TTL <= 0 closes
//     it at once. So Done says "lost" at most about a second after the
//     server lost the lease (Info.LossLateness).
//   - Election.Campaign: "Multiple sessions can participate in the election
//     for the same prefix, but only one can be the leader at a time." The
//     leader is the key under the prefix with the lowest create revision,
//     attached to its session's lease; Rev is that create revision.
//
// The same adapter runs concurrency.Mutex on the same session
// ("etcd-session-mutex", OpenSessionMutex): "Mutex implements the sync
// Locker interface with etcd"; TryLock "locks the mutex if not already
// locked by another session"; IsOwner is the compare a caller puts in its
// own Txn to act only while it holds. The mutex's key is the session's
// (prefix/lease-ID), so its Unlock, a plain Delete, deletes no other
// session's key. Only acquire, release and the fenced write's compare
// differ from the election's (the recipe field).
//
// Nothing in it promises that a leader's writes elsewhere are safe after
// its lease expired: a leader paused past its TTL (a GC pause) writes as a
// leader when it resumes, unless the write is fenced. That is the
// documented hazard of every lock without fencing, and of this one
// without the revision: "etcd-election-unfenced" writes with a plain Put
// and the checker catches the stale write. "etcd-election" fences the
// write with the token the library gives, the election key's create
// revision: Txn(If CreateRevision(Key()) == Rev() Then Put).
//
// # The mapping
//
//	contract  library
//	acquire   NewSession(WithTTL) on the owner's own client; Leader: a leader exists: refused ("held");
//	          else Campaign: elected (fence Rev()); Campaign cut short by the deadline: the session is
//	          closed (its key goes with its lease) and the outcome is unknown
//	renew     KeepAliveOnce on the session's lease (the client's own call), answered by the server
//	release   Resign, after a linearizable Get found the key still the grant's (else unknown: Resign
//	          does not say whether it deleted anything), then the session's Close
//	write     fenced: Txn(If CreateRevision(Key()) == Rev() Then Put); unfenced: Put
//	signal    Session.Done()
//	renewals  every LeaseKeepAlive the lessor sends for a held session's lease, seen by a gRPC
//	          stream interceptor on the owner's client (Observe)
//	stop      the same interceptor holds the keepalive stream's sends and answers (Stopper); over
//	          verify's proxy the connection is frozen too

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// ElectionLossLateness is how late Session.Done may say a lost lease is
// lost: the lessor's deadline sweep runs once a second, plus a keepalive's
// round trip on a loaded machine.
const ElectionLossLateness = 1500 * time.Millisecond

// ElectionInfo describes Election: fenced (the revision checked by the
// write) or not (a plain Put).
func ElectionInfo(fenced bool) backend.Info {
	return recipeInfo(electionRecipe, fenced)
}

// SessionMutexInfo describes the Mutex recipe on a background-renewed
// session (OpenSessionMutex): fenced (the library's IsOwner compare) or not.
func SessionMutexInfo(fenced bool) backend.Info {
	return recipeInfo(mutexRecipe, fenced)
}

// recipe is which of the concurrency package's recipes an Election runs on
// its session: they share the session, its keepalives, its Done, and the
// fence (the create revision of the owner's key under the prefix), and
// differ in how the key is taken, given back and compared.
type recipe int

const (
	electionRecipe recipe = iota // Election: Leader, Campaign, Resign
	mutexRecipe                  // Mutex: TryLock, Unlock, IsOwner
)

func recipeInfo(r recipe, fenced bool) backend.Info {
	i := Info()
	i.Name = "etcd-election"
	i.FenceSource = "the election key's create revision (Election.Rev)"
	i.FencedWrite = "Txn: if CreateRevision(Election.Key()) == Election.Rev() then Put(P/data/K)"
	if r == mutexRecipe {
		i.Name = "etcd-session-mutex"
		i.FenceSource = "the Mutex key's create revision (Mutex.Header().Revision after TryLock)"
		i.FencedWrite = "Txn: if Mutex.IsOwner() (CreateRevision(Mutex.Key()) == its revision) then Put(P/data/K)"
	}
	if !fenced {
		i.Name += "-unfenced"
		i.FencedWrite = "none: a plain Put(P/data/K) by the leader"
		i.Writes = backend.UncheckedWrites
	}
	i.LossLateness = ElectionLossLateness
	// The lessor sends a keepalive once TTL/3 has passed since the last
	// answer, checked every 500ms: at the shortest TTL a keepalive every
	// TTL/3 at most; a longer TTL renews less often, so the bound loosens.
	i.RenewInterval = i.MinTTL / 3
	return i
}

// Election is the election recipe as a backend.Backend with
// backend.Holding and backend.Stopper.
type Election struct {
	addr, prefix string
	fenced       bool
	recipe       recipe
	base         *clientv3.Client // reads, cleanup

	mu        sync.Mutex
	clients   map[string]*electionClient // by owner
	holds     map[[2]string]*electionHold
	observers []func(backend.Renewal)
}

type electionClient struct {
	e     *Election
	owner string
	cli   *clientv3.Client
	gate  backend.Gate
}

type electionHold struct {
	key, owner string
	s          *concurrency.Session
	el         *concurrency.Election // the election recipe's
	mu         *concurrency.Mutex    // the mutex recipe's
	fence      int64
	ttl        time.Duration
}

// OpenElection connects to the etcd at addr (comma-separated: a cluster);
// keys live under prefix.
func OpenElection(ctx context.Context, addr, prefix string, fenced bool) (*Election, error) {
	cli, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &Election{addr: addr, prefix: prefix, fenced: fenced, base: cli,
		clients: map[string]*electionClient{}, holds: map[[2]string]*electionHold{}}, nil
}

// OpenSessionMutex is OpenElection running concurrency.Mutex instead of
// the election on the same background-renewed session ("etcd-session-mutex"):
// NewSession(WithTTL), NewMutex, TryLock (ErrLocked: refused "held"),
// Unlock then the session's Close, and the fenced write the package
// offers for it, Txn(If(Mutex.IsOwner())). Unlike "etcd-mutex", whose
// session is orphaned and renewed by explicit requests, this is the Mutex
// as its users run it: the lessor keeps the lease alive by itself and
// Session.Done says when it is lost.
func OpenSessionMutex(ctx context.Context, addr, prefix string, fenced bool) (*Election, error) {
	e, err := OpenElection(ctx, addr, prefix, fenced)
	if err != nil {
		return nil, err
	}
	e.recipe = mutexRecipe
	return e, nil
}

// recipeKey is the hold's key under the recipe's prefix, whose create revision
// is the fence.
func (h *electionHold) recipeKey() string {
	if h.mu != nil {
		return h.mu.Key()
	}
	return h.el.Key()
}

// owns is the compare that holds while the grant does: the library's own
// IsOwner for the Mutex, the same compare on the election's key.
func (h *electionHold) owns() clientv3.Cmp {
	if h.mu != nil {
		return h.mu.IsOwner()
	}
	return clientv3.Compare(clientv3.CreateRevision(h.el.Key()), "=", h.fence)
}

// giveBack is the recipe's own release: Resign, or Unlock (a plain Delete
// of the session's own key, which no other session can hold).
func (h *electionHold) giveBack(ctx context.Context) error {
	if h.mu != nil {
		return h.mu.Unlock(ctx)
	}
	return h.el.Resign(ctx)
}

// ownCall marks the adapter's own requests, which are ops of the history,
// not background renewals.
type ownCall struct{}

func own(ctx context.Context) context.Context { return context.WithValue(ctx, ownCall{}, true) }

// client is owner's own etcd client (each owner is a process of its own:
// its own connection, lessor and keepalive loop).
func (e *Election) client(ctx context.Context, owner string) (*electionClient, error) {
	e.mu.Lock()
	c := e.clients[owner]
	e.mu.Unlock()
	if c != nil {
		return c, nil
	}
	c = &electionClient{e: e, owner: owner}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: strings.Split(e.addr, ","), DialTimeout: 2 * time.Second, Logger: zap.NewNop(),
		DialKeepAliveTime: time.Second, DialKeepAliveTimeout: time.Second,
		DialOptions: []grpc.DialOption{grpc.WithStreamInterceptor(c.intercept)},
	})
	if err != nil {
		return nil, err
	}
	c.cli = cli
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := e.clients[owner]; old != nil {
		cli.Close()
		return old, nil
	}
	e.clients[owner] = c
	return c, nil
}

// intercept wraps the lessor's keepalive stream: it stops while the
// owner's client is stopped and reports every keepalive of a held lease.
func (c *electionClient) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || method != "/etcdserverpb.Lease/LeaseKeepAlive" || ctx.Value(ownCall{}) != nil {
		return cs, err
	}
	return &keepAliveStream{ClientStream: cs, c: c, sent: map[int64][]time.Time{}}, nil
}

type keepAliveStream struct {
	grpc.ClientStream
	c    *electionClient
	mu   sync.Mutex
	sent map[int64][]time.Time // lease → send times awaiting an answer
}

func (s *keepAliveStream) SendMsg(m any) error {
	if err := s.c.gate.Wait(s.Context()); err != nil {
		return err
	}
	if r, ok := m.(*pb.LeaseKeepAliveRequest); ok {
		s.mu.Lock()
		s.sent[r.ID] = append(s.sent[r.ID], time.Now())
		s.mu.Unlock()
	}
	return s.ClientStream.SendMsg(m)
}

func (s *keepAliveStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	end := time.Now()
	if err == nil {
		if r, ok := m.(*pb.LeaseKeepAliveResponse); ok {
			s.mu.Lock()
			// A renewer's renewals must not overlap: when a later
			// keepalive was sent before this one's answer came (a stop held
			// it), the later one, applied after it, stands for both.
			var start time.Time
			if q := s.sent[r.ID]; len(q) > 0 {
				if len(q) == 1 {
					start = q[0]
				}
				s.sent[r.ID] = q[1:]
			}
			s.mu.Unlock()
			if h := s.c.e.holdOfLease(s.c.owner, clientv3.LeaseID(r.ID)); h != nil && !start.IsZero() {
				// A refusal (TTL <= 0: the lease is gone) carries the
				// TTL the renewal asked for, the session's.
				ttl := h.ttl
				if r.TTL > 0 {
					ttl = time.Duration(r.TTL) * time.Second
				}
				s.c.e.renewed(backend.Renewal{Key: h.key, Owner: h.owner, Start: start, End: end, Answered: true, OK: r.TTL > 0, TTL: ttl})
			}
		}
	}
	// A stopped client reads nothing: the answer reaches the lessor when it
	// resumes, as a paused process reads its socket.
	if werr := s.c.gate.Wait(s.Context()); werr != nil && err == nil {
		return werr
	}
	return err
}

func (e *Election) holdOfLease(owner string, id clientv3.LeaseID) *electionHold {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, h := range e.holds {
		if k[1] == owner && h.s.Lease() == id {
			return h
		}
	}
	return nil
}

func (e *Election) renewed(r backend.Renewal) {
	e.mu.Lock()
	obs := append([]func(backend.Renewal){}, e.observers...)
	e.mu.Unlock()
	for _, fn := range obs {
		fn(r)
	}
}

func (e *Election) hold(key, owner string) *electionHold {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.holds[[2]string{key, owner}]
}

// newSession is NewSession under ctx: the session's own lifetime must not
// end with the request, so NewSession runs with the client's context and
// the caller returns at ctx's end with the outcome unknown; a session
// granted after that is closed at once.
func newSession(ctx context.Context, cli *clientv3.Client, secs int64) (*concurrency.Session, error) {
	type result struct {
		s   *concurrency.Session
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := concurrency.NewSession(cli, concurrency.WithTTL(int(secs)))
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.err == nil {
				closeSession(r.s)
			}
		}()
		return nil, ctx.Err()
	}
}

// closeSession closes s in the background: its lease is revoked, its key
// with it (best effort: it expires anyway).
func closeSession(s *concurrency.Session) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.Orphan()
		s.Client().Revoke(ctx, s.Lease())
	}()
}

// Do implements backend.Backend.
func (e *Election) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	switch req.Kind {
	case model.Acquire:
		return e.acquire(ctx, req)
	case model.Renew:
		h := e.hold(req.Key, req.Owner)
		if h == nil {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		if req.Fence != 0 && req.Fence != h.fence {
			return backend.Response{Reason: machine.ReasonStaleFence}, nil
		}
		r, err := h.s.Client().KeepAliveOnce(own(ctx), h.s.Lease())
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		if err != nil {
			return backend.Response{}, err
		}
		if r.TTL <= 0 {
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		return backend.Response{OK: true, TTL: time.Duration(r.TTL) * time.Second}, nil
	case model.Release:
		h := e.hold(req.Key, req.Owner)
		if h == nil || req.Fence != 0 && req.Fence != h.fence {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		g, err := h.s.Client().Get(own(ctx), h.recipeKey())
		if err != nil {
			return backend.Response{}, err
		}
		there := len(g.Kvs) > 0 && g.Kvs[0].CreateRevision == h.fence
		if err := h.giveBack(own(ctx)); err != nil {
			return backend.Response{}, err
		}
		e.mu.Lock()
		delete(e.holds, [2]string{req.Key, req.Owner})
		e.mu.Unlock()
		closeSession(h.s)
		if !there {
			return backend.Response{}, ErrGone
		}
		return backend.Response{OK: true}, nil
	case model.Write:
		h := e.hold(req.Key, req.Owner)
		data := e.prefix + "/data/" + req.Key
		if !e.fenced {
			c, err := e.client(ctx, req.Owner)
			if err != nil {
				return backend.Response{}, err
			}
			if _, err := c.cli.Put(own(ctx), data, req.Value); err != nil {
				return backend.Response{}, err
			}
			return backend.Response{OK: true}, nil
		}
		if h == nil {
			// Each owner campaigns through its own client, so "no
			// election of the owner's" is definite.
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		if req.Fence != h.fence {
			return backend.Response{Reason: machine.ReasonStaleFence}, nil
		}
		t, err := h.s.Client().Txn(own(ctx)).
			If(h.owns()).
			Then(clientv3.OpPut(data, req.Value)).
			Commit()
		if err != nil {
			return backend.Response{}, err
		}
		if !t.Succeeded {
			return backend.Response{Reason: machine.ReasonExpired}, nil
		}
		return backend.Response{OK: true}, nil
	case model.Read:
		r, err := e.base.Get(ctx, e.prefix+"/data/"+req.Key)
		if err != nil {
			return backend.Response{}, err
		}
		resp := backend.Response{OK: true}
		if len(r.Kvs) > 0 {
			resp.Value, resp.HasValue = string(r.Kvs[0].Value), true
		}
		return resp, nil
	}
	return backend.Response{}, errors.New(recipeInfo(e.recipe, e.fenced).Name + ": unknown op " + req.Kind.String())
}

func (e *Election) acquire(ctx context.Context, req backend.Request) (backend.Response, error) {
	c, err := e.client(ctx, req.Owner)
	if err != nil {
		return backend.Response{}, err
	}
	secs := ttlSeconds(req.TTL)
	s, err := newSession(ctx, c.cli, secs)
	if err != nil {
		return backend.Response{}, err
	}
	if e.recipe == mutexRecipe {
		return e.lock(ctx, req, s, secs)
	}
	el := concurrency.NewElection(s, e.prefix+"/election/"+req.Key)
	if _, err := el.Leader(own(ctx)); err == nil {
		closeSession(s)
		return backend.Response{Reason: machine.ReasonHeld}, nil
	} else if !errors.Is(err, concurrency.ErrElectionNoLeader) {
		closeSession(s)
		return backend.Response{}, err
	}
	if err := el.Campaign(own(ctx), req.Owner); err != nil {
		// Someone campaigned between Leader and Campaign, and the
		// deadline cut the wait: the key goes with the session.
		closeSession(s)
		return backend.Response{}, err
	}
	return e.held(&electionHold{key: req.Key, owner: req.Owner, s: s, el: el, fence: el.Rev(), ttl: time.Duration(secs) * time.Second}), nil
}

// lock is the Mutex recipe's acquire on the session s: TryLock, the
// library's own answer for "held by another session" (it deletes the key
// it put, and the session goes).
func (e *Election) lock(ctx context.Context, req backend.Request, s *concurrency.Session, secs int64) (backend.Response, error) {
	mu := concurrency.NewMutex(s, e.prefix+"/mutex/"+req.Key)
	err := mu.TryLock(own(ctx))
	if errors.Is(err, concurrency.ErrLocked) {
		closeSession(s)
		return backend.Response{Reason: machine.ReasonHeld}, nil
	}
	if err != nil {
		// The Txn's outcome is unknown: the key, if put, goes with the
		// session.
		closeSession(s)
		return backend.Response{}, err
	}
	// TryLock on a fresh session created the key in its own Txn: that
	// Txn's revision is the key's create revision, the one IsOwner compares.
	return e.held(&electionHold{key: req.Key, owner: req.Owner, s: s, mu: mu, fence: mu.Header().Revision, ttl: time.Duration(secs) * time.Second}), nil
}

// held records h as its owner's grant of its key and answers it.
func (e *Election) held(h *electionHold) backend.Response {
	e.mu.Lock()
	old := e.holds[[2]string{h.key, h.owner}]
	e.holds[[2]string{h.key, h.owner}] = h
	e.mu.Unlock()
	if old != nil {
		old.s.Orphan()
	}
	return backend.Response{OK: true, Fence: h.fence, TTL: h.ttl}
}

// Signal implements backend.Holding: the session's Done.
func (e *Election) Signal(key, owner string) <-chan struct{} {
	if h := e.hold(key, owner); h != nil {
		return h.s.Done()
	}
	return nil
}

// Observe implements backend.Holding.
func (e *Election) Observe(fn func(backend.Renewal)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observers = append(e.observers, fn)
}

// StopClient implements backend.Stopper: owner's keepalive loop stops
// (its sends wait, its answers are not read).
func (e *Election) StopClient(owner string) func() {
	c, err := e.client(context.Background(), owner)
	if err != nil {
		return func() {}
	}
	return c.gate.Stop()
}

// Cleanup deletes every key under the prefix.
func (e *Election) Cleanup(ctx context.Context) error {
	_, err := e.base.Delete(ctx, e.prefix+"/", clientv3.WithPrefix())
	return err
}

// Close ends every session (revoking its lease) and closes the clients.
func (e *Election) Close() error {
	e.mu.Lock()
	holds, clients := e.holds, e.clients
	e.holds, e.clients = map[[2]string]*electionHold{}, map[string]*electionClient{}
	e.mu.Unlock()
	for _, h := range holds {
		h.s.Orphan()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		h.s.Client().Revoke(own(ctx), h.s.Lease())
		cancel()
	}
	for _, c := range clients {
		c.cli.Close()
	}
	return e.base.Close()
}
