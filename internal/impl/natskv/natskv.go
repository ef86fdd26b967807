package natskv

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Uncertainty is the clock uncertainty declared for histories: how far
// the server's lease clock may stray from the client's timeline. A key's
// TTL runs from the timestamp the server gives its message when it
// stores it — after the request was sent — so it never ends before the
// call plus the TTL (the adapter rounds TTLs up to the whole seconds the
// server keeps); the server removes it late, which ExpiryLateness covers.
// TestExpiryLateness measures both: no lease ended before its call plus
// the TTL, and the removal came 0.24 to 0.36 s after the answer plus the
// TTL, the worst of 8 leases in each of 6 runs on a shared 2-core machine.
// 250 ms is left for the server's timer and wall clock.
const Uncertainty = 250 * time.Millisecond

// ExpiryLateness is how late, past Uncertainty, the server may still
// treat an expired key as held (backend.Info.ExpiryLateness): the expiry
// runs on the server's timer goroutine, which a loaded machine delays, and
// on a cluster the removal is a Raft proposal of the stream's leader.
const ExpiryLateness = 2 * time.Second

// markerTTL is how long the bucket keeps the marker a TTL expiry leaves
// (LimitMarkerTTL, required for per-key TTLs).
const markerTTL = time.Hour

// Info describes the fenced backend ("nats-kv").
func Info() backend.Info { return info(true) }

// UnfencedInfo describes the unfenced backend ("nats-kv-unfenced"): the
// same lock, a plain Put.
func UnfencedInfo() backend.Info { return info(false) }

func info(fenced bool) backend.Info {
	i := backend.Info{
		Name:           "nats-kv",
		FenceSource:    "the revision (stream sequence) of the Create that took lock.K: increasing, with gaps",
		FencedWrite:    "publish data.K with Nats-Expected-Last-Subject-Sequence = lock.K's revision read with the holder's value (…-Subject: lock.K)",
		Fences:         backend.IncreasingFences,
		Writes:         backend.CheckedWrites,
		Uncertainty:    Uncertainty,
		ExpiryLateness: ExpiryLateness,
		TTLGranularity: time.Second,
		MinTTL:         time.Second,
	}
	if !fenced {
		i.Name = "nats-kv-unfenced"
		i.Writes = backend.UncheckedWrites
		i.FencedWrite = "none: a plain Put(data.K) (unsafe on purpose)"
	}
	return i
}

// Backend is a NATS JetStream key-value lock client (package doc). Safe
// for concurrent use: it keeps nothing between calls but the connection,
// every decision is the server's record.
type Backend struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	stream  jetstream.Stream
	subj    string // "$KV.<bucket>."
	fenced  bool
	dropTTL bool
}

// Options are how Open connects and creates the bucket.
type Options struct {
	// Replicas of the bucket's stream (1; 3 on a 3-server cluster).
	Replicas int
	// Fenced: writes are checked against the lock key (Info); false is
	// a plain Put (UnfencedInfo).
	Fenced bool
	// Direct keeps the bucket's direct gets (the KV default: a Get may be
	// answered by any replica, so on a cluster it may be stale); false
	// turns them off, so every Get is the stream leader's.
	Direct bool
	// DropTTLOnRenew renews with KeyValue.Update as it is, which drops
	// the key's per-key TTL (the package doc: a renewed lock never
	// expires); false, the adapter's renew, sends Update's own request
	// with the TTL again (Nats-TTL).
	DropTTLOnRenew bool
}

// Open connects to the NATS server(s) at addrs (host:port, comma
// separated) and creates (or binds) the bucket: per-key TTLs on
// (LimitMarkerTTL), one revision per key, file storage.
func Open(ctx context.Context, addrs, bucket string, o Options) (*Backend, error) {
	var urls []string
	for _, a := range strings.Split(addrs, ",") {
		urls = append(urls, "nats://"+a)
	}
	// One Do is at most one effect: the client retries nothing itself
	// (no reconnect buffer: a publish while disconnected fails at once).
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond),
		nats.ReconnectBufSize(-1), nats.Timeout(2*time.Second), nats.Name("leasecheck"))
	if err != nil {
		return nil, fmt.Errorf("nats: connect %s: %w", addrs, err)
	}
	b, err := bind(ctx, nc, bucket, o)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return b, nil
}

