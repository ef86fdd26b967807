package realrun

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// These tests step the real runner's driver (proc) through the shared
// holder machine against the reference coordinator behind
// backend.InProcess, on a virtual clock: the harness plays the part of the
// goroutines and timers of proc.run — it calls the same advance, step,
// deliver and flush logic — so every reading the machine gets is exact.

// harness drives one scenario's processes on virtual true time (µs).
type harness struct {
	t     *testing.T
	r     *runner
	b     backend.Backend
	store *memstore.Store
	now   int64 // true µs
	lat   int64 // one-way latency, µs
	// pending replies, by delivery time; dropped when their process sends
	// again (the real driver cancels a call its machine gave up on)
	pending []delivery
	sent    []sent
	spies   map[string]*spy
}

type delivery struct {
	at  int64
	p   *proc
	res result
}

// sent is a request as it left a process: when (true and local time), by
// which process and owner.
type sent struct {
	at, local      int64
	process, owner string
	req            machine.Request
	dropped        bool
}

// spy records the readings a holder machine is stepped with.
type spy struct {
	*holder.Holder
	h     *harness
	true_ []int64 // the true time of each step
	local []int64 // the reading the machine got
	walls []int64 // SetWall's reading
}

func (s *spy) Tick(now int64) {
	s.true_, s.local = append(s.true_, s.h.now), append(s.local, now)
	s.Holder.Tick(now)
}

func (s *spy) Receive(now int64, r machine.Reply) bool {
	s.true_, s.local = append(s.true_, s.h.now), append(s.local, now)
	return s.Holder.Receive(now, r)
}

func (s *spy) SetWall(w int64) { s.walls = append(s.walls, w); s.Holder.SetWall(w) }

// newHarness builds the run of sc at real TTL ttl with the given holder
// bugs, as RunScenario does up to the point where goroutines start.
func newHarness(t *testing.T, sc *scenario.Scenario, ttl time.Duration, lat int64, bugs holder.Bug) *harness {
	t.Helper()
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, lat: lat, spies: map[string]*spy{}, store: memstore.New()}
	epoch := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	h.b = backend.InProcess(h.store, time.Microsecond, func() time.Time { return epoch.Add(time.Duration(h.now+h.lat) * time.Microsecond) })
	tg := Target{Info: backend.InProcessInfo("mem"), Open: func(context.Context, string) (backend.Backend, error) { return noClose{h.b}, nil }}
	opt := Options{Log: t.Logf, NewHolder: func(c holder.Config) machine.Holder {
		c.Bugs |= bugs
		s := &spy{Holder: holder.New(c), h: h}
		h.spies[c.Name] = s
		return s
	}}
	r := &runner{t: tg, sc: sc, opt: opt, num: int64(ttl / time.Microsecond), den: sc.TTL,
		injected: map[faults.Kind]int{}, partial: map[faults.Kind]int{}}
	r.ttl, r.lat = r.us(sc.TTL), r.us(sc.Network.MinDelay)
	if err := r.setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.end = r.us(sc.Horizon)
	r.holdersDone = make(chan struct{})
	r.applyOffsets()
	for _, p := range r.procs {
		p.begin()
	}
	h.r = r
	return h
}

type noClose struct{ backend.Backend }

func (noClose) Close() error { return nil }

// run steps the virtual world until true time until.
func (h *harness) run(until int64) {
	ctx := context.Background()
	for steps := 0; steps < 100_000; steps++ {
		for _, p := range h.r.procs {
			p.advance(ctx, h.now)
			h.flush(p)
		}
		next := int64(1<<62 - 1)
		for _, p := range h.r.procs {
			if !p.finished() {
				next = min(next, p.next(h.now))
			}
		}
		for _, d := range h.pending {
			next = min(next, d.at)
		}
		if next > until || next > h.r.end {
			h.now = min(until, h.r.end)
			return
		}
		h.now = next
		var due, keep []delivery
		for _, d := range h.pending {
			if d.at <= h.now {
				due = append(due, d)
			} else {
				keep = append(keep, d)
			}
		}
		h.pending = keep
		for _, d := range due {
			d.p.deliver(h.now, d.res)
			h.flush(d.p)
		}
	}
	h.t.Fatal("harness: no end")
}

