package realrun_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
)

// stubborn is the in-process server with one write that does not end when
// its caller cancels it: it answers nothing for hold, whatever its context
// says, as a library does that bounds a read by the context's deadline and
// not by its cancellation.
type stubborn struct {
	backend.Backend
	hold time.Duration

	mu       sync.Mutex
	writes   int
	returned time.Time // when the stuck write returned
}

func (s *stubborn) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	if req.Kind == model.Write {
		s.mu.Lock()
		s.writes++
		stuck := s.writes == 3
		s.mu.Unlock()
		if stuck {
			time.Sleep(s.hold)
			s.mu.Lock()
			s.returned = time.Now()
			s.mu.Unlock()
			return backend.Response{}, context.Canceled
		}
	}
	return s.Backend.Do(ctx, req)
}

func (s *stubborn) Close() error { return nil }

func (s *stubborn) ServerNow(ctx context.Context) (time.Time, error) {
	return s.Backend.(backend.Clock).ServerNow(ctx)
}

// TestStaleSendNotSent: a holder gives up a write its library will not
// end, and decides its next request (a renewal) while it still holds the
// lease; the runner, sequential, waits for the stuck call (1.5 s, five
// TTLs). What the holder decided before the wait is not sent after it: the
// holder decides again, so nothing it decided while holding reaches the
// server after its lease ended. Sent, the renewal was refused there
// (expired) — and a write decided so, a zombie's write the harness made
// under no fault (on an unfenced store, a violation).
func TestStaleSendNotSent(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: 3s")
	}
	s := &stubborn{Backend: newStoppable().Backend, hold: 1500 * time.Millisecond}
	tg := realrun.Target{Info: backend.InProcessInfo("mem"), Open: func(context.Context, string) (backend.Backend, error) { return s, nil }}
	sc := &scenario.Scenario{Version: 1, Semantics: "seed", Key: "k", TTL: 300, Horizon: 3000,
		Holders: []scenario.Process{{Name: "h1", Timeout: 30, RenewEvery: 250, Work: slices.Repeat([]holder.Item{{Work: 60, Writes: 1}}, 30)}}}
	var mu sync.Mutex
	var log []string
	began := time.Now()
	res, err := realrun.RunScenario(context.Background(), tg, sc, realrun.Options{TTL: 300 * time.Millisecond,
		Log: func(f string, a ...any) { mu.Lock(); log = append(log, fmt.Sprintf(f, a...)); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	returned := s.returned
	s.mu.Unlock()
	if returned.IsZero() {
		t.Fatalf("the stuck write never came (%d writes)", s.writes)
	}
	var refused, after int
	for _, op := range res.History.Ops {
		if !op.Returned {
			continue
		}
		// One holder and no fault: nothing but a stale decision is refused.
		if !op.OK {
			refused++
			t.Errorf("%s refused (%s) at %dµs, the stuck call returned at %v: decided before the wait, sent after its lease ended",
				op.Kind, op.Error, op.Call, returned.Sub(began))
		}
		if op.Kind == model.Write && time.Duration(op.Call)*time.Microsecond > returned.Sub(began) {
			after++
		}
	}
	mu.Lock()
	said := strings.Join(log, "\n")
	mu.Unlock()
	if !strings.Contains(said, "did not send") {
		t.Errorf("the run does not say it held back a stale request:\n%s", said)
	}
	if after == 0 {
		t.Errorf("no write answered after the stuck call: the holder did not decide again and carry on")
	}
	t.Logf("%d writes answered after the stuck call, %d refused", after, refused)
}
