package holder_test

import (
	"testing"

	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// driver steps a holder by hand, the way package sim does.
type driver struct {
	t *testing.T
	h *holder.Holder
	r holder.Ready
}

func newDriver(t *testing.T, cfg holder.Config) *driver {
	if cfg.Owner == "" {
		cfg.Owner, cfg.Name, cfg.Key = "A", "A", "k"
	}
	return &driver{t: t, h: holder.New(cfg)}
}

func (d *driver) tick(now int64) []holder.Request {
	d.h.Tick(now)
	return d.ready()
}

func (d *driver) reply(now int64, r holder.Reply) []holder.Request {
	if !d.h.Receive(now, r) {
		d.t.Fatalf("Receive(%d, %+v) = false, want the reply accepted", now, r)
	}
	return d.ready()
}

func (d *driver) ready() []holder.Request {
	d.r = d.h.Ready()
	return append([]holder.Request(nil), d.r.Send...)
}

func one(t *testing.T, reqs []holder.Request, kind model.Kind) holder.Request {
	t.Helper()
	if len(reqs) != 1 || reqs[0].Kind != kind {
		t.Fatalf("sent %+v, want one %s", reqs, kind)
	}
	return reqs[0]
}

func none(t *testing.T, reqs []holder.Request) {
	t.Helper()
	if len(reqs) != 0 {
		t.Fatalf("sent %+v, want nothing", reqs)
	}
}

func TestAcquireWriteRelease(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 30, Work: []holder.Item{{Work: 0, Writes: 2}}})
	acq := one(t, d.tick(0), model.Acquire)
	if acq.TTL != 30 || acq.Owner != "A" || acq.Key != "k" {
		t.Fatalf("acquire = %+v", acq)
	}
	w := one(t, d.reply(2, holder.Reply{ID: acq.ID, OK: true, Fence: 7}), model.Write)
	if !d.r.Believes || d.r.Fence != 7 || w.Fence != 7 || w.Value != "A:w1" || w.To != machine.ToCoordinator {
		t.Fatalf("after grant: ready %+v, write %+v", d.r, w)
	}
	w2 := one(t, d.reply(3, holder.Reply{ID: w.ID, OK: true}), model.Write)
	if w2.Value != "A:w2" {
		t.Fatalf("second write value %q, want unique A:w2", w2.Value)
	}
	rel := one(t, d.reply(4, holder.Reply{ID: w2.ID, OK: true}), model.Release)
	if rel.Fence != 7 || d.r.Believes {
		t.Fatalf("release %+v presents fence 7 and ends the belief (believes=%v)", rel, d.r.Believes)
	}
	none(t, d.reply(5, holder.Reply{ID: rel.ID, OK: true}))
	if !d.r.Done || d.r.WakeAt != holder.Never {
		t.Fatalf("after release: %+v, want done and no timer", d.r)
	}
}

func TestRenewEveryThirdOfTTLFromSend(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 30, Work: []holder.Item{{Work: 1000}}})
	acq := one(t, d.tick(100), model.Acquire)
	none(t, d.reply(104, holder.Reply{ID: acq.ID, OK: true, Fence: 1}))
	if d.r.WakeAt != 110 {
		t.Fatalf("WakeAt = %d, want 110 (sent 100 + TTL/3)", d.r.WakeAt)
	}
	none(t, d.tick(109))
	ren := one(t, d.tick(110), model.Renew)
	if ren.Fence != 1 || ren.TTL != 30 {
		t.Fatalf("renew %+v, want fence 1 ttl 30", ren)
	}
	none(t, d.reply(111, holder.Reply{ID: ren.ID, OK: true}))
	if d.r.WakeAt != 120 {
		t.Fatalf("next renew at %d, want 120", d.r.WakeAt)
	}
}

