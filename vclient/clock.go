package vclient

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/faultsupport"
	"github.com/leasecheck/leasecheck/model"
)

// Clock is one candidate's own clock in virtual time: the scenario's
// clock-offset and clock-drift faults on its node, over the bubble's true
// time. It is a k8s.io/utils/clock.Clock (with tickers and AfterFunc), the
// interface client-go's leader election and controller-runtime take their
// time from: hand it to the library in place of clock.RealClock{} and its
// decisions run on the skewed clock while its other timers (those it takes
// from package time) keep true time — as on a node whose oscillator runs
// fast, where the library is the only judge of what its readings mean.
//
// What it models is the monotonic clock a lease is measured on: an offset
// shifts every reading (harmless to code that only subtracts its own
// readings), a drift makes elapsed time run Amount ppm fast (negative:
// slow) from the fault's At on, and a later drift on the same node
// replaces an earlier one (the simulator's clock faults, the one
// implementation).
// A clock-step is refused: it moves the wall clock only, and a time.Time
// carries one reading for both, so the harness cannot step the one without
// the other; code comparing Now's values (client-go does) is measured on
// the monotonic reading, which a step does not move.
//
// Readings are exact at whole milliseconds of true time and interpolated
// between; a timer on the skewed clock fires at the first whole
// millisecond of true time at which the clock has reached its deadline,
// re-armed when a drift that starts meanwhile changes the rate. A clock
// with no fault on its node is true time itself (Now is time.Now, timers
// are package time's).
type Clock struct {
	c      *Candidate
	start  time.Time
	offset int64
	drifts []faults.Fault // the node's clock-drift faults, in At order
	// idx are the plan indices of the node's clock faults, in At order,
	// and next the first not yet recorded as reaching the client.
	idx  []int
	mu   sync.Mutex
	next int
}

var (
	_ clock.WithTickerAndDelayedExecution = (*Clock)(nil)
)

// Clock returns the candidate's own clock: its node's clock faults over
// virtual time (a node's clock outlives its incarnations). A clock fault
// is recorded as struck (the history's fault record) once the client has
// read the clock after the fault's At; a client that never reads it was
// never reached by the skew, and the record says so.
func (c *Candidate) Clock() *Clock {
	k := &Clock{c: c, start: c.w.start}
	p := c.w.sc.Faults
	for i, f := range p {
		if f.Target == c.Node && (f.Kind == faults.ClockOffset || f.Kind == faults.ClockDrift) {
			k.idx = append(k.idx, i)
		}
	}
	sortByAt(k.idx, p)
	for _, i := range k.idx {
		if f := p[i]; f.Kind == faults.ClockOffset {
			k.offset += f.Amount
		} else {
			k.drifts = append(k.drifts, f)
		}
	}
	return k
}

