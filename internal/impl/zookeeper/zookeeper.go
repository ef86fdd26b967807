package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Uncertainty is the clock uncertainty declared for histories of a
// ZooKeeper with a tick of at most 100 ms (the one internal/servers
// starts): how late the server may end a session past its timeout. The
// session tracker expires sessions in buckets of one tick, so a session
// ends between its timeout and one tick after it; then the closeSession
// transaction deletes its ephemeral nodes. TestSessionExpiryLateness
// measures it from the acquire's answer plus the TTL to another client
// seeing the lock node gone: 22 to 76 ms, worst of 8 leases, over 5 runs on
// a shared 2-core machine (the tick, the close, a 5 ms poll); 500 ms
// leaves room for a JVM pause. A server with a longer tick needs more: see
// ServerInfo.
const Uncertainty = 500 * time.Millisecond

// ExpiryLateness is how late, past the declared uncertainty, the server
// may still answer that an expired session's lock is held
// (backend.Info.ExpiryLateness): the leader's session tracker and the
// closeSession transaction run in a JVM that a loaded machine starves.
// Measured: quiet, the 22–76 ms of Uncertainty; under the race detector
// with a second test run on both cores, a crashed holder's lock was still
// refused to another about 0.7 s past its timeout plus Uncertainty. Late
// freeing never gives two holders, so it is judged as expiry-lateness,
// apart from linearizable; a grant still needs the expiry.
const ExpiryLateness = 2 * time.Second

// dataTimeout is the data session's timeout (the server may cap it): long
// enough that a paused holder's data session outlives its pause, though
// nothing depends on it (the data session holds no lease).
const dataTimeout = 30 * time.Second

// Info describes Backend on a server with a tick of at most 100 ms.
func Info() backend.Info { return info(true, Uncertainty, 0) }

// UnfencedInfo describes the unfenced backend ("zookeeper-unfenced").
func UnfencedInfo() backend.Info { return info(false, Uncertainty, 0) }

// info: u is the declared uncertainty, minTTL the shortest session timeout
// the server grants (0: unknown, no floor beyond the runner's own).
func info(fenced bool, u, minTTL time.Duration) backend.Info {
	i := backend.Info{
		Name:           "zookeeper",
		FenceSource:    "the lock node's sequence number + 1 (P/locks/K/OWNER-SEQ, ephemeral sequential: increasing, with gaps)",
		FencedWrite:    "multi: check(P/locks/K/OWNER-SEQ, version 1), setData(P/data/K)",
		Fences:         backend.IncreasingFences,
		Writes:         backend.CheckedWrites,
		Uncertainty:    u,
		ExpiryLateness: ExpiryLateness,
		TTLGranularity: time.Millisecond,
		MinTTL:         minTTL,
		// A restarted server restores sessions from its log with a fresh
		// timeout from when it loaded them.
		LeasesRestart: true,
	}
	if !fenced {
		i.Writes = backend.UncheckedWrites
		i.Name = "zookeeper-unfenced"
		i.FencedWrite = "none: a plain setData(P/data/K) (unsafe on purpose)"
	}
	return i
}

// ServerInfo describes a backend on the ZooKeeper server at addr. It asks
// for a session of 100 ms: the server grants at least its
// minSessionTimeout, by default two ticks. Sessions expire up to a tick
// late, so the declared uncertainty is the larger of Uncertainty and what
// was granted (it assumes the default minSessionTimeout of two ticks or
// more). Shorter asks would tell more but do not matter: Uncertainty is
// larger, and go-zookeeper gives the handshake only 6.7 session timeouts.
func ServerInfo(ctx context.Context, addr string, fenced bool) (backend.Info, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := dialSession(ctx, addr, 100*time.Millisecond, true)
	if err != nil {
		return backend.Info{}, err
	}
	min := s.TTL()
	go s.close()
	return info(fenced, max(Uncertainty, min), min), nil
}

// Backend is a ZooKeeper lease client (package doc). Safe for concurrent
// use by many owners: each grant has a session of its own.
type Backend struct {
	addr   string
	root   string
	fenced bool
	data   *session

	mu       sync.Mutex
	grants   map[grant]*session
	sessions []*session // every session, for Close
	ready    map[string]bool
	closed   bool
}