func bind(ctx context.Context, nc *nats.Conn, bucket string, o Options) (*Backend, error) {
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1))
	if err != nil {
		return nil, err
	}
	if o.Replicas < 1 {
		o.Replicas = 1
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// Created only when missing, never updated: CreateOrUpdate would turn
	// direct gets back on under the clients already bound without them
	// (their gets then have no responders).
	st, err := js.Stream(cctx, "KV_"+bucket)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateKeyValue(cctx, jetstream.KeyValueConfig{
			Bucket: bucket, History: 1, Storage: jetstream.FileStorage, Replicas: o.Replicas, LimitMarkerTTL: markerTTL,
		})
		if err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
			return nil, fmt.Errorf("nats: creating bucket %s: %w", bucket, err)
		}
		st, err = js.Stream(cctx, "KV_"+bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("nats: bucket %s: %w", bucket, err)
	}
	if cfg := st.CachedInfo().Config; cfg.AllowDirect != o.Direct {
		cfg.AllowDirect = o.Direct
		if st, err = js.UpdateStream(cctx, cfg); err != nil {
			return nil, fmt.Errorf("nats: bucket %s: setting direct gets: %w", bucket, err)
		}
	}
	kv, err := js.KeyValue(cctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("nats: bucket %s: %w", bucket, err)
	}
	return &Backend{nc: nc, js: js, kv: kv, stream: st, subj: "$KV." + bucket + ".", fenced: o.Fenced, dropTTL: o.DropTTLOnRenew}, nil
}

// Keys in the bucket, for the lease key K (escaped: keyName).
func lockKey(k string) string { return "lock." + keyName(k) }
func termKey(k string) string { return "term." + keyName(k) }
func dataKey(k string) string { return "data." + keyName(k) }

// keyName makes s one KV key token: letters, digits, '-' and '_' stay,
// every other byte is =XX ('.' separates tokens, '=' is the escape).
func keyName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "=%02X", c)
		}
	}
	if b.Len() == 0 {
		return "="
	}
	return b.String()
}

// BucketName makes a bucket name of s (letters, digits, '-', '_').
func BucketName(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// lockState is the server's record of lock.K: its last message.
type lockState struct {
	seq      uint64 // the last message's sequence; 0: none
	live     bool   // a put: someone holds it (or it expired and is not removed yet)
	released bool   // a delete marker: released
	owner    string
	fence    int64
}

// lock reads lock.K's last message from the stream (the leader's, unless
// the bucket keeps direct gets).
func (b *Backend) lock(ctx context.Context, key string) (lockState, error) {
	m, err := b.stream.GetLastMsgForSubject(ctx, b.subj+lockKey(key))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return lockState{}, nil
	}
	if err != nil {
		return lockState{}, err
	}
	st := lockState{seq: m.Sequence}
	switch {
	case m.Header.Get(jetstream.MarkerReasonHeader) != "":
		// A TTL expiry's marker (MaxAge): free, whose lease is the term's.
	case m.Header.Get("KV-Operation") != "":
		st.released = true
	default:
		st.live = true
		st.owner, st.fence = parseHolder(string(m.Data), m.Sequence)
	}
	return st, nil
}

// The lock's value: the owner at the Create (whose revision is the fence),
// "owner fence" once renewed (a renew's revision is not the fence).
func holderValue(owner string, fence int64) string { return owner + " " + strconv.FormatInt(fence, 10) }

func parseHolder(v string, seq uint64) (string, int64) {
	if i := strings.LastIndexByte(v, ' '); i >= 0 {
		if f, err := strconv.ParseInt(v[i+1:], 10, 64); err == nil {
			return v[:i], f
		}
	}
	return v, int64(seq)
}