// flush sends what p's machine asked for, as proc.flush does, answering
// each request from the in-process coordinator at now + lat.
func (h *harness) flush(p *proc) {
	if p.stopped() || p.crashed {
		return
	}
	q := p.queue
	p.queue = nil
	for _, req := range q {
		h.pending = slices.DeleteFunc(h.pending, func(d delivery) bool { return d.p == p })
		drop := req.Kind == model.Renew && h.now < p.dropUntil
		h.sent = append(h.sent, sent{at: h.now, local: p.clock.Mono(h.now), process: p.process, owner: p.owner, req: req, dropped: drop})
		if drop {
			continue
		}
		resp, err := h.b.Do(context.Background(), backend.Request{Kind: req.Kind, Key: req.Key, Owner: req.Owner,
			TTL: time.Duration(req.TTL) * time.Microsecond, Fence: req.Fence, Value: req.Value})
		if err != nil {
			h.t.Fatal(err)
		}
		rep := machine.Reply{ID: req.ID, OK: resp.OK, Fence: resp.Fence, Value: resp.Value, HasValue: resp.HasValue, Err: resp.Reason}
		h.pending = append(h.pending, delivery{at: h.now + 2*h.lat, p: p, res: result{rep: rep, ok: true}})
	}
}

// by returns the requests sent by process, optionally of one kind.
func (h *harness) by(process string, kinds ...model.Kind) []sent {
	var out []sent
	for _, s := range h.sent {
		if s.process == process && (len(kinds) == 0 || slices.Contains(kinds, s.req.Kind)) {
			out = append(out, s)
		}
	}
	return out
}

func items(n int, work int64, writes int) []holder.Item {
	out := make([]holder.Item, n)
	for i := range out {
		out[i] = holder.Item{Work: work, Writes: writes}
	}
	return out
}

// oneHolder is a scenario with holder h1 (TTL 300 ms), no reader, the
// given program and faults; times in ms.
func oneHolder(work []holder.Item, fs ...faults.Fault) *scenario.Scenario {
	return &scenario.Scenario{Version: 1, Semantics: "seed", Key: "k", TTL: 300, Horizon: 5000,
		Holders: []scenario.Process{{Name: "h1", Work: work}}, Faults: fs}
}

const ms = 1000 // µs

// TestDriverTiming: acquire at the start; each write after its work; a
// renew every TTL/3 from the send of the request that granted or extended
// the lease (by the machine's clock); the release after the last write.
func TestDriverTiming(t *testing.T) {
	h := newHarness(t, oneHolder([]holder.Item{{Work: 0, Writes: 1}, {Work: 250, Writes: 2}}), 300*time.Millisecond, 1*ms, 0)
	h.run(2000 * ms)
	var kinds []model.Kind
	for _, s := range h.by("h1") {
		kinds = append(kinds, s.req.Kind)
	}
	want := []model.Kind{model.Acquire, model.Write, model.Renew, model.Renew, model.Write, model.Write, model.Release}
	if !slices.Equal(kinds, want) {
		t.Fatalf("h1 sent %v, want %v", kinds, want)
	}
	s := h.by("h1")
	// acquire at 0; answered at 2ms; the first write at once (work 0),
	// answered at 4ms; item 2 works 250ms: until 254ms. Renews at 100ms and
	// 200ms (TTL/3 after each renew's send); the writes at 254ms and 256ms,
	// the release at 258ms.
	at := []int64{0, 2 * ms, 100 * ms, 200 * ms, 254 * ms, 256 * ms, 258 * ms}
	for i, s := range s {
		if s.at != at[i] {
			t.Errorf("h1's %v sent at %dµs, want %dµs", s.req.Kind, s.at, at[i])
		}
	}
	if !h.r.procs[0].finished() {
		t.Errorf("h1 did not finish its program")
	}
	if len(h.r.beliefs) != 1 || h.r.beliefs[0].From != 2*ms || h.r.beliefs[0].To != 258*ms || h.r.beliefs[0].Fence != 1 {
		t.Errorf("beliefs %+v, want one [2ms, 258ms) under fence 1", h.r.beliefs)
	}
}

// noWriteBetween fails if process sent a write under fence in (from, to].
func noWriteBetween(t *testing.T, h *harness, process string, fence, from, to int64) {
	t.Helper()
	for _, s := range h.by(process, model.Write) {
		if s.at > from && s.at <= to && s.req.Fence == fence {
			t.Errorf("%s wrote under fence %d at %dµs, after its renew failed at %dµs (the iron rule)", process, fence, s.at, from)
		}
	}
}

