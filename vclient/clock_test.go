package vclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/vclient"
)

// clockClient reads its clock at fixed instants of true time and times
// a timer, a ticker and an AfterFunc on it.
type clockClient struct {
	read bool
	// What it saw: the clock's elapsed readings at true 1 s, 2 s and 3 s,
	// and the true instants its timer, ticks and AfterFunc fired at.
	at              [3]time.Duration
	timer, fn       time.Duration
	ticks           []time.Duration
	offsetAtStart   time.Duration
	stoppedReported bool
}

func (k *clockClient) Start(ctx context.Context, c *vclient.Candidate) {
	if !k.read {
		<-ctx.Done()
		return
	}
	clk := c.Clock()
	t0, c0 := time.Now(), clk.Now()
	k.offsetAtStart = c0.Sub(t0)
	tm := clk.NewTimer(3 * time.Second)
	tk := clk.NewTicker(time.Second)
	done := make(chan struct{})
	clk.AfterFunc(2*time.Second, func() { k.fn = time.Since(t0); close(done) })
	got := make(chan struct{})
	go func() {
		defer close(got)
		for len(k.ticks) < 4 || k.timer == 0 {
			select {
			case <-tk.C():
				k.ticks = append(k.ticks, time.Since(t0))
			case <-tm.C():
				k.timer = time.Since(t0)
			}
		}
		tk.Stop()
	}()
	for i := range 3 {
		time.Sleep(time.Until(t0.Add(time.Duration(i+1) * time.Second)))
		k.at[i] = clk.Since(c0)
	}
	<-got
	<-done
	k.stoppedReported = !tm.Stop() // fired: Stop reports it was not active
	<-ctx.Done()
}

// TestClockSkewed: a candidate's clock (Candidate.Clock) runs at the rate
// its node's clock-drift faults say from their At on, read off by its
// clock-offset, and its timers fire when it, not true time, reaches their
// deadline; the fault records say the skew reached the client. A clock
// no client read leaves its faults partial; without a fault the clock is
// true time.
func TestClockSkewed(t *testing.T) {
	// h1: 2× fast from the start, then 0.5× from true 2 s; offset +7 s.
	sc := toyScenario(1, 1, 0, 10_000,
		faults.Fault{Kind: faults.ClockOffset, Target: "h1", Amount: 7000},
		faults.Fault{Kind: faults.ClockDrift, Target: "h1", Amount: 1_000_000},
		faults.Fault{Kind: faults.ClockDrift, Target: "h1", At: 2000, Amount: -500_000})
	sc.RhoPPM = 1_000_000
	k := &clockClient{read: true}
	r, _ := toyRun(t, sc, k)
	if k.offsetAtStart != 7*time.Second {
		t.Errorf("offset at the start: %v, want 7s", k.offsetAtStart)
	}
	// Elapsed on the clock: 2 s at true 1 s, 4 s at 2 s, then half speed.
	if want := [3]time.Duration{2 * time.Second, 4 * time.Second, 4500 * time.Millisecond}; k.at != want {
		t.Errorf("clock readings at true 1, 2, 3 s: %v, want %v", k.at, want)
	}
	// The clock reaches 2 s at true 1 s, 3 s at true 1.5 s; its ticks at
	// 1, 2, 3, 4 s of its own at true 0.5, 1, 1.5, 2 s.
	if k.fn != time.Second || k.timer != 1500*time.Millisecond {
		t.Errorf("AfterFunc(2s) at true %v (want 1s), timer(3s) at true %v (want 1.5s)", k.fn, k.timer)
	}
	if want := []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second}; !equalDurations(k.ticks, want) {
		t.Errorf("ticks at true %v, want %v", k.ticks, want)
	}
	if !k.stoppedReported {
		t.Error("Stop after the timer fired reported it active")
	}
	for _, kind := range []faults.Kind{faults.ClockOffset, faults.ClockDrift} {
		if fr := faultRecord(t, r, kind); fr.Partial || !strings.Contains(fr.Detail, "read its clock") {
			t.Errorf("%s record: %+v", kind, fr)
		}
	}

	// The same faults on a client that never reads its clock: partial.
	r, _ = toyRun(t, sc, &clockClient{})
	if fr := faultRecord(t, r, faults.ClockDrift); !fr.Partial || !strings.Contains(fr.Detail, "never read its clock") {
		t.Errorf("an unread clock's record: %+v", fr)
	}

	// No fault: true time.
	k = &clockClient{read: true}
	toyRun(t, toyScenario(1, 1, 0, 10_000), k)
	if k.offsetAtStart != 0 || k.at != [3]time.Duration{time.Second, 2 * time.Second, 3 * time.Second} || k.timer != 3*time.Second {
		t.Errorf("no fault: offset %v, readings %v, timer %v", k.offsetAtStart, k.at, k.timer)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClockRefused: a clock step and a skew of the lease server's clock
// are refused with their reason, never run as if they had struck.
func TestClockRefused(t *testing.T) {
	opts := vclient.Options{Server: func() vclient.Server { return &toyServer{ttl: 1000} }}
	for _, f := range []faults.Fault{
		{Kind: faults.ClockStep, Target: "h1", At: 10, Amount: 5},
		{Kind: faults.ClockDrift, Target: faults.Coordinator, Amount: 1000},
	} {
		sc := toyScenario(1, 1, 0, 100, f)
		sc.RhoPPM = 1000
		_, err := runOne(t, sc, &clockClient{}, opts)
		if err == nil || !strings.Contains(err.Error(), "clock") {
			t.Errorf("%s: %v", f, err)
		}
	}
}