// term reads term.K: the owner and fence of the last grant whose acquire
// was answered ok (ok false: none yet).
func (b *Backend) term(ctx context.Context, key string) (owner string, fence int64, ok bool, err error) {
	m, err := b.stream.GetLastMsgForSubject(ctx, b.subj+termKey(key))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	owner, fence = parseHolder(string(m.Data), 0)
	return owner, fence, fence > 0, nil
}

// notLive is the refusal of a renew, release or write by owner with
// fence when lock.K holds no live lease: expired when it was owner's grant
// of fence (the term says so), not-holder otherwise.
func (b *Backend) notLive(ctx context.Context, key, owner string, fence int64, st lockState) (mine bool, reason string, err error) {
	if st.released {
		return false, machine.ReasonNotHolder, nil
	}
	to, tf, ok, err := b.term(ctx, key)
	if err != nil {
		return false, "", err
	}
	if ok && to == owner && tf == fence {
		return true, machine.ReasonExpired, nil
	}
	return false, machine.ReasonNotHolder, nil
}

// holderRefusal is the refusal of owner with fence when st is a live
// grant: not-holder for another owner, stale-fence for another fence of
// the same owner; "" when it is owner's grant of fence.
func holderRefusal(st lockState, owner string, fence int64) string {
	switch {
	case st.owner != owner:
		return machine.ReasonNotHolder
	case st.fence != fence:
		return machine.ReasonStaleFence
	}
	return ""
}

// casTries is how often an op re-reads lock.K when its compare-and-set
// lost to a change (a renew, an expiry) between its read and its write: a
// lost compare-and-set has no effect, so trying again keeps one Do at most
// one effect.
const casTries = 4

// wrongLastSeq: the server refused a publish because the subject's last
// sequence was not the one expected (nothing was stored).
func wrongLastSeq(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// granted is the TTL the server applies: whole seconds (it truncates a
// Nats-TTL to the second, so the adapter rounds up first), at least one.
func granted(ttl time.Duration) time.Duration {
	g := (ttl + time.Second - 1).Truncate(time.Second)
	return max(g, time.Second)
}

// Do performs one lease operation (the package doc's table).
func (b *Backend) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
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
		e, err := b.kv.Get(ctx, dataKey(req.Key))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return backend.Response{OK: true}, nil
		}
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true, Value: string(e.Value()), HasValue: true}, nil
	}
	return backend.Response{}, fmt.Errorf("nats: unknown op %v", req.Kind)
}

func (b *Backend) acquire(ctx context.Context, req backend.Request) (backend.Response, error) {
	ttl := granted(req.TTL)
	rev, err := b.kv.Create(ctx, lockKey(req.Key), []byte(req.Owner), jetstream.KeyTTL(ttl))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return backend.Response{Reason: machine.ReasonHeld}, nil
	}
	if err != nil {
		// Create's second try (over a delete marker) reports a lost
		// compare-and-set as it is: the lock changed meanwhile, held or
		// freed; not a refusal this Do can vouch for.
		return backend.Response{}, err
	}
	// The term: who was granted which fence, checked against lock.K
	// still being this grant, so it survives the expiry's marker.
	if _, err := b.js.PublishMsg(ctx, &nats.Msg{Subject: b.subj + termKey(req.Key), Data: []byte(holderValue(req.Owner, int64(rev)))},
		jetstream.WithExpectLastSequenceForSubject(rev, b.subj+lockKey(req.Key))); err != nil {
		return backend.Response{}, fmt.Errorf("nats: granted fence %d, but its term was not recorded: %w", rev, err)
	}
	r := backend.Response{OK: true, Fence: int64(rev)}
	if ttl != req.TTL {
		r.TTL = ttl
	}
	return r, nil
}

