package leasetest

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/impl/memstore"
)

// The suite is itself tested against deliberately broken in-process
// coordinators: small Clocked wrappers around the reference, each with one
// planted bug from the article's list. Every property must catch at least
// one of them, and the reference must pass every property.

const testTTL = 300 * time.Millisecond

func inProcess(c backend.Clocked) Factory {
	return func() (backend.Backend, func(), error) {
		return backend.InProcess(c, time.Millisecond, nil), nil, nil
	}
}

func opts() Options {
	return Options{Info: backend.InProcessInfo("memstore"), TTL: testTTL}
}

// ref is the reference, embedded by the mutants.
type ref struct{ *memstore.Store }

// noFence: the write checks holder and deadline, not the fence.
type noFence struct{ ref }

func (m noFence) Write(key, owner string, fence int64, value string, now int64) error {
	return m.Store.Write(key, owner, m.Fence(key), value, now)
}

// noExpiry: a lease never expires (a lock, not a lease).
type noExpiry struct{ ref }

func (m noExpiry) Acquire(key, owner string, ttl, now int64) (int64, bool) {
	return m.Store.Acquire(key, owner, 1<<40, now)
}

func (m noExpiry) Renew(key, owner string, ttl, fence, now int64) bool {
	return m.Store.Renew(key, owner, 1<<40, fence, now)
}

// renewAfterExpiry: renew checks the holder only, not the deadline.
type renewAfterExpiry struct{ ref }

func (m renewAfterExpiry) Renew(key, owner string, ttl, fence, now int64) bool {
	if h, _, held := m.Holder(key); !held || h != owner || fence != 0 && fence != m.Fence(key) {
		return false
	}
	return m.Store.Renew(key, owner, ttl, fence, m.expiry(key)-1)
}

func (m ref) expiry(key string) int64 { _, e, _ := m.Holder(key); return e }

// earlyExpiry: leases last half their TTL.
type earlyExpiry struct{ ref }

func (m earlyExpiry) Acquire(key, owner string, ttl, now int64) (int64, bool) {
	return m.Store.Acquire(key, owner, ttl/2, now)
}

func (m earlyExpiry) Renew(key, owner string, ttl, fence, now int64) bool {
	return m.Store.Renew(key, owner, ttl/2, fence, now)
}

// writeNoDeadline: the write checks holder and fence, not the deadline.
type writeNoDeadline struct{ ref }

func (m writeNoDeadline) Write(key, owner string, fence int64, value string, now int64) error {
	return m.Store.Write(key, owner, fence, value, m.expiry(key)-1)
}

// fenceReset: every grant gets fence 1.
type fenceReset struct {
	ref
	base map[string]int64
}

func (m fenceReset) Acquire(key, owner string, ttl, now int64) (int64, bool) {
	f, ok := m.Store.Acquire(key, owner, ttl, now)
	if ok {
		m.base[key] = f - 1
	}
	return f - m.base[key], ok
}

func (m fenceReset) shift(key string, f int64) int64 {
	if f == 0 {
		return 0
	}
	return f + m.base[key]
}

func (m fenceReset) Renew(key, owner string, ttl, fence, now int64) bool {
	return m.Store.Renew(key, owner, ttl, m.shift(key, fence), now)
}

func (m fenceReset) Release(key, owner string, fence int64) bool {
	return m.Store.Release(key, owner, m.shift(key, fence))
}

func (m fenceReset) Write(key, owner string, fence int64, value string, now int64) error {
	return m.Store.Write(key, owner, m.shift(key, fence), value, now)
}

// releaseAnyone: release frees the key whoever asks.
type releaseAnyone struct{ ref }

func (m releaseAnyone) Release(key, owner string, fence int64) bool {
	h, _, held := m.Holder(key)
	if !held {
		return false
	}
	return m.Store.Release(key, h, 0)
}

// noMutex: acquire always succeeds (steals the lease).
type noMutex struct{ ref }

func (m noMutex) Acquire(key, owner string, ttl, now int64) (int64, bool) {
	_, e, held := m.Holder(key)
	if held && now < e {
		return m.Store.Acquire(key, owner, ttl, e)
	}
	return m.Store.Acquire(key, owner, ttl, now)
}

// renewNoExtend: renew answers ok and does nothing.
type renewNoExtend struct{ ref }

func (m renewNoExtend) Renew(key, owner string, ttl, fence, now int64) bool {
	h, e, held := m.Holder(key)
	return held && h == owner && now < e && (fence == 0 || fence == m.Fence(key))
}