func sortByAt(idx []int, p faults.Plan) {
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && p[idx[j]].At < p[idx[j-1]].At; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

// Skewed reports whether the clock differs from true time at any point of
// the run.
func (k *Clock) Skewed() bool { return len(k.idx) > 0 }

// refuseClock says why a clock fault is not injected in virtual time, nil
// when it is.
func refuseClock(i int, f faults.Fault) error {
	switch {
	case f.Kind == faults.ClockStep:
		return fmt.Errorf("vclient: fault %d (%s): a clock-step moves a wall clock only; a time.Time carries one reading for the wall and the monotonic clock, so it cannot be stepped alone (a client comparing its own readings, as client-go does, is measured on the monotonic one, which a step does not move)", i, f)
	case (f.Kind == faults.ClockOffset || f.Kind == faults.ClockDrift) && f.Target == faults.Coordinator:
		return fmt.Errorf("vclient: fault %d (%s): the lease server in virtual time decides no expiry of its own, so its clock reaches nothing; skew a candidate's clock instead", i, f)
	}
	return nil
}

// state is the node's clock with every drift that started by true
// millisecond t applied (t >= every change applied).
func (k *Clock) state(t int64) faultsupport.Clock {
	s := faultsupport.NewClock(k.offset)
	for _, f := range k.drifts {
		if f.At > t {
			break
		}
		s.SetDrift(f.At, f.Amount)
	}
	return s
}

// local is the clock's reading at true time d since the start.
func (k *Clock) local(d time.Duration) time.Duration {
	t, rem := int64(d/ms), d%ms
	s := k.state(t)
	m0 := s.Mono(t)
	s1 := k.state(t + 1)
	m1 := s1.Mono(t + 1)
	return time.Duration(m0)*ms + rem*time.Duration(m1-m0)
}

// trueAt is the earliest true time (since the start, a whole millisecond,
// at least from) at which the clock reads at least l.
func (k *Clock) trueAt(l, from time.Duration) time.Duration {
	want := int64(ceilMs(l) / ms)
	t := int64(ceilMs(from) / ms)
	for {
		s := k.state(t)
		at := s.When(want, t)
		// A drift starting before at changes the rate: go on from there.
		next := int64(-1)
		for _, f := range k.drifts {
			if f.At > t {
				next = f.At
				break
			}
		}
		if next < 0 || at <= next {
			return time.Duration(at) * ms
		}
		t = next
	}
}

// reached records the clock faults that have struck by true millisecond t
// as reaching the client (it read its clock).
func (k *Clock) reached(t int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := k.c.w.sc.Faults
	for k.next < len(k.idx) && p[k.idx[k.next]].At <= t {
		i := k.idx[k.next]
		k.next++
		w := k.c.w
		w.mu.Lock()
		if !w.closing {
			w.rec.struck(i, p[i].At, k.c.Name, fmt.Sprintf("%s read its clock (Candidate.Clock) at t=%d", k.c.Name, t))
		}
		w.mu.Unlock()
	}
}

// Now returns the clock's reading.
func (k *Clock) Now() time.Time {
	if !k.Skewed() {
		return time.Now()
	}
	d := time.Since(k.start)
	k.reached(int64(d / ms))
	return k.start.Add(k.local(d))
}

// Since returns the time elapsed on the clock since t.
func (k *Clock) Since(t time.Time) time.Duration { return k.Now().Sub(t) }

// After is NewTimer(d).C().
func (k *Clock) After(d time.Duration) <-chan time.Time { return k.NewTimer(d).C() }

// Sleep blocks until d has passed on the clock.
func (k *Clock) Sleep(d time.Duration) { <-k.After(d) }

// Tick is NewTicker(d).C(); the ticker is never stopped, as with time.Tick.
func (k *Clock) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return k.NewTicker(d).C()
}

