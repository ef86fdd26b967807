// Package etcd holds two etcd lease backends, both checked in interval mode
// (etcd reports no clock with its answers):
//
//   - Backend ("etcd"): a lease with explicit keepalives; the lock key
//     P/lock/K is created by a transaction only if absent, attached to the
//     lease. Fence = the lock key's create revision (increasing, with gaps:
//     every write to the cluster takes a revision). The fenced write is a
//     transaction: if CreateRevision(P/lock/K) == fence and its value is the
//     writer then Put(P/data/K); release is the same compare, then Delete.
//     A non-holder presenting the holder's current fence is refused: the
//     fence alone is not the holder (the adapter contract in impl/backend/README.md).
//   - Mutex ("etcd-mutex"): concurrency.Mutex on a session lease (renewed
//     explicitly, so a paused holder stops renewing, as a paused process
//     does) and a plain, unguarded Put for the write: the configuration
//     Jepsen showed unsafe in 2020 (etcd 3.4.3). A holder paused past its
//     TTL writes after another holder took the lock; the checker must say so.
//
// Expiry lateness. etcd frees an expired lease late: the lessor sweeps for
// expired leases every 500 ms and revokes them through raft, and until the
// revocation applies the key still exists, so a fenced write may still be
// accepted and an acquire still refused. It never frees one early (the
// expiry is counted from when the grant or keepalive reached the server,
// inside the request's window) and a renew of an expired lease waits for
// the revocation and fails, so leases never live on by renewal and nobody
// is granted a live lease. Info therefore declares the lateness apart from
// the clock (backend.Info.ExpiryLateness), from the lessor's own numbers:
// up to 500 ms until the sweep finds the lease, and a revocation that did
// not apply is sent again only after expiredLeaseRetryInterval, 3 s; with
// raft's apply on a loaded machine, 5 s. Measured: TestEtcd34ExpiryLateness
// with both cores of a 2-core machine kept busy by CPU-bound loops and the
// race detector on, worst 0.55 s of 80 leases; in the race-detector soak
// (TestEtcd34Conformance) once 1.3 s and once 2.35 s. The clock uncertainty
// is 100 ms, for scheduling between the client's clock readings and the
// server's. (A leader change extends every lease by an election timeout;
// the embedded server has one member and no leader change during a run.)
//
// Release of an expired lease: in the seed semantics a holder whose lease
// ran out may still release it until someone else acquires; etcd has
// already deleted the key. When the release transaction finds the key gone,
// the adapter cannot tell "expired, nobody since" from "someone acquired and
// released since", so it reports the outcome as unknown (an error), which
// the model accepts either way.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Uncertainty is the clock uncertainty declared for etcd histories.
const Uncertainty = 100 * time.Millisecond

// ExpiryLateness is how late etcd may free an expired lease (see above).
const ExpiryLateness = 5 * time.Second

// ElectionTimeout is etcd's default election timeout. A member that
// becomes leader (after a restart, say) refreshes every lease to its full
// TTL plus this (the lessor's Promote), so leases outlive a restart.
const ElectionTimeout = time.Second

// Info describes Backend.
func Info() backend.Info {
	return backend.Info{
		Name:           "etcd",
		FenceSource:    "the create revision of P/lock/K (increasing, with gaps)",
		FencedWrite:    "Txn: if CreateRevision(P/lock/K) == fence and Value(P/lock/K) == owner then Put(P/data/K)",
		Fences:         backend.IncreasingFences,
		Writes:         backend.CheckedWrites,
		Uncertainty:    Uncertainty,
		ExpiryLateness: ExpiryLateness,
		TTLGranularity: time.Second,
		MinTTL:         2 * time.Second,
		LeasesRestart:  true,
		RestartGrace:   ElectionTimeout,
	}
}

// MutexInfo describes Mutex.
func MutexInfo() backend.Info {
	return backend.Info{
		Name:           "etcd-mutex",
		FenceSource:    "the create revision of the concurrency.Mutex key (increasing, with gaps)",
		FencedWrite:    "none: a plain Put(P/data/K) (unsafe on purpose)",
		Fences:         backend.IncreasingFences,
		Writes:         backend.UncheckedWrites, // the point of this backend: Jepsen's etcd 3.4.3 finding
		Uncertainty:    Uncertainty,
		ExpiryLateness: ExpiryLateness,
		TTLGranularity: time.Second,
		MinTTL:         2 * time.Second,
		LeasesRestart:  true,
		RestartGrace:   ElectionTimeout,
	}
}