// TestDriverIronRuleRefusedRenew: the coordinator hands the lease to
// someone else; the holder's next renew is refused and it writes nothing
// more under its fence.
func TestDriverIronRuleRefusedRenew(t *testing.T) {
	// Work items of 250ms: the renew at 200ms comes before the next write.
	h := newHarness(t, oneHolder(items(5, 250, 1)), 300*time.Millisecond, 1*ms, 0)
	h.run(150 * ms)
	if !h.store.Release("k", "h1", 1) {
		t.Fatal("Release(h1) refused")
	}
	if _, ok := h.store.Acquire("k", "thief", 10_000*ms, h.now); !ok {
		t.Fatal("Acquire(thief) refused")
	}
	h.run(3000 * ms)
	renews := h.by("h1", model.Renew)
	if len(renews) < 2 || renews[0].at != 100*ms || renews[1].at != 200*ms {
		t.Fatalf("renews %v, want them at 100ms and 200ms", renews)
	}
	if n := h.spies["h1"].Losses("renew-failed"); n != 1 {
		t.Errorf("Losses(renew-failed) = %d, want 1", n)
	}
	noWriteBetween(t, h, "h1", 1, renews[1].at, h.now)
	if got := h.by("h1", model.Acquire); len(got) < 2 {
		t.Errorf("h1 did not go back to acquiring after the refused renew: %v", got)
	}
}

// TestDriverIronRuleUnansweredRenew: a renew lost on the way (drop-heartbeats)
// times out by the machine's own clock; the holder stops writing until it
// acquires again.
func TestDriverIronRuleUnansweredRenew(t *testing.T) {
	h := newHarness(t, oneHolder(items(40, 20, 1), faults.Fault{Kind: faults.DropHeartbeats, Target: "h1", At: 90, Duration: 50}), 300*time.Millisecond, 1*ms, 0)
	h.run(3000 * ms)
	renews := h.by("h1", model.Renew)
	if len(renews) == 0 || !renews[0].dropped || renews[0].at != 100*ms {
		t.Fatalf("renews %+v, want the first, at 100ms, dropped", renews)
	}
	if n := h.spies["h1"].Losses("renew-timeout"); n != 1 {
		t.Errorf("Losses(renew-timeout) = %d, want 1", n)
	}
	var reacquired int64 = -1
	for _, a := range h.by("h1", model.Acquire)[1:] {
		reacquired = a.at
		break
	}
	if reacquired < 200*ms {
		t.Fatalf("re-acquire at %dµs, want after the renew's timeout (TTL/3 after 100ms)", reacquired)
	}
	noWriteBetween(t, h, "h1", 1, renews[0].at, h.now)
	if h.r.injected[faults.DropHeartbeats] != 1 {
		t.Errorf("drop-heartbeats counted %d times, want 1", h.r.injected[faults.DropHeartbeats])
	}
}

// TestDriverPauseAtWrite: a pause strikes at the next write, after the
// re-check and before the send: the write leaves when the pause ends, and
// the machine is not stepped in between.
func TestDriverPauseAtWrite(t *testing.T) {
	h := newHarness(t, oneHolder(items(3, 50, 1), faults.Fault{Kind: faults.Pause, Target: "h1", At: 10, Duration: 500}), 300*time.Millisecond, 1*ms, 0)
	h.run(3000 * ms)
	w := h.by("h1", model.Write)
	// The first write is decided at 52ms (acquired at 2ms, 50ms of work).
	if len(w) == 0 || w[0].at != 552*ms {
		t.Fatalf("writes %+v, want the first sent at 552ms (decided at 52ms, then paused 500ms)", w)
	}
	sp := h.spies["h1"]
	for i, tt := range sp.true_ {
		if tt > 52*ms && tt < 552*ms {
			t.Errorf("h1's machine stepped at %dµs (local %d) during its pause", tt, sp.local[i])
		}
	}
	var rec *model.FaultRecord
	for i := range h.r.records {
		if h.r.records[i].Kind == string(faults.Pause) {
			rec = &h.r.records[i]
		}
	}
	if rec == nil || rec.Start != 52*ms || !rec.HasEnd || rec.End != 552*ms || rec.Target != "h1" {
		t.Errorf("pause record %+v, want h1 [52ms, 552ms]", rec)
	}
	// No Target.Addr, no proxy: nothing froze the connection, and the
	// record must not say it did.
	if rec != nil && !strings.Contains(rec.Detail, "connection not frozen") {
		t.Errorf("pause record's detail %q, want it to say the connection was not frozen (the target has no proxy)", rec.Detail)
	}
	// The zombie write was refused (its lease expired during the pause) and
	// the holder let go: that is the fenced write's job, and the iron rule's.
	if n := sp.Losses("write-refused") + sp.Losses("deadline"); n == 0 {
		t.Errorf("h1 never lost its lease after a pause of 500ms > TTL 300ms")
	}
}

