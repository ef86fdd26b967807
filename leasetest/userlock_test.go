package leasetest_test

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// userLock is a lease service the way a user writes one for leasetest: a
// mutex, a map of rows, time.Now, a Do with a switch. It is not the
// reference (internal/impl/memstore) and shares no code with it, so the suite is
// tested against an implementation it has never seen. bug plants one
// mistake, each a rule of the adapter contract in impl/backend/README.md broken the way real code
// breaks it; "" is the correct service.
type userLock struct {
	cfg lockConfig
	bug string

	mu       sync.Mutex
	rows     map[string]*row
	counter  int64             // increasing fences: one counter for every key (gaps per key)
	past     map[string]bool   // release-twice-frees: every owner that ever held a key
	prev     map[string]string // zombie-grace: the previous holder of a key
	prevData map[string]string // stale-read: the value before the last write
}

// lockConfig is what the service offers, declared in its Info.
type lockConfig struct {
	fences       backend.Fences
	fencedWrites bool
	serverTime   bool // answers carry At and it implements backend.Clock
}

func (c lockConfig) info(name string) backend.Info {
	i := backend.Info{Name: name, Fences: c.fences, Writes: backend.UncheckedWrites, ServerTime: c.serverTime}
	if c.fencedWrites {
		i.Writes = backend.CheckedWrites
	}
	if !c.serverTime {
		// The lease clock is time.Now read inside Do, between the call and
		// the return the recorder measures; 1ms covers the rounding.
		i.Uncertainty = time.Millisecond
	}
	return i
}

type row struct {
	owner   string
	held    bool
	fence   int64
	exp     time.Time
	data    string
	hasData bool
}

func newUserLock(cfg lockConfig, bug string) *userLock {
	return &userLock{cfg: cfg, bug: bug, rows: map[string]*row{}, past: map[string]bool{}, prev: map[string]string{}, prevData: map[string]string{}}
}

func (m *userLock) ServerNow(context.Context) (time.Time, error) { return time.Now(), nil }

func (m *userLock) Close() error { return nil }

func refuse(why string, at time.Time) backend.Response {
	return backend.Response{Reason: why, At: at}
}

// errBusy is refusal-as-error's answer: an error where a refusal is known.
var errBusy = errors.New("userlock: lock is busy")

func (m *userLock) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	if err := ctx.Err(); err != nil {
		return backend.Response{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	at := time.Time{}
	if m.cfg.serverTime {
		at = now
	}
	r := m.rows[req.Key]
	if r == nil {
		r = &row{}
		m.rows[req.Key] = r
	}
	ttl := req.TTL
	switch m.bug {
	case "early-expiry":
		ttl = ttl * 3 / 4
	case "late-expiry":
		ttl *= 2
	}
	live := r.held && now.Before(r.exp)
	ok := backend.Response{OK: true, At: at}
	switch req.Kind {
	case model.Acquire:
		switch {
		case live && m.bug == "acquire-steals":
		case live && m.bug == "reentrant" && r.owner == req.Owner:
		case r.held && m.bug == "same-owner-locked-out" && r.owner == req.Owner:
			return refuse("held", at), nil
		case live && m.bug == "refusal-as-error":
			return backend.Response{}, errBusy
		case live:
			return refuse("held", at), nil
		}
		exp := now.Add(ttl)
		if m.bug == "grant-from-old-expiry" && !r.exp.IsZero() {
			exp = r.exp.Add(ttl)
		}
		if r.held && r.owner != req.Owner {
			m.prev[req.Key] = r.owner
		}
		r.fence = m.nextFence(r)
		r.owner, r.held, r.exp = req.Owner, true, exp
		m.past[req.Key+"\x00"+req.Owner] = true
		ok.Fence = r.fence
		switch {
		case m.cfg.fences == backend.NoFences && m.bug != "fence-from-fenceless":
			ok.Fence = 0
		case m.bug == "fence-not-granted":
			ok.Fence = 0
		}
		return ok, nil

	case model.Renew:
		if !r.held || r.owner != req.Owner && m.bug != "renew-any-owner" {
			return refuse("not-holder", at), nil
		}
		if req.Fence != 0 && req.Fence != r.fence && m.bug != "renew-ignores-fence" {
			return refuse("stale-fence", at), nil
		}
		if !live && m.bug != "renew-after-expiry" {
			return refuse("expired", at), nil
		}
		switch m.bug {
		case "renew-from-old-expiry":
			r.exp = r.exp.Add(ttl)
		case "renew-no-extend":
		case "renew-too-soon":
			if r.exp.Sub(now) > ttl-50*time.Millisecond {
				return refuse("too-soon", at), nil
			}
			r.exp = now.Add(ttl)
		default:
			r.exp = now.Add(ttl)
		}
		return ok, nil

	case model.Release:
		owns := r.held && r.owner == req.Owner
		switch {
		case m.bug == "release-any-owner" && r.held:
		case m.bug == "release-twice-frees" && r.held && m.past[req.Key+"\x00"+req.Owner]:
		case !owns:
			return refuse("not-holder", at), nil
		}
		// release-twice-frees looks the owner up among the key's past
		// holders, and takes the fence it finds there for good.
		if req.Fence != 0 && req.Fence != r.fence && m.bug != "release-ignores-fence" && m.bug != "release-twice-frees" {
			return refuse("stale-fence", at), nil
		}
		if !live && m.bug == "release-after-expiry-refused" {
			return refuse("expired", at), nil
		}
		switch m.bug {
		case "release-noop":
		case "released-waits":
			r.owner = "" // nobody's, but held until it expires
		default:
			r.held = false
		}
		return ok, nil

	case model.Write:
		grace := m.bug == "zombie-grace" && r.held && req.Owner == m.prev[req.Key]
		if m.cfg.fencedWrites && !grace {
			switch {
			case !r.held || r.owner != req.Owner && m.bug != "write-any-owner":
				return refuse("not-holder", at), nil
			}
			if !live && m.bug != "write-no-deadline" {
				return refuse("expired", at), nil
			}
			if m.cfg.fences != backend.NoFences && req.Fence != r.fence && m.bug != "write-ignores-fence" {
				return refuse("stale-fence", at), nil
			}
		}
		if m.bug == "lost-write" {
			return ok, nil
		}
		if m.bug == "stale-read" {
			m.prevData[req.Key] = r.data
		}
		r.data, r.hasData = req.Value, true
		return ok, nil

	case model.Read:
		ok.Value, ok.HasValue = r.data, r.hasData
		switch m.bug {
		case "stale-read":
			ok.Value = m.prevData[req.Key]
			ok.HasValue = ok.Value != ""
		case "read-empty-as-value":
			ok.HasValue = true
		}
		return ok, nil
	}
	return backend.Response{}, errors.New("userlock: unknown op " + req.Kind.String())
}

// nextFence numbers a grant on r: sequential per key, or one counter for
// all keys (increasing, with gaps). The fence-restarts bug counts from 1
// again after a release; fence-gaps skips numbers under sequential fences.
func (m *userLock) nextFence(r *row) int64 {
	switch {
	case m.bug == "fence-restarts" && r.fence > 0 && !r.held:
		return 1
	case m.bug == "fence-restarts":
		return r.fence + 1
	case m.cfg.fences == backend.IncreasingFences:
		m.counter += 3
		return m.counter
	case m.bug == "fence-gaps":
		return r.fence + 2
	}
	return r.fence + 1
}