// ErrGone is the unknown outcome of a release that found the key gone.
var ErrGone = errors.New("etcd: release: the lock key is gone (expired, or released by a later holder): outcome unknown")

// Dial connects to the etcd at addr — or, when addr lists several
// members' addresses separated by commas, to the cluster, with the
// client's own endpoint selection (clientv3's round-robin over them) — and
// checks that it answers.
func Dial(ctx context.Context, addr string) (*clientv3.Client, error) {
	endpoints := strings.Split(addr, ",")
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
		// Fail fast instead of retrying forever on a dead endpoint.
		DialKeepAliveTime:    time.Second,
		DialKeepAliveTimeout: time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	// One member answering is enough: a cluster serves with one down.
	for _, ep := range endpoints {
		if _, err = cli.Status(cctx, ep); err == nil {
			return cli, nil
		}
	}
	cli.Close()
	return nil, fmt.Errorf("etcd: %s does not answer: %w", addr, err)
}

type grant struct {
	owner string
	lease clientv3.LeaseID
	mutex *concurrency.Mutex
}

type common struct {
	cli    *clientv3.Client
	prefix string
	mu     sync.Mutex
	grants map[string]grant // key + "/" + fence
}

func (c *common) remember(key string, fence int64, g grant) {
	c.mu.Lock()
	c.grants[key+"/"+strconv.FormatInt(fence, 10)] = g
	c.mu.Unlock()
}

// lookup finds owner's grant of fence on key (fence 0: owner's latest
// grant on key). A grant is remembered by the client that made it, and
// each owner acquires through its own client, so "none" is definite: the
// owner does not hold that lease (the adapter contract in impl/backend/README.md, renew-not-holder
// and release-not-holder, whatever fence a stranger presents).
func (c *common) lookup(key, owner string, fence int64) (grant, int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fence != 0 {
		g, ok := c.grants[key+"/"+strconv.FormatInt(fence, 10)]
		return g, fence, ok && g.owner == owner
	}
	var best grant
	var bestFence int64
	for k, g := range c.grants {
		f, _ := strconv.ParseInt(k[strings.LastIndexByte(k, '/')+1:], 10, 64)
		if g.owner == owner && k == key+"/"+strconv.FormatInt(f, 10) && f > bestFence {
			best, bestFence = g, f
		}
	}
	return best, bestFence, bestFence != 0
}

func (c *common) forget(key string, fence int64) {
	c.mu.Lock()
	delete(c.grants, key+"/"+strconv.FormatInt(fence, 10))
	c.mu.Unlock()
}

// held reports whether a failed compare-and-act transaction's Else(Get)
// found the lock key.
func held(t *clientv3.TxnResponse) bool {
	return len(t.Responses) > 0 && len(t.Responses[0].GetResponseRange().Kvs) > 0
}

// revoke drops a lease in the background (best effort: it expires anyway).
func (c *common) revoke(id clientv3.LeaseID) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.cli.Revoke(ctx, id)
	}()
}

func (c *common) renew(ctx context.Context, req backend.Request) (backend.Response, error) {
	g, _, ok := c.lookup(req.Key, req.Owner, req.Fence)
	if !ok {
		return backend.Response{Reason: machine.ReasonNotHolder}, nil
	}
	r, err := c.cli.KeepAliveOnce(ctx, g.lease)
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
}

func (c *common) read(ctx context.Context, key string) (backend.Response, error) {
	r, err := c.cli.Get(ctx, c.prefix+"/data/"+key)
	if err != nil {
		return backend.Response{}, err
	}
	resp := backend.Response{OK: true}
	if len(r.Kvs) > 0 {
		resp.Value, resp.HasValue = string(r.Kvs[0].Value), true
	}
	return resp, nil
}

// Prefix is the key prefix the backend keeps everything under.
func (c *common) Prefix() string { return c.prefix }

// Cleanup deletes every key under the prefix.
func (c *common) Cleanup(ctx context.Context) error {
	_, err := c.cli.Delete(ctx, c.prefix+"/", clientv3.WithPrefix())
	return err
}