// TestDriverClockFaults: what each clock fault does to the readings the
// machine gets (local = its monotonic clock; SetWall its wall clock).
func TestDriverClockFaults(t *testing.T) {
	reading := func(sp *spy, from int64) (int64, int64) {
		for i, tt := range sp.true_ {
			if tt >= from {
				return tt, sp.local[i]
			}
		}
		t.Fatalf("no step at or after %dµs", from)
		return 0, 0
	}
	work := items(30, 30, 1)
	t.Run("offset", func(t *testing.T) {
		h := newHarness(t, oneHolder(work, faults.Fault{Kind: faults.ClockOffset, Target: "h1", Amount: 70}), 300*time.Millisecond, 1*ms, 0)
		h.run(500 * ms)
		for i, tt := range h.spies["h1"].true_ {
			if h.spies["h1"].local[i] != tt+70*ms {
				t.Fatalf("at %dµs the machine read %d, want true time + 70ms", tt, h.spies["h1"].local[i])
			}
		}
	})
	// Two offsets on one holder add up, as in the simulator and vclient
	// (faultsupport.Clock.Offset): the holder's clock is 50ms ahead.
	t.Run("offsets add", func(t *testing.T) {
		h := newHarness(t, oneHolder(work, faults.Fault{Kind: faults.ClockOffset, Target: "h1", Amount: 70},
			faults.Fault{Kind: faults.ClockOffset, Target: "h1", Amount: -20}), 300*time.Millisecond, 1*ms, 0)
		h.run(500 * ms)
		for i, tt := range h.spies["h1"].true_ {
			if h.spies["h1"].local[i] != tt+50*ms {
				t.Fatalf("at %dµs the machine read %d, want true time + 70ms - 20ms", tt, h.spies["h1"].local[i])
			}
		}
	})
	t.Run("drift", func(t *testing.T) {
		sc := oneHolder(work, faults.Fault{Kind: faults.ClockDrift, Target: "h1", At: 100, Amount: -1000})
		sc.RhoPPM = 1000
		h := newHarness(t, sc, 300*time.Millisecond, 1*ms, 0)
		h.run(800 * ms)
		tt, l := reading(h.spies["h1"], 600*ms)
		if want := 100*ms + (tt-100*ms)*999/1000; l != want {
			t.Errorf("at %dµs the machine read %d, want %d (1000 ppm slow since 100ms)", tt, l, want)
		}
	})
	t.Run("freeze", func(t *testing.T) {
		h := newHarness(t, oneHolder(work, faults.Fault{Kind: faults.Freeze, Target: "h1", At: 100, Duration: 200}), 300*time.Millisecond, 1*ms, 0)
		h.run(800 * ms)
		sp := h.spies["h1"]
		for i, tt := range sp.true_ {
			if tt > 100*ms && tt < 300*ms {
				t.Errorf("stepped at %dµs (local %d) while frozen", tt, sp.local[i])
			}
		}
		tt, l := reading(sp, 300*ms)
		if tt != 300*ms || l != 100*ms {
			t.Errorf("first step after the freeze at %dµs read %d, want 300ms reading 100ms: the clock stopped with the process", tt, l)
		}
		tt, l = reading(sp, 400*ms)
		if l != tt-200*ms {
			t.Errorf("at %dµs read %d, want 200ms behind true time for good", tt, l)
		}
	})
	t.Run("step", func(t *testing.T) {
		h := newHarness(t, oneHolder(work, faults.Fault{Kind: faults.ClockStep, Target: "h1", At: 100, Amount: -900}), 300*time.Millisecond, 1*ms, 0)
		h.run(800 * ms)
		sp := h.spies["h1"]
		for i, tt := range sp.true_ {
			if sp.local[i] != tt {
				t.Fatalf("at %dµs the monotonic reading is %d: a wall-clock step moved it", tt, sp.local[i])
			}
			if w := sp.walls[i]; tt > 100*ms && w != tt-900*ms || tt < 100*ms && w != tt {
				t.Fatalf("at %dµs the wall reads %d, want true time, 900ms less from 100ms on", tt, w)
			}
		}
		// The reference ignores the wall clock: it renews and keeps its lease.
		if n := sp.Losses("deadline") + sp.Losses("renew-failed"); n != 0 {
			t.Errorf("the reference lost its lease %d times after a wall-clock step", n)
		}
	})
	t.Run("step-trusted", func(t *testing.T) {
		// The same step, just after a renewal, to a holder that measures its
		// lease on the wall clock: every timer of its looks 900ms further
		// away, so it renews nothing and its next writes leave long after
		// its lease lapsed at the coordinator.
		h := newHarness(t, oneHolder(work, faults.Fault{Kind: faults.ClockStep, Target: "h1", At: 110, Amount: -900}), 300*time.Millisecond, 1*ms, holder.BugTrustWallClock)
		h.run(1500 * ms)
		renews := h.by("h1", model.Renew)
		var lastRenew int64
		for _, r := range renews {
			if r.at < 110*ms {
				lastRenew = r.at
			}
		}
		late := 0
		for _, w := range h.by("h1", model.Write) {
			if w.req.Fence == 1 && w.at >= lastRenew+300*ms {
				late++
			}
		}
		if late == 0 {
			t.Errorf("no write under fence 1 after the lease lapsed at %dµs: the trusted step did not bite", lastRenew+300*ms)
		}
	})
}