type grant struct {
	key   string
	fence int64
}

// Open connects to the ZooKeeper at addr (host:port); the znodes live under
// root (an absolute path, e.g. "/leasecheck/lc1234"). The writes are
// fenced.
func Open(ctx context.Context, addr, root string) (*Backend, error) {
	return open(ctx, addr, root, true)
}

// OpenUnfenced is Open with an unfenced write: the same lock recipe and a
// plain setData, which a holder paused past its TTL gets accepted after
// another holder took the lock.
func OpenUnfenced(ctx context.Context, addr, root string) (*Backend, error) {
	return open(ctx, addr, root, false)
}

func open(ctx context.Context, addr, root string, fenced bool) (*Backend, error) {
	if !strings.HasPrefix(root, "/") || strings.HasSuffix(root, "/") || strings.Contains(root, "//") {
		return nil, fmt.Errorf("zookeeper: bad root %q: want an absolute znode path", root)
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := dialSession(dctx, addr, dataTimeout, false)
	if err != nil {
		return nil, err
	}
	b := &Backend{addr: addr, root: root, fenced: fenced, data: d, grants: map[grant]*session{}, ready: map[string]bool{}}
	b.sessions = append(b.sessions, d)
	if err := b.ensure(dctx, ""); err != nil {
		b.Close()
		return nil, fmt.Errorf("zookeeper: creating %s: %w", root, err)
	}
	return b, nil
}

// Root is the znode under which the backend keeps everything.
func (b *Backend) Root() string { return b.root }

// Paths: P/locks/K holds the lock nodes of key K, P/terms/K its terms
// (a persistent node per grant), P/data/K its data.
func (b *Backend) lockDir(key string) string  { return b.root + "/locks/" + escape(key) }
func (b *Backend) termDir(key string) string  { return b.root + "/terms/" + escape(key) }
func (b *Backend) dataPath(key string) string { return b.root + "/data/" + escape(key) }

// term is the term node of owner's grant of fence on key: created with the
// grant (version 0), set once by its release (version 1). It outlives the
// lock node, so a release can tell a lease that expired from one released
// before and from a fence the owner was never granted.
func (b *Backend) term(key, owner string, fence int64) string {
	return b.termDir(key) + "/" + escape(owner) + "-" + fmt.Sprintf("%010d", fence-1)
}

// node is the lock node of owner's grant of fence on key: the owner is in
// its name, the sequence number (fence − 1: sequences start at 0, fences
// at 1) is the suffix ZooKeeper appended.
func (b *Backend) node(key, owner string, fence int64) string {
	return b.lockDir(key) + "/" + escape(owner) + "-" + fmt.Sprintf("%010d", fence-1)
}

// escape makes s one znode name: letters, digits, '_' and '-' stay, every
// other byte is %XX ("/" separates znodes, "." and ".." are reserved).
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// seqOf is the sequence number of a lock node's name, or -1.
func seqOf(name string) int64 {
	if len(name) < 10 {
		return -1
	}
	n, err := strconv.ParseInt(name[len(name)-10:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// predecessor is the child with the largest sequence number below seq.
func predecessor(children []string, seq int64) (string, bool) {
	best, name := int64(-1), ""
	for _, c := range children {
		if s := seqOf(c); s >= 0 && s < seq && s > best {
			best, name = s, c
		}
	}
	return name, best >= 0
}

var acl = zk.WorldACL(zk.PermAll)

// ensure creates the persistent znodes key needs (the root and its
// parents for key ""), once per key.
func (b *Backend) ensure(ctx context.Context, key string) error {
	b.mu.Lock()
	done := b.ready[key]
	b.mu.Unlock()
	if done {
		return nil
	}
	var paths []string
	if key == "" {
		parts := strings.Split(b.root, "/")[1:]
		for i := range parts {
			paths = append(paths, "/"+strings.Join(parts[:i+1], "/"))
		}
		paths = append(paths, b.root+"/locks", b.root+"/terms", b.root+"/data")
	} else {
		paths = []string{b.lockDir(key), b.termDir(key), b.dataPath(key)}
	}
	// Another run's Cleanup may delete a shared parent (/leasecheck) between
	// two creates: then start again from the top.
	var err error
	for try := 0; try < 5; try++ {
		err = nil
		for _, p := range paths {
			_, err = call(ctx, func() (string, error) { return b.data.conn.Create(p, nil, 0, acl) })
			if errors.Is(err, zk.ErrNodeExists) {
				err = nil
			}
			if err != nil {
				break
			}
		}
		if !errors.Is(err, zk.ErrNoNode) {
			break
		}
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.ready[key] = true
	b.mu.Unlock()
	return nil
}

// Do runs one operation (the contract table is in the package doc).
func (b *Backend) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	if err := b.ensure(ctx, req.Key); err != nil {
		return backend.Response{}, err
	}
	switch req.Kind {
	case model.Acquire:
		return b.acquire(ctx, req)
	case model.Renew:
		return b.renew(ctx, req)
	case model.Release:
		return b.release(ctx, req)
	case model.Write:
		return b.write(ctx, req)
	case model.Read:
		return b.read(ctx, req.Key)
	}
	return backend.Response{}, errors.New("zookeeper: unknown op " + req.Kind.String())
}

// acquire is a try-lock with the lock recipe: a new session whose timeout
// is the TTL, an ephemeral sequential node under the lock path, and the
// lowest sequence holds. A node that is not the lowest is deleted in one
// multi with a check that its predecessor still exists: then it was never
// the lowest (its predecessor existed all along), and the refusal is
// definite. If the predecessor is gone, the children are listed again: the
// node may be the lowest now. Deleting it without that check would let a
// node be the lowest for a moment and its owner be told "held", and an
// acquirer in that moment refused although nobody else holds the lock.
//
// The lowest node is marked granted (setData to the owner: version 1), so
// a write or renew under the fence of a node that was only waiting is
// refused, and its term node is created in the same multi. Any unknown
// outcome leaves the session untouched: it may hold the lock, and it
// expires on the server when nobody renews it.
func (b *Backend) acquire(ctx context.Context, req backend.Request) (backend.Response, error) {
	if req.TTL <= 0 {
		return backend.Response{}, errors.New("zookeeper: acquire without a TTL")
	}
	s, err := dialSession(ctx, b.addr, req.TTL, true)
	if err != nil {
		return backend.Response{}, err
	}
	if !b.track(s) {
		go s.close()
		return backend.Response{}, errors.New("zookeeper: backend closed")
	}
	dir := b.lockDir(req.Key)
	path, err := call(ctx, func() (string, error) {
		return s.conn.Create(dir+"/"+escape(req.Owner)+"-", []byte(req.Owner), zk.FlagEphemeral|zk.FlagSequence, acl)
	})
	if err != nil {
		return backend.Response{}, err // the node may exist: the session is left to expire
	}
	seq := seqOf(path)
	if seq < 0 {
		return backend.Response{}, fmt.Errorf("zookeeper: created %q: no sequence number", path)
	}
	for {
		children, err := call(ctx, func() ([]string, error) {
			c, _, err := s.conn.Children(dir)
			return c, err
		})
		if err != nil {
			return backend.Response{}, err
		}
		pred, waiting := predecessor(children, seq)
		if !waiting {
			term := b.term(req.Key, req.Owner, seq+1)
			if _, err := call(ctx, func() ([]zk.MultiResponse, error) {
				return s.conn.Multi(&zk.SetDataRequest{Path: path, Data: []byte(req.Owner), Version: 0},
					&zk.CreateRequest{Path: term, Acl: acl})
			}); err != nil {
				return backend.Response{}, err
			}
			s.key, s.owner, s.path, s.fence = req.Key, req.Owner, path, seq+1
			b.mu.Lock()
			b.grants[grant{req.Key, s.fence}] = s
			b.mu.Unlock()
			return backend.Response{OK: true, Fence: s.fence, TTL: s.TTL()}, nil
		}
		mr, err := call(ctx, func() ([]zk.MultiResponse, error) {
			return s.conn.Multi(&zk.CheckVersionRequest{Path: dir + "/" + pred, Version: -1}, &zk.DeleteRequest{Path: path, Version: -1})
		})
		switch {
		case len(mr) == 2 && errors.Is(mr[0].Error, zk.ErrNoNode):
			continue // the predecessor is gone: look again
		case err == nil, len(mr) == 2 && errors.Is(mr[1].Error, zk.ErrNoNode):
			// Deleted while a lower node existed (or already gone, the
			// session expired, while one existed): never the lowest.
			go s.close()
			return backend.Response{Reason: machine.ReasonHeld}, nil
		}
		return backend.Response{}, err
	}
}

// track registers a session for Close; false when the backend is closed.
func (b *Backend) track(s *session) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.sessions = append(b.sessions, s)
	return true
}

func (b *Backend) lookup(key string, fence int64) *session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.grants[grant{key, fence}]
}

func (b *Backend) forget(s *session) {
	b.mu.Lock()
	delete(b.grants, grant{s.key, s.fence})
	b.mu.Unlock()
	go s.close()
}

// renew proves the grant's session alive and its lock node still its own:
// a multi with one check of the node (version 1: granted), sent on the
// grant's session, so that the server touches the session (its timeout
// starts again) and answers from the leader. Only the grant's own session
// can renew it; a grant held by another client, or whose connection is
// lost, is looked up instead (refused when its node is gone, otherwise
// unknown: it was not renewed, and may still be live).
func (b *Backend) renew(ctx context.Context, req backend.Request) (backend.Response, error) {
	s := b.lookup(req.Key, req.Fence)
	if s == nil || s.owner != req.Owner || s.lost.Load() {
		return b.renewElsewhere(ctx, req, s)
	}
	_, err := call(ctx, func() ([]zk.MultiResponse, error) {
		return s.conn.Multi(&zk.CheckVersionRequest{Path: s.path, Version: 1})
	})
	switch {
	case err == nil:
		return backend.Response{OK: true, TTL: s.TTL()}, nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired):
		b.forget(s)
		return backend.Response{Reason: machine.ReasonExpired}, nil
	}
	return backend.Response{}, err
}

func (b *Backend) renewElsewhere(ctx context.Context, req backend.Request, s *session) (backend.Response, error) {
	st, err := b.stat(ctx, b.node(req.Key, req.Owner, req.Fence))
	switch {
	case err != nil:
		return backend.Response{}, err
	case st == nil:
		why, err := b.whyGone(ctx, req)
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{Reason: why}, nil
	case st.Version != 1:
		return backend.Response{Reason: machine.ReasonNotHolder}, nil // a waiting node, never granted
	case s != nil && s.lost.Load():
		return backend.Response{}, errors.New("zookeeper: renew: the lease session's connection is lost; it expires on the server: outcome unknown")
	}
	return backend.Response{}, errors.New("zookeeper: renew: the lease is held by another client's session, which only it can renew: not renewed, outcome unknown")
}

// syncData brings the data session's server up to the leader's state for
// path (ZooKeeper's sync): on an ensemble the data session may be
// connected to a follower that lags, and a read there could miss another
// session's grant or release — the release of an expired lease would then
// be allowed after someone else was granted, a renew of a released lease
// called expired. The lease session's own reads need none: its server
// applied everything up to its create before answering it.
func (b *Backend) syncData(ctx context.Context, path string) error {
	_, err := call(ctx, func() (string, error) { return b.data.conn.Sync(path) })
	return err
}

// stat is Exists on the data session, after a sync: nil when the node does
// not exist.
func (b *Backend) stat(ctx context.Context, path string) (*zk.Stat, error) {
	if err := b.syncData(ctx, path); err != nil {
		return nil, err
	}
	type r struct {
		ok bool
		st *zk.Stat
	}
	v, err := call(ctx, func() (r, error) {
		ok, st, err := b.data.conn.Exists(path)
		return r{ok, st}, err
	})
	if err != nil || !v.ok {
		return nil, err
	}
	return v.st, nil
}

// release deletes the grant's lock node if it is still granted (version
// 1) and marks its term released, in one multi from the data session (any
// session may delete it), and closes the grant's session. When the lock
// node is gone, the term node says why (whyGone): released before, or
// never this owner's fence (refused); or expired with nobody granted since
// — then the release is allowed and changes nothing (the key is already
// free), and it marks the term released so that a second one is refused.
func (b *Backend) release(ctx context.Context, req backend.Request) (backend.Response, error) {
	path, term := b.node(req.Key, req.Owner, req.Fence), b.term(req.Key, req.Owner, req.Fence)
	mr, err := call(ctx, func() ([]zk.MultiResponse, error) {
		return b.data.conn.Multi(&zk.DeleteRequest{Path: path, Version: 1},
			&zk.SetDataRequest{Path: term, Data: []byte("released"), Version: 0})
	})
	switch {
	case err == nil:
		if s := b.lookup(req.Key, req.Fence); s != nil && s.owner == req.Owner {
			b.forget(s)
		}
		return backend.Response{OK: true}, nil
	case len(mr) == 2 && errors.Is(mr[0].Error, zk.ErrBadVersion):
		return backend.Response{Reason: machine.ReasonNotHolder}, nil // a waiting node, never granted
	case len(mr) != 2 || !errors.Is(mr[0].Error, zk.ErrNoNode):
		return backend.Response{}, err
	}
	why, err := b.whyGone(ctx, req)
	if err != nil {
		return backend.Response{}, err
	}
	if why != machine.ReasonExpired {
		return backend.Response{Reason: why}, nil
	}
	// Expired, not released: refused if anyone was granted since (the
	// lease's next holder keeps it), else allowed.
	later, err := b.laterTerm(ctx, req.Key, req.Fence)
	if err != nil {
		return backend.Response{}, err
	}
	if later {
		return backend.Response{Reason: machine.ReasonNotHolder}, nil
	}
	_, err = call(ctx, func() (*zk.Stat, error) { return b.data.conn.Set(term, []byte("released"), 0) })
	switch {
	case err == nil:
		return backend.Response{OK: true}, nil
	case errors.Is(err, zk.ErrBadVersion):
		return backend.Response{Reason: machine.ReasonNotHolder}, nil // another release came first
	}
	return backend.Response{}, err
}

// whyGone says why the lock node of req's grant is gone (or never was):
// stale-fence when the owner holds the lease under another fence; else,
// from the term node, not-holder when it was never granted to this owner
// under this fence or was released, and expired when it ended unreleased.
func (b *Backend) whyGone(ctx context.Context, req backend.Request) (string, error) {
	mine, err := b.holdsOther(ctx, req)
	if err != nil {
		return "", err
	}
	if mine {
		return machine.ReasonStaleFence, nil
	}
	st, err := b.stat(ctx, b.term(req.Key, req.Owner, req.Fence))
	switch {
	case err != nil:
		return "", err
	case st == nil, st.Version > 0: // never granted, or released
		return machine.ReasonNotHolder, nil
	}
	return machine.ReasonExpired, nil
}

// holdsOther reports whether req's owner holds a granted lock node on the
// key under a fence other than req's.
func (b *Backend) holdsOther(ctx context.Context, req backend.Request) (bool, error) {
	dir := b.lockDir(req.Key)
	if err := b.syncData(ctx, dir); err != nil {
		return false, err
	}
	children, err := call(ctx, func() ([]string, error) {
		c, _, err := b.data.conn.Children(dir)
		return c, err
	})
	if err != nil {
		return false, err
	}
	prefix := escape(req.Owner) + "-"
	for _, c := range children {
		if !strings.HasPrefix(c, prefix) || len(c) != len(prefix)+10 || seqOf(c)+1 == req.Fence {
			continue
		}
		st, err := b.stat(ctx, dir+"/"+c)
		if err != nil {
			return false, err
		}
		if st != nil && st.Version == 1 {
			return true, nil
		}
	}
	return false, nil
}

// laterTerm reports whether anyone was granted the key under a fence
// larger than fence (its term node exists, whatever became of the lease).
func (b *Backend) laterTerm(ctx context.Context, key string, fence int64) (bool, error) {
	if err := b.syncData(ctx, b.termDir(key)); err != nil {
		return false, err
	}
	children, err := call(ctx, func() ([]string, error) {
		c, _, err := b.data.conn.Children(b.termDir(key))
		return c, err
	})
	if err != nil {
		return false, err
	}
	for _, c := range children {
		if seqOf(c)+1 > fence {
			return true, nil
		}
	}
	return false, nil
}

// write is the fenced write: one multi that checks the grant's lock node
// (it exists: the session is alive and the lease not released; version 1:
// it was granted; the owner and fence are in its name) and sets the data.
// Unfenced: a plain setData.
func (b *Backend) write(ctx context.Context, req backend.Request) (backend.Response, error) {
	data := b.dataPath(req.Key)
	if !b.fenced {
		_, err := call(ctx, func() (*zk.Stat, error) { return b.data.conn.Set(data, []byte(req.Value), -1) })
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true}, nil
	}
	mr, err := call(ctx, func() ([]zk.MultiResponse, error) {
		return b.data.conn.Multi(
			&zk.CheckVersionRequest{Path: b.node(req.Key, req.Owner, req.Fence), Version: 1},
			&zk.SetDataRequest{Path: data, Data: []byte(req.Value), Version: -1})
	})
	switch {
	case err == nil:
		return backend.Response{OK: true}, nil
	case len(mr) == 2 && errors.Is(mr[0].Error, zk.ErrNoNode):
		// Expired, released, or never this owner's fence: nothing was
		// written; the term node says which, for the reason.
		why, err := b.whyGone(ctx, req)
		if err != nil {
			why = machine.ReasonNotHolder // the refusal is definite; only its reason is unknown
		}
		return backend.Response{Reason: why}, nil
	case len(mr) == 2 && errors.Is(mr[0].Error, zk.ErrBadVersion):
		return backend.Response{Reason: machine.ReasonNotHolder}, nil // a waiting node, never granted
	}
	return backend.Response{}, err
}