// Close closes the client.
func (c *common) Close() error { return c.cli.Close() }

func ttlSeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

// Backend is the fenced etcd lease ("etcd").
type Backend struct {
	common
	// staleCheck is the planted bug of OpenStaleCheck: the write is a
	// serializable read of the lock key on the local member, then a plain
	// Put.
	staleCheck bool
	local      *clientv3.Client
}

// StaleCheckInfo describes the planted bug OpenStaleCheck runs.
func StaleCheckInfo() backend.Info {
	i := Info()
	i.Name = "etcd-stale-check"
	i.FencedWrite = "none: a serializable Get of P/lock/K on the client's local member (the first address), then a plain Put if it names the holder (a planted bug)"
	i.Writes = backend.UncheckedWrites
	return i
}

// OpenStaleCheck is Backend with a planted bug in its write, one that
// only a cluster exposes: before writing, the holder checks that it still
// holds the lock with a serializable read (clientv3.WithSerializable),
// answered by its local member — the first of addr's addresses, as a
// client co-located with a member reads from it — without a round trip
// through the leader; then it writes with a plain Put through the cluster.
// On a single server the local member is the whole truth and the check is
// exact; on a cluster, a member cut off from the majority has not seen the
// lease's revocation and says "yes" after the lock moved on, and the Put,
// sent to a member of the majority, lands: a write by a former holder.
func OpenStaleCheck(ctx context.Context, addr, prefix string) (*Backend, error) {
	cli, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	first, _, _ := strings.Cut(addr, ",")
	local, err := Dial(ctx, first)
	if err != nil {
		cli.Close()
		return nil, err
	}
	return &Backend{common: common{cli: cli, prefix: prefix, grants: map[string]grant{}}, staleCheck: true, local: local}, nil
}

// Close closes the clients.
func (b *Backend) Close() error {
	if b.local != nil {
		b.local.Close()
	}
	return b.cli.Close()
}

// writeAfterStaleCheck is the planted bug's write (OpenStaleCheck).
func (b *Backend) writeAfterStaleCheck(ctx context.Context, req backend.Request) (backend.Response, error) {
	lock := b.prefix + "/lock/" + req.Key
	g, err := b.local.Get(ctx, lock, clientv3.WithSerializable())
	if err != nil {
		return backend.Response{}, err
	}
	switch {
	case len(g.Kvs) == 0:
		return backend.Response{Reason: machine.ReasonExpired}, nil
	case string(g.Kvs[0].Value) != req.Owner:
		return backend.Response{Reason: machine.ReasonNotHolder}, nil
	case g.Kvs[0].CreateRevision != req.Fence:
		return backend.Response{Reason: machine.ReasonStaleFence}, nil
	}
	if _, err := b.cli.Put(ctx, b.prefix+"/data/"+req.Key, req.Value); err != nil {
		return backend.Response{}, err
	}
	return backend.Response{OK: true}, nil
}

// Open connects to the etcd at addr (several addresses, comma-separated:
// a cluster); keys live under prefix.
func Open(ctx context.Context, addr, prefix string) (*Backend, error) {
	cli, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &Backend{common: common{cli: cli, prefix: prefix, grants: map[string]grant{}}}, nil
}

