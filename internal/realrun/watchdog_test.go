package realrun_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// stoppable is an in-process server that can hang (every request waits
// until it resumes or its context ends: a SIGSTOPped process), die (every
// request fails at once: connection refused) or restart (hang for a while,
// then resume). It is the Target's Server and Restarter, so the runner's
// own server faults use it too.
type stoppable struct {
	backend.Backend // the in-process coordinator

	mu      sync.Mutex
	hung    chan struct{} // closed on resume; nil when running
	dead    bool
	answers int
	// after, when > 0, makes the server hang (or die, when die is set)
	// once it has answered that many requests; at is when it did.
	after int
	die   bool
	at    time.Time
}

func (s *stoppable) Close() error { return nil }

// wait blocks while the server hangs; an error when it is dead or ctx ends.
func (s *stoppable) wait(ctx context.Context) error {
	s.mu.Lock()
	if s.after > 0 && s.answers >= s.after && s.at.IsZero() {
		s.at = time.Now()
		if s.die {
			s.dead = true
		} else {
			s.hung = make(chan struct{})
		}
	}
	dead, hung := s.dead, s.hung
	s.mu.Unlock()
	if dead {
		return errors.New("connection refused")
	}
	if hung != nil {
		select {
		case <-hung:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (s *stoppable) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	if err := s.wait(ctx); err != nil {
		return backend.Response{}, err
	}
	resp, err := s.Backend.Do(ctx, req)
	if err == nil {
		s.mu.Lock()
		s.answers++
		s.mu.Unlock()
	}
	return resp, err
}

func (s *stoppable) ServerNow(ctx context.Context) (time.Time, error) {
	if err := s.wait(ctx); err != nil {
		return time.Time{}, err
	}
	return s.Backend.(backend.Clock).ServerNow(ctx)
}

func (s *stoppable) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hung == nil {
		s.hung = make(chan struct{})
	}
	return nil
}

func (s *stoppable) Cont() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hung != nil {
		close(s.hung)
		s.hung = nil
	}
	return nil
}

func (s *stoppable) Restart(ctx context.Context, down time.Duration) error {
	s.Stop()
	defer s.Cont()
	select {
	case <-time.After(down):
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (s *stoppable) target(info backend.Info) realrun.Target {
	return realrun.Target{Info: info, Server: s, Open: func(context.Context, string) (backend.Backend, error) { return s, nil }}
}

// stopOnly hides Restart: a server the harness can only stop and resume.
type stopOnly struct{ *stoppable }

func (s stopOnly) Restart() {} // not realrun.Restarter's signature

func newStoppable() *stoppable {
	return &stoppable{Backend: backend.InProcess(memstore.New(), time.Microsecond, nil)}
}

// TestBackendStopsAnswering: a backend that hangs or dies mid-run ends a
// 60-second workload long before its end, with ErrStopped, a message that
// says so, and the partial history recorded so far. DeadAfter is 5 s; the
// bound asserted is loose (a loaded machine schedules late), the point is
// that the run does not wait out its workload.
func TestBackendStopsAnswering(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: 6s")
	}
	for _, die := range []bool{false, true} {
		name := "hangs"
		if die {
			name = "dies"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStoppable()
			s.after, s.die = 60, die
			began := time.Now()
			res, err := realrun.Run(context.Background(), s.target(backend.InProcessInfo("mem")),
				realrun.Config{Seed: 1, Duration: 60 * time.Second, TTL: 300 * time.Millisecond})
			ended := time.Now()
			s.mu.Lock()
			at := s.at
			s.mu.Unlock()
			if at.IsZero() {
				t.Fatalf("the server never stopped (%d answers): err %v", s.answers, err)
			}
			t.Logf("stopped %v into the run; Run returned %v later: %v", at.Sub(began).Round(time.Millisecond), ended.Sub(at).Round(time.Millisecond), err)
			if !errors.Is(err, realrun.ErrStopped) || !strings.Contains(err.Error(), "stopped answering") {
				t.Fatalf("err %v, want ErrStopped", err)
			}
			// Not declared dead before DeadAfter of silence; and it was
			// declared dead: Run did not wait out its 60s workload (that
			// bound is the workload, not a speed).
			if d := ended.Sub(at); d < realrun.DeadAfter(300*time.Millisecond) || ended.Sub(began) >= 60*time.Second {
				t.Errorf("Run returned %v after the server stopped, %v after it began; want at least DeadAfter (%v), and before the 60s workload's end", d, ended.Sub(began), realrun.DeadAfter(300*time.Millisecond))
			}
			if res == nil || res.History == nil || len(res.History.Ops) < 60 {
				t.Fatalf("no partial history with the answers before the stop: %+v", res)
			}
			var unknown int
			for _, op := range res.History.Ops {
				if !op.Returned {
					unknown++
				}
			}
			if unknown == 0 {
				t.Errorf("the partial history holds no unanswered request")
			}
		})
	}
}