// TestDriverCrash: a crash abandons the incarnation; the next one is a new
// process under a new owner (crash) or the dead one's (owner-reuse).
func TestDriverCrash(t *testing.T) {
	for _, k := range []faults.Kind{faults.Crash, faults.OwnerReuse} {
		t.Run(string(k), func(t *testing.T) {
			h := newHarness(t, oneHolder(items(10, 30, 1), faults.Fault{Kind: k, Target: "h1", At: 50, Duration: 100}), 300*time.Millisecond, 1*ms, 0)
			h.run(3000 * ms)
			owner := "h1#2"
			if k == faults.OwnerReuse {
				owner = "h1"
			}
			next := h.by("h1#2")
			if len(next) == 0 || next[0].req.Kind != model.Acquire || next[0].at != 150*ms || next[0].owner != owner || next[0].req.Owner != owner {
				t.Fatalf("h1#2's first request %+v, want an acquire at 150ms by owner %s", next, owner)
			}
			for _, s := range h.by("h1") {
				if s.at > 50*ms {
					t.Errorf("the dead h1 sent %v at %dµs", s.req.Kind, s.at)
				}
			}
			if h.r.injected[k] != 1 || h.r.beliefs[0].To != 50*ms {
				t.Errorf("%s counted %d, beliefs %+v: want 1 and h1's belief ended at 50ms", k, h.r.injected[k], h.r.beliefs)
			}
		})
	}
}

// TestDriverRenewDeath: the renewal loop dies through machine.RenewKiller;
// no renewal leaves afterwards and the lease is lost at the local deadline.
func TestDriverRenewDeath(t *testing.T) {
	h := newHarness(t, oneHolder(items(40, 20, 1), faults.Fault{Kind: faults.RenewDeath, Target: "h1", At: 150}), 300*time.Millisecond, 1*ms, 0)
	h.run(600 * ms)
	again := h.by("h1", model.Acquire)
	if len(again) < 2 {
		t.Fatalf("h1 never re-acquired after its renewal loop died: %+v", again)
	}
	for _, r := range h.by("h1", model.Renew) {
		if r.at > 150*ms && r.at < again[1].at {
			t.Errorf("a renewal left at %dµs after the loop died at 150ms, before h1 re-acquired at %dµs", r.at, again[1].at)
		}
	}
	if h.spies["h1"].Losses("deadline") != 1 {
		t.Errorf("Losses(deadline) = %d, want 1", h.spies["h1"].Losses("deadline"))
	}
}

// TestDriverNotApplied: a fault the machine has no interface for is
// recorded as not applied and counted apart.
func TestDriverNotApplied(t *testing.T) {
	sc := oneHolder(items(5, 50, 1), faults.Fault{Kind: faults.RenewDeath, Target: "h1", At: 10}, faults.Fault{Kind: faults.Partition, Target: "h1", At: 20, Duration: 10, Peer: faults.Coordinator})
	h := newHarness(t, sc, 300*time.Millisecond, 1*ms, 0)
	h.r.opt.NewHolder = func(c holder.Config) machine.Holder { return bare{holder.New(c)} }
	h.r.procs[0].begin()
	h.run(200 * ms)
	if h.r.partial[faults.RenewDeath] != 1 || h.r.injected[faults.RenewDeath] != 0 {
		t.Errorf("renew-death on a machine without KillRenewLoop: injected %v, partial %v", h.r.injected, h.r.partial)
	}
	if h.r.partial[faults.Partition] != 1 {
		t.Errorf("partition without a proxy: partial %v, want 1", h.r.partial)
	}
	for _, rec := range h.r.records {
		if !rec.Partial {
			t.Errorf("record %+v not marked partial", rec)
		}
	}
}

// bare hides the holder's optional interfaces.
type bare struct{ m machine.Holder }

func (b bare) Tick(now int64)                          { b.m.Tick(now) }
func (b bare) Receive(now int64, r machine.Reply) bool { return b.m.Receive(now, r) }
func (b bare) Ready() machine.Ready                    { return b.m.Ready() }