// Do runs one operation.
func (b *Backend) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	lock := b.prefix + "/lock/" + req.Key
	switch req.Kind {
	case model.Acquire:
		g, err := b.cli.Grant(ctx, ttlSeconds(req.TTL))
		if err != nil {
			return backend.Response{}, err
		}
		t, err := b.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(lock), "=", 0)).
			Then(clientv3.OpPut(lock, req.Owner, clientv3.WithLease(g.ID))).
			Commit()
		if err != nil {
			return backend.Response{}, err
		}
		if !t.Succeeded {
			b.revoke(g.ID)
			return backend.Response{Reason: machine.ReasonHeld}, nil
		}
		fence := t.Header.Revision
		b.remember(req.Key, fence, grant{owner: req.Owner, lease: g.ID})
		return backend.Response{OK: true, Fence: fence, TTL: time.Duration(g.TTL) * time.Second}, nil
	case model.Renew:
		return b.renew(ctx, req)
	case model.Release:
		g, fence, ok := b.lookup(req.Key, req.Owner, req.Fence)
		if !ok {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		t, err := b.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(lock), "=", fence), clientv3.Compare(clientv3.Value(lock), "=", req.Owner)).
			Then(clientv3.OpDelete(lock)).
			Else(clientv3.OpGet(lock)).
			Commit()
		if err != nil {
			return backend.Response{}, err
		}
		if t.Succeeded {
			b.forget(req.Key, fence)
			b.revoke(g.lease)
			return backend.Response{OK: true}, nil
		}
		if held(t) {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		return backend.Response{}, ErrGone
	case model.Write:
		if b.staleCheck {
			return b.writeAfterStaleCheck(ctx, req)
		}
		t, err := b.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(lock), "=", req.Fence), clientv3.Compare(clientv3.Value(lock), "=", req.Owner)).
			Then(clientv3.OpPut(b.prefix+"/data/"+req.Key, req.Value)).
			Else(clientv3.OpGet(lock)).
			Commit()
		if err != nil {
			return backend.Response{}, err
		}
		switch {
		case t.Succeeded:
			return backend.Response{OK: true}, nil
		case !held(t):
			return backend.Response{Reason: machine.ReasonExpired}, nil
		case string(t.Responses[0].GetResponseRange().Kvs[0].Value) != req.Owner:
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		return backend.Response{Reason: machine.ReasonStaleFence}, nil
	case model.Read:
		return b.read(ctx, req.Key)
	}
	return backend.Response{}, errors.New("etcd: unknown op " + req.Kind.String())
}

// Mutex is concurrency.Mutex with an unguarded write ("etcd-mutex").
type Mutex struct{ common }

// OpenMutex connects to the etcd at addr; keys live under prefix.
func OpenMutex(ctx context.Context, addr, prefix string) (*Mutex, error) {
	cli, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &Mutex{common{cli: cli, prefix: prefix, grants: map[string]grant{}}}, nil
}

// Do runs one operation.
func (m *Mutex) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	switch req.Kind {
	case model.Acquire:
		g, err := m.cli.Grant(ctx, ttlSeconds(req.TTL))
		if err != nil {
			return backend.Response{}, err
		}
		// The session's own keepalive loop is stopped (Orphan): renewals
		// are the holder's, so a paused holder renews nothing, like a
		// paused process.
		s, err := concurrency.NewSession(m.cli, concurrency.WithLease(g.ID), concurrency.WithContext(context.Background()))
		if err != nil {
			return backend.Response{}, err
		}
		s.Orphan()
		mu := concurrency.NewMutex(s, m.prefix+"/mutex/"+req.Key)
		err = mu.TryLock(ctx)
		if errors.Is(err, concurrency.ErrLocked) {
			m.revoke(g.ID)
			return backend.Response{Reason: machine.ReasonHeld}, nil
		}
		if err != nil {
			return backend.Response{}, err
		}
		fence := mu.Header().Revision
		m.remember(req.Key, fence, grant{owner: req.Owner, lease: g.ID, mutex: mu})
		return backend.Response{OK: true, Fence: fence, TTL: time.Duration(g.TTL) * time.Second}, nil
	case model.Renew:
		return m.renew(ctx, req)
	case model.Release:
		g, fence, ok := m.lookup(req.Key, req.Owner, req.Fence)
		if !ok {
			return backend.Response{Reason: machine.ReasonNotHolder}, nil
		}
		// Not g.mutex.Unlock: it deletes the mutex's key whether or not it
		// still exists, and answers nil for a lock that expired and was
		// taken since. Delete it only if it is still this grant's.
		t, err := m.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(g.mutex.Key()), "=", fence)).
			Then(clientv3.OpDelete(g.mutex.Key())).
			Commit()
		if err != nil {
			return backend.Response{}, err
		}
		if !t.Succeeded {
			return backend.Response{}, ErrGone
		}
		m.forget(req.Key, fence)
		m.revoke(g.lease)
		return backend.Response{OK: true}, nil
	case model.Write:
		if _, err := m.cli.Put(ctx, m.prefix+"/data/"+req.Key, req.Value); err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true}, nil
	case model.Read:
		return m.read(ctx, req.Key)
	}
	return backend.Response{}, errors.New("etcd-mutex: unknown op " + req.Kind.String())
}