// The local deadline is sent + TTL − 1 − ⌈2ρ·TTL⌉ − margin, from the send:
// the tick for the coordinator's clock resolution.
func TestDeadlineIsConservative(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 100, RhoPPM: 10_000, Margin: 5, Work: []holder.Item{{Work: 1000}}})
	acq := one(t, d.tick(0), model.Acquire)
	d.reply(5, holder.Reply{ID: acq.ID, OK: true, Fence: 1})
	d.h.KillRenewLoop() // no renewals: the deadline of the grant holds
	d.tick(6)
	// sent 0 (not the reply's 5) + 100 - 1 (a tick) - 2 (2ρ·TTL) - 5 = 92
	none(t, d.tick(91))
	if !d.r.Believes {
		t.Fatal("gave up before the deadline")
	}
	none(t, d.tick(92))
	if d.r.Believes || d.h.Losses("deadline") != 1 {
		t.Fatalf("at the deadline: believes=%v lost=%v", d.r.Believes, d.h.Losses("deadline"))
	}
	one(t, d.tick(92+10), model.Acquire) // after the backoff, RetryMin = TTL/10
}

// The iron rule: a failed renew stops all writing and re-acquires.
func TestIronRuleRenewFailed(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 30, Work: []holder.Item{{Work: 15, Writes: 3}}})
	acq := one(t, d.tick(0), model.Acquire)
	d.reply(1, holder.Reply{ID: acq.ID, OK: true, Fence: 4})
	ren := one(t, d.tick(10), model.Renew)
	none(t, d.reply(12, holder.Reply{ID: ren.ID, OK: false, Err: "expired"}))
	if d.r.Believes {
		t.Fatal("still believes after a failed renew")
	}
	for now := int64(13); now < 40; now++ {
		for _, r := range d.tick(now) {
			if r.Kind == model.Write {
				t.Fatalf("write %+v at %d after a failed renew", r, now)
			}
			if r.Kind == model.Acquire {
				return
			}
		}
	}
	t.Fatal("never re-acquired")
}

func TestIronRuleRenewUnanswered(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 30, Work: []holder.Item{{Work: 15, Writes: 3}}})
	acq := one(t, d.tick(0), model.Acquire)
	d.reply(1, holder.Reply{ID: acq.ID, OK: true, Fence: 4})
	ren := one(t, d.tick(10), model.Renew)
	none(t, d.tick(19))
	none(t, d.tick(20)) // timeout TTL/3: give up
	if d.r.Believes || d.h.Losses("renew-timeout") != 1 {
		t.Fatalf("after an unanswered renew: believes=%v lost=%v", d.r.Believes, d.h.Losses("deadline"))
	}
	if d.h.Receive(21, holder.Reply{ID: ren.ID, OK: true}) {
		t.Fatal("a late reply to an abandoned renew was accepted")
	}
}

// A write the store refuses (someone else holds the lease) stops writing.
func TestRefusedWriteStops(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 30, Fenced: true, Work: []holder.Item{{Writes: 3}}})
	acq := one(t, d.tick(0), model.Acquire)
	w := one(t, d.reply(1, holder.Reply{ID: acq.ID, OK: true, Fence: 2}), model.Write)
	if w.To != machine.ToResource {
		t.Fatalf("fenced write goes to %v, want the resource", w.To)
	}
	none(t, d.reply(2, holder.Reply{ID: w.ID, OK: false, Err: "stale-fence"}))
	if d.r.Believes || d.h.Losses("write-refused") != 1 {
		t.Fatalf("believes=%v lost=%v", d.r.Believes, d.h.Losses("deadline"))
	}
}

// After a pause longer than the lease, the holder re-checks its deadline
// before writing and does not write.
func TestPrecheckAfterPause(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 30, Work: []holder.Item{{Work: 5, Writes: 1}}})
	acq := one(t, d.tick(0), model.Acquire)
	d.reply(1, holder.Reply{ID: acq.ID, OK: true, Fence: 1})
	// paused from 2 to 100: the next tick is far past the deadline
	for _, r := range d.tick(100) {
		if r.Kind == model.Write {
			t.Fatalf("wrote %+v after its deadline", r)
		}
	}
	if d.r.Believes {
		t.Fatal("believes after its deadline")
	}
}