// NewTimer returns a timer that fires once d has passed on the clock.
func (k *Clock) NewTimer(d time.Duration) clock.Timer {
	if !k.Skewed() {
		return clock.RealClock{}.NewTimer(d)
	}
	t := &timer{k: k, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// AfterFunc calls f in its own goroutine once d has passed on the clock.
func (k *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	if !k.Skewed() {
		return clock.RealClock{}.AfterFunc(d, f)
	}
	t := &timer{k: k, f: f}
	t.Reset(d)
	return t
}

// NewTicker returns a ticker that ticks every d on the clock; like
// time.Ticker it drops ticks a slow receiver has not taken.
func (k *Clock) NewTicker(d time.Duration) clock.Ticker {
	if !k.Skewed() {
		return clock.RealClock{}.NewTicker(d)
	}
	if d <= 0 {
		panic("vclient: non-positive interval for Clock.NewTicker")
	}
	t := &timer{k: k, ch: make(chan time.Time, 1), period: d}
	t.Reset(d)
	return ticker{t}
}

// timer is a timer or ticker on a skewed clock: a true-time timer armed
// for the instant the clock reaches its deadline, checked and re-armed
// when it fires (a drift may have started meanwhile).
type timer struct {
	k      *Clock
	ch     chan time.Time // nil for AfterFunc
	f      func()
	period time.Duration // > 0 for a ticker

	mu       sync.Mutex
	t        *time.Timer
	deadline time.Duration // the clock's reading (since the start) to fire at
	active   bool
}

func (t *timer) C() <-chan time.Time { return t.ch }

// arm sets the true-time timer for the deadline, now being the true time
// since the start (t.mu held).
func (t *timer) arm(now time.Duration) {
	t.t = time.AfterFunc(t.k.trueAt(t.deadline, now)-now, t.fire)
}

func (t *timer) fire() {
	t.mu.Lock()
	if !t.active {
		t.mu.Unlock()
		return
	}
	now := time.Since(t.k.start)
	l := t.k.local(now)
	if l < t.deadline {
		t.arm(now)
		t.mu.Unlock()
		return
	}
	if t.period > 0 {
		for t.deadline <= l {
			t.deadline += t.period
		}
		t.arm(now)
	} else {
		t.active = false
	}
	ch, f := t.ch, t.f
	t.mu.Unlock()
	t.k.reached(int64(now / ms))
	if f != nil {
		f()
		return
	}
	select {
	case ch <- t.k.start.Add(l):
	default:
	}
}

func (t *timer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.active
	t.active = false
	if t.t != nil {
		t.t.Stop()
	}
	return was
}

func (t *timer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.active
	if t.t != nil {
		t.t.Stop()
	}
	now := time.Since(t.k.start)
	t.deadline, t.active = t.k.local(now)+d, true
	if t.period > 0 {
		t.period = d
	}
	t.arm(now)
	return was
}

type ticker struct{ t *timer }

func (k ticker) C() <-chan time.Time { return k.t.ch }
func (k ticker) Stop()               { k.t.Stop() }

// clockRecord fills a clock fault's history record: proc is the
// incarnation that first read its clock after the fault's At ("": none
// did, so the skew reached nothing and the record is partial).
func clockRecord(fr *model.FaultRecord, f faults.Fault, proc, why string) {
	if proc == "" {
		fr.Partial = true
		fr.Detail = fmt.Sprintf("%s's client never read its clock (Candidate.Clock) after t=%d: the skew reached nothing", f.Target, f.At)
		return
	}
	fr.Target = proc
	if f.Kind == faults.ClockOffset {
		fr.Detail = fmt.Sprintf("%s's clock read %+d ms off true time; %s", f.Target, f.Amount, why)
	} else {
		fr.Detail = fmt.Sprintf("%s's clock ran %+d ppm from t=%d; %s", f.Target, f.Amount, f.At, why)
	}
}

// LeaseTTL is how long a lease of ttl ms granted to c now holds in true
// time where the others judge its expiry on their own clocks, as
// client-go's candidates do (each waits ttl on its clock since it last saw
// the lease change): ttl as the fastest of the other nodes' clocks measures
// it, over the drifts that start before it ends. A Server records its
// grants with it, so that the history's lease is the one the world
// enforced: a takeover a fast clock made early is a takeover at the end of
// a shorter lease, and what the old holder does after that end is judged
// as done without one. Without a fast clock elsewhere it is ttl.
func (c *Candidate) LeaseTTL(ttl int64) int64 {
	if c.w == nil {
		return ttl // a candidate outside a run (a server's own tests)
	}
	now := c.w.nowMs()
	out := ttl
	for i, f := range c.w.sc.Faults {
		// A drift that started and was never read (its node's client keeps
		// its own clock, Candidate.Clock unused) shortens nothing. The
		// harness calls LeaseTTL serving a request, with w.mu held.
		if _, read := c.w.rec.struckAt[i]; !read && f.At <= now {
			continue
		}
		if f.Kind == faults.ClockDrift && f.Target != c.Node && f.Amount > 0 && f.At < now+ttl {
			out = min(out, ttl*1_000_000/(1_000_000+f.Amount))
		}
	}
	return max(out, 1)
}