// held reads req.Key's lock and says why req's owner, under req's fence,
// does not hold it live ("": it does) — what a renew and a write check
// before their compare-and-set on the state read.
func (b *Backend) held(ctx context.Context, req backend.Request) (lockState, string, error) {
	st, err := b.lock(ctx, req.Key)
	if err != nil {
		return st, "", err
	}
	if !st.live {
		_, reason, err := b.notLive(ctx, req.Key, req.Owner, req.Fence, st)
		return st, reason, err
	}
	return st, holderRefusal(st, req.Owner, req.Fence), nil
}

func (b *Backend) renew(ctx context.Context, req backend.Request) (backend.Response, error) {
	ttl := granted(req.TTL)
	for range casTries {
		st, reason, err := b.held(ctx, req)
		if err != nil || reason != "" {
			return backend.Response{Reason: reason}, err
		}
		v := []byte(holderValue(req.Owner, req.Fence))
		if b.dropTTL {
			_, err = b.kv.Update(ctx, lockKey(req.Key), v, st.seq)
		} else {
			_, err = b.js.PublishMsg(ctx, &nats.Msg{Subject: b.subj + lockKey(req.Key), Data: v},
				jetstream.WithExpectLastSequencePerSubject(st.seq), jetstream.WithMsgTTL(ttl))
		}
		if wrongLastSeq(err) {
			continue
		}
		if err != nil {
			return backend.Response{}, err
		}
		r := backend.Response{OK: true}
		if ttl != req.TTL {
			r.TTL = ttl
		}
		return r, nil
	}
	return backend.Response{}, errors.New("nats: lock changed under every renew")
}

func (b *Backend) release(ctx context.Context, req backend.Request) (backend.Response, error) {
	for range casTries {
		st, err := b.lock(ctx, req.Key)
		if err != nil {
			return backend.Response{}, err
		}
		if st.live {
			if r := holderRefusal(st, req.Owner, req.Fence); r != "" {
				return backend.Response{Reason: r}, nil
			}
		} else {
			mine, reason, err := b.notLive(ctx, req.Key, req.Owner, req.Fence, st)
			if err != nil {
				return backend.Response{}, err
			}
			if !mine {
				return backend.Response{Reason: reason}, nil
			}
			// Owner's own lease expired and nobody took it since: the
			// release is allowed; the delete marker below is checked
			// against the expiry's, so a grant meanwhile is not freed.
		}
		m := nats.NewMsg(b.subj + lockKey(req.Key))
		m.Header.Set("KV-Operation", "DEL")
		_, err = b.js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(st.seq))
		if wrongLastSeq(err) {
			continue
		}
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true}, nil
	}
	return backend.Response{}, errors.New("nats: lock changed under every release")
}

func (b *Backend) write(ctx context.Context, req backend.Request) (backend.Response, error) {
	if !b.fenced {
		if _, err := b.kv.Put(ctx, dataKey(req.Key), []byte(req.Value)); err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true}, nil
	}
	for range casTries {
		st, reason, err := b.held(ctx, req)
		if err != nil || reason != "" {
			return backend.Response{Reason: reason}, err
		}
		// Stored only while lock.K's last message is still the one read:
		// the server compares, in the step that stores data.K.
		_, err = b.js.PublishMsg(ctx, &nats.Msg{Subject: b.subj + dataKey(req.Key), Data: []byte(req.Value)},
			jetstream.WithExpectLastSequenceForSubject(st.seq, b.subj+lockKey(req.Key)))
		if wrongLastSeq(err) {
			continue
		}
		if err != nil {
			return backend.Response{}, err
		}
		return backend.Response{OK: true}, nil
	}
	return backend.Response{}, errors.New("nats: lock changed under every write")
}

// Cleanup deletes the bucket.
func (b *Backend) Cleanup(ctx context.Context) error {
	name := strings.TrimSuffix(strings.TrimPrefix(b.subj, "$KV."), ".")
	err := b.js.DeleteKeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	return err
}

// Close closes the connection.
func (b *Backend) Close() error {
	b.nc.Close()
	return nil
}