// lostWrite: writes are acknowledged and dropped.
type lostWrite struct{ ref }

func (m lostWrite) Write(key, owner string, fence int64, value string, now int64) error {
	if err := m.Store.Write(key, owner, fence, "", now); err != nil {
		return err
	}
	return nil
}

// plainWrite: writes are never checked (etcd-mutex's configuration).
type plainWrite struct{ ref }

func (m plainWrite) Write(key, owner string, fence int64, value string, now int64) error {
	h, e, _ := m.Holder(key)
	f := m.Fence(key)
	// Write as the holder, under its fence, while live: always accepted.
	return m.Store.Write(key, h, f, value, min(now, e-1))
}

// staleRead: reads answer the value before the last write.
type staleRead struct {
	ref
	prev, cur map[string]string
}

func (m staleRead) Write(key, owner string, fence int64, value string, now int64) error {
	err := m.Store.Write(key, owner, fence, value, now)
	if err == nil {
		m.prev[key], m.cur[key] = m.cur[key], value
	}
	return err
}

func (m staleRead) Read(key string) (string, bool) {
	v, ok := m.prev[key]
	return v, ok && v != ""
}

func localMutants() map[string]func() backend.Clocked {
	r := func() ref { return ref{memstore.New()} }
	return map[string]func() backend.Clocked{
		"noFence":          func() backend.Clocked { return noFence{r()} },
		"noExpiry":         func() backend.Clocked { return noExpiry{r()} },
		"renewAfterExpiry": func() backend.Clocked { return renewAfterExpiry{r()} },
		"earlyExpiry":      func() backend.Clocked { return earlyExpiry{r()} },
		"writeNoDeadline":  func() backend.Clocked { return writeNoDeadline{r()} },
		"fenceReset":       func() backend.Clocked { return fenceReset{r(), map[string]int64{}} },
		"releaseAnyone":    func() backend.Clocked { return releaseAnyone{r()} },
		"noMutex":          func() backend.Clocked { return noMutex{r()} },
		"renewNoExtend":    func() backend.Clocked { return renewNoExtend{r()} },
		"lostWrite":        func() backend.Clocked { return lostWrite{r()} },
		"plainWrite":       func() backend.Clocked { return plainWrite{r()} },
		"staleRead":        func() backend.Clocked { return staleRead{r(), map[string]string{}, map[string]string{}} },
	}
}

func factoryOf(mk func() backend.Clocked) Factory {
	return func() (backend.Backend, func(), error) {
		return backend.InProcess(mk(), time.Millisecond, nil), nil, nil
	}
}

// TestReference: the reference coordinator passes every property.
func TestReference(t *testing.T) {
	Run(t, factoryOf(func() backend.Clocked { return memstore.New() }), opts())
}

// TestMutants: every mutant fails some property, and every property
// catches some mutant.
func TestMutants(t *testing.T) {
	ms := localMutants()
	names := make([]string, 0, len(ms))
	for n := range ms {
		names = append(names, n)
	}
	sort.Strings(names)
	type outcome struct {
		name   string
		failed map[string][]string
	}
	ch := make(chan outcome, len(names))
	for _, n := range names {
		go func() {
			ch <- outcome{n, checkAll(context.Background(), factoryOf(ms[n]), opts())}
		}()
	}
	caught := map[string][]string{}
	for range names {
		o := <-ch
		var failing []string
		for prop, msgs := range o.failed {
			if len(msgs) > 0 {
				failing = append(failing, prop)
				caught[prop] = append(caught[prop], o.name)
			}
		}
		sort.Strings(failing)
		if len(failing) == 0 {
			t.Errorf("mutant %s passed every property", o.name)
		} else {
			t.Logf("mutant %-17s caught by %s", o.name, strings.Join(failing, ", "))
		}
	}
	for _, p := range Properties {
		if len(caught[p]) == 0 {
			t.Errorf("property %s caught no mutant", p)
		}
	}
}

// TestCheckError: Check lists failures by property.
func TestCheckError(t *testing.T) {
	err := Check(context.Background(), factoryOf(localMutants()["noFence"]), Options{Info: backend.InProcessInfo("noFence"), TTL: testTTL, Skip: []string{"Linearizable"}})
	if err == nil || !strings.Contains(err.Error(), "StaleFence: Write(A, fence 1, \"stale\") = ok") && !strings.Contains(err.Error(), "StaleFence: ") {
		t.Fatalf("Check(noFence) = %v, want a StaleFence failure", err)
	}
}