// TestWatchdogQuietDuringServerFaults: a server the harness stops itself
// for longer than DeadAfter is not declared dead (the silence is the
// harness's doing), whether it can only be stopped or also restarted.
// A restart of a backend whose leases restart with a fresh TTL
// (Info.LeasesRestart) widens the history's clock uncertainty by the
// outage, a TTL and RestartGrace, and the fault's record says so.
func TestWatchdogQuietDuringServerFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: 8s")
	}
	const down = 6000 // ms, past DeadAfter's 5s
	sc := func() *scenario.Scenario {
		return &scenario.Scenario{Version: 1, Semantics: "seed", Key: "k", TTL: 300, Horizon: 8000,
			Holders: []scenario.Process{{Name: "h1", Work: slices.Repeat([]holder.Item{{Work: 180, Writes: 1}}, 40)}},
			Faults:  faults.Plan{{Kind: faults.CoordinatorCrash, Target: faults.Coordinator, At: 500, Duration: down}}}
	}
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			t.Parallel()
			s := newStoppable()
			info := backend.InProcessInfo("mem")
			tg := s.target(info)
			if restart {
				info.LeasesRestart, info.RestartGrace = true, 100*time.Millisecond
				tg = s.target(info)
			} else {
				tg.Server = stopOnly{s}
			}
			var mu sync.Mutex
			var log []string
			res, err := realrun.RunScenario(context.Background(), tg, sc(), realrun.Options{TTL: 300 * time.Millisecond,
				Log: func(f string, a ...any) { mu.Lock(); log = append(log, fmt.Sprintf(f, a...)); mu.Unlock() }})
			if err != nil {
				t.Fatalf("a server fault of the harness's own was taken for a dead backend: %v", err)
			}
			if n := res.Faults[faults.CoordinatorCrash] + res.Partial[faults.CoordinatorCrash]; n != 1 {
				t.Fatalf("coordinator-crash injected %d times, want 1", n)
			}
			u := res.History.Header.ClockUncertainty
			slack := int64((down + 300 + 100) * 1000) // µs: the outage, a TTL, the grace
			if !restart {
				if u >= slack {
					t.Errorf("clock uncertainty %dµs for a server that was only stopped; want no restart slack", u)
				}
				return
			}
			if u < slack {
				t.Errorf("clock uncertainty %dµs after a restart of a backend whose leases restart; want at least %dµs (outage, TTL, grace)", u, slack)
			}
			rec := res.History.Faults[0]
			if !strings.Contains(rec.Detail, "clock uncertainty") {
				t.Errorf("the restart's record does not say the uncertainty grows: %q", rec.Detail)
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(strings.Join(log, "\n"), "clock uncertainty +") {
				t.Errorf("the log does not say by how much the uncertainty grew:\n%s", strings.Join(log, "\n"))
			}
		})
	}
}
