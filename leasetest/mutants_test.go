package leasetest

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/impl/mutants"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/sim"
)

// simCoordinator runs a simulator coordinator (the reference or one of
// impl/mutants' planted bugs) as a Backend on the real clock, in
// milliseconds, with At = the now it was given.
type simCoordinator struct {
	mu    sync.Mutex
	c     sim.Coordinator
	epoch time.Time
	id    uint64
}

func (s *simCoordinator) now() (int64, time.Time) {
	d := time.Since(s.epoch) / time.Millisecond
	return int64(d), s.epoch.Add(d * time.Millisecond)
}

func (s *simCoordinator) ServerNow(context.Context) (time.Time, error) {
	_, t := s.now()
	return t, nil
}

func (s *simCoordinator) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	if err := ctx.Err(); err != nil {
		return backend.Response{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now, at := s.now()
	s.id++
	rep := s.c.Apply(&holder.Request{ID: s.id, To: holder.ToCoordinator, Kind: req.Kind, Key: req.Key, Owner: req.Owner,
		TTL: int64((req.TTL + time.Millisecond - 1) / time.Millisecond), Fence: req.Fence, Value: req.Value}, now)
	r := backend.Response{OK: rep.OK, Reason: rep.Err, Fence: rep.Fence, Value: rep.Value, HasValue: rep.HasValue, At: at}
	if req.Kind == model.Read {
		r.OK = true
	}
	return r, nil
}

func (s *simCoordinator) Close() error { return nil }

// TestProjectMutants runs the suite against impl/mutants' coordinator
// mutants (the project's planted bugs). Those whose bug a real-clock,
// crash-free run can show must be caught; the others (a bug at the exact
// expiry millisecond, on restart, or with a stepped wall clock) are logged.
func TestProjectMutants(t *testing.T) {
	mustCatch := map[string]bool{
		"greedy-grant": true, "fence-not-bumped": true, "renew-after-expiry": true,
		"no-expiry": true, "release-twice-frees-next": true, "write-skips-expiry": true,
	}
	var ms []*mutants.Mutant
	for _, m := range mutants.All() {
		if m.Component == mutants.Coordinator && m.Options().NewCoordinator != nil {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		t.Skip("impl/mutants has no coordinator mutants")
	}
	var wg sync.WaitGroup
	results := make([]map[string][]string, len(ms))
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			newC := m.Options().NewCoordinator
			results[i] = checkAll(context.Background(), func() (backend.Backend, func(), error) {
				return &simCoordinator{c: newC(), epoch: time.Now()}, nil, nil
			}, Options{Info: backend.InProcessInfo(m.Name), TTL: testTTL})
		}()
	}
	wg.Wait()
	for i, m := range ms {
		var failing []string
		for p, msgs := range results[i] {
			if len(msgs) > 0 {
				failing = append(failing, p)
			}
		}
		sort.Strings(failing)
		switch {
		case len(failing) > 0:
			t.Logf("mutant %-26s caught by %s", m.Name, strings.Join(failing, ", "))
		case mustCatch[m.Name]:
			t.Errorf("mutant %s (%s) passed every property", m.Name, m.Failure)
		default:
			t.Logf("mutant %-26s not caught (%s)", m.Name, m.Failure)
		}
	}
}