// read syncs the data session with the leader, then reads the data node:
// a read on a follower could otherwise miss a write another session has
// had acknowledged. Version 0 is the node as created: nothing written yet.
func (b *Backend) read(ctx context.Context, key string) (backend.Response, error) {
	data := b.dataPath(key)
	if err := b.syncData(ctx, data); err != nil {
		return backend.Response{}, err
	}
	type r struct {
		v  []byte
		st *zk.Stat
	}
	v, err := call(ctx, func() (r, error) {
		d, st, err := b.data.conn.Get(data)
		return r{d, st}, err
	})
	if err != nil {
		return backend.Response{}, err
	}
	resp := backend.Response{OK: true}
	if v.st.Version > 0 {
		resp.Value, resp.HasValue = string(v.v), true
	}
	return resp, nil
}

// Cleanup deletes every znode under the root, the root, and /leasecheck
// when the root was in it and nothing else is.
func (b *Backend) Cleanup(ctx context.Context) error {
	if err := b.deleteTree(ctx, b.root, 0); err != nil {
		return err
	}
	if parent := b.root[:strings.LastIndex(b.root, "/")]; parent == "/leasecheck" {
		call(ctx, func() (struct{}, error) { return struct{}{}, b.data.conn.Delete(parent, -1) })
	}
	return nil
}

func (b *Backend) deleteTree(ctx context.Context, p string, depth int) error {
	if depth > 8 {
		return fmt.Errorf("zookeeper: cleanup: %s is deeper than the backend's layout", p)
	}
	for try := 0; try < 5; try++ {
		children, err := call(ctx, func() ([]string, error) {
			c, _, err := b.data.conn.Children(p)
			return c, err
		})
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, c := range children {
			if err := b.deleteTree(ctx, p+"/"+c, depth+1); err != nil {
				return err
			}
		}
		_, err = call(ctx, func() (struct{}, error) { return struct{}{}, b.data.conn.Delete(p, -1) })
		if err == nil || errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if !errors.Is(err, zk.ErrNotEmpty) {
			return err
		}
	}
	return fmt.Errorf("zookeeper: cleanup: %s keeps getting new children", p)
}

// Close closes every session (a live lease session's close releases its
// lease on the server) and waits for them, a few seconds at most.
func (b *Backend) Close() error {
	b.mu.Lock()
	b.closed = true
	ss := b.sessions
	b.sessions = nil
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
	return nil
}