func TestDoubleReleaseIsSequential(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 30, Work: []holder.Item{{}}})
	d.h.DoubleRelease(3)
	acq := one(t, d.tick(0), model.Acquire)
	rel := one(t, d.reply(1, holder.Reply{ID: acq.ID, OK: true, Fence: 1}), model.Release)
	none(t, d.reply(2, holder.Reply{ID: rel.ID, OK: true}))
	if d.r.Done || d.r.WakeAt != 5 {
		t.Fatalf("after the first release: %+v, want a second one at 5", d.r)
	}
	rel2 := one(t, d.tick(5), model.Release)
	if rel2.Fence != 1 || rel2.ID == rel.ID {
		t.Fatalf("second release %+v", rel2)
	}
	d.reply(6, holder.Reply{ID: rel2.ID, OK: false})
	if !d.r.Done {
		t.Fatal("not done after the second release")
	}
}

func TestBackoffDoubles(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 100, Work: []holder.Item{{}}})
	var at []int64
	now := int64(0)
	reqs := d.tick(now)
	for len(at) < 4 {
		acq := one(t, reqs, model.Acquire)
		at = append(at, now)
		d.reply(now, holder.Reply{ID: acq.ID, OK: false, Err: "held"})
		now = d.r.WakeAt
		reqs = d.tick(now)
	}
	// RetryMin = 10, doubling, capped at RetryMax = 25
	want := []int64{0, 10, 30, 55}
	for i := range want {
		if at[i] != want[i] {
			t.Fatalf("acquires at %v, want %v", at, want)
		}
	}
}

// A clock with a negative offset reads negative times; every timer must
// still be a timer (Never is not a reading a clock can have).
func TestNegativeClock(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 30, Work: []holder.Item{{Writes: 1}}})
	acq := one(t, d.tick(-4), model.Acquire)
	d.reply(-4, holder.Reply{ID: acq.ID, OK: false, Err: "held"})
	// backoff RetryMin = TTL/10 = 3: the retry is due at local time -1
	if d.r.WakeAt != -1 || d.r.WakeAt == holder.Never {
		t.Fatalf("WakeAt = %d, want -1 (and not Never = %d)", d.r.WakeAt, holder.Never)
	}
	one(t, d.tick(-1), model.Acquire)
}

// TestNoFences: a grant without a fence (fence 0) is a lease like any
// other when the coordinator grants no fencing tokens (Config.NoFences):
// the holder writes under it, with no fence, and releases it. Without
// NoFences, fence 0 is a broken grant and the re-check before the write
// gives the lease up.
func TestNoFences(t *testing.T) {
	d := newDriver(t, holder.Config{TTL: 30, NoFences: true, Work: []holder.Item{{Work: 0, Writes: 1}}})
	acq := one(t, d.tick(0), model.Acquire)
	w := one(t, d.reply(2, holder.Reply{ID: acq.ID, OK: true}), model.Write)
	if !d.r.Believes || w.Fence != 0 || w.Value != "A:w1" {
		t.Fatalf("after a fence-less grant: ready %+v, write %+v", d.r, w)
	}
	rel := one(t, d.reply(3, holder.Reply{ID: w.ID, OK: true}), model.Release)
	if rel.Fence != 0 {
		t.Fatalf("release %+v, want no fence", rel)
	}

	d = newDriver(t, holder.Config{TTL: 30, Work: []holder.Item{{Work: 0, Writes: 1}}})
	acq = one(t, d.tick(0), model.Acquire)
	for _, r := range d.reply(2, holder.Reply{ID: acq.ID, OK: true}) {
		if r.Kind == model.Write {
			t.Fatalf("wrote %+v under fence 0 without NoFences", r)
		}
	}
	if d.h.Losses("precheck") != 1 {
		t.Errorf("precheck losses %d, want 1", d.h.Losses("precheck"))
	}
}
