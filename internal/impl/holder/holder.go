package holder

import (
	"strconv"

	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// The wire and driver types are machine's; these names keep the holder's
// own API readable.
type (
	Request = machine.Request
	Reply   = machine.Reply
	Ready   = machine.Ready
)

// Never is machine.Never: no timer.
const Never = machine.Never

// Item is one unit of work: Work ms of local computation, then Writes writes.
type Item struct {
	Work   int64 `json:"work"`
	Writes int   `json:"writes"`
}

// Config is one holder incarnation. Zero durations mean the defaults noted.
type Config struct {
	Key   string
	Owner string
	// Name prefixes the values it writes ("h1#2:w7"), so values are unique
	// per key when names are.
	Name   string
	TTL    int64 // lease TTL in ms (> 0)
	RhoPPM int64 // the declared clock-drift bound, parts per million
	// Fenced sends writes to the resource (fenced storage), not the coordinator.
	Fenced bool
	// NoFences: the coordinator's grants carry no fencing token (a lock
	// library: backend.NoFences), so a grant's fence 0 is no reason to give
	// the lease up; renewals, writes and the release present none.
	NoFences   bool
	RenewEvery int64 // default TTL/3
	Margin     int64 // deadline safety margin; default TTL/10, NoMargin for none
	Timeout    int64 // request timeout; default TTL/3
	RetryMin   int64 // acquire backoff; default TTL/10
	RetryMax   int64 // backoff cap; default TTL/4
	Work       []Item
	// Bugs switches planted bugs in (bugs.go); zero is the reference.
	Bugs Bug
}

// NoMargin is Config.Margin's "no safety margin at all" (0 means the
// default).
const NoMargin = -1

// WithDefaults returns c with every zero duration replaced by its default
// (NoMargin stays: it is idempotent).
func (c Config) WithDefaults() Config {
	t := max(c.TTL, 1)
	if c.Bugs&BugRenewEveryTTL != 0 {
		// BUG (renew-every-ttl): renew once per TTL instead of every TTL/3.
		// The article: renew at a third of the TTL so one lost heartbeat
		// still leaves a retry. Renewing once per TTL means the local
		// deadline (TTL minus the safety margin) always comes first: the
		// lease is lost on every term, with no fault at all.
		c.RenewEvery = t
	}
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = max(d, 1)
		}
	}
	def(&c.RenewEvery, t/3)
	if c.Margin != NoMargin {
		def(&c.Margin, t/10)
	}
	def(&c.Timeout, t/3)
	def(&c.RetryMin, t/10)
	def(&c.RetryMax, t/4)
	c.RetryMax = max(c.RetryMax, c.RetryMin)
	return c
}

type phase uint8

const (
	phaseStart phase = iota
	phaseAcquiring
	phaseHolding
	phaseBackoff
	phaseReleasing
	phaseRelease2 // the double-release fault: waiting to release again
	phaseDone
)

// Holder is the protocol state machine (a machine.Holder, with the optional
// fault interfaces machine.RenewKiller, Overrunner, DoubleReleaser and
// WallClockUser). Not safe for concurrent use.
type Holder struct {
	// cfg never changes after New: copies share it (a holder is copied at
	// every state the explorer steps it in, and the config was a third of
	// its bytes).
	cfg   *Config
	ph    phase
	nextI uint64

	out      Request // the one request in flight, when inFlight (kept by value: a copy of a holder is one allocation)
	inFlight bool
	outSent  int64
	outUntil int64

	held      bool
	fence     int64
	deadline  int64 // local: writing stops at this time
	nextRenew int64
	backoff   int64
	retryAt   int64

	item       int   // index into cfg.Work
	working    bool  // computing the current item
	workEnd    int64 // local time the computation ends
	writesLeft int
	nWrites    int
	overrun    int64 // extra work for the next item (fault)

	renewDead  bool  // the renewal loop died (fault)
	doubleLate int64 // >=0: release a second time this late (fault); -1 none
	secondAt   int64
	relFence   int64 // the fence released, for the second release

	// BugTrustWallClock: the wall-clock reading (SetWall) and wall −
	// monotonic at the last step, to map wake-ups back.
	wall, skew int64

	send []Request
	lost lossCounts
}

// lossCounts counts lease losses by cause, for traces and tests.
type lossCounts struct{ deadline, renewFailed, renewTimeout, writeRefused, precheck int }

// New returns a holder that starts acquiring on its first Tick.
func New(cfg Config) *Holder {
	c := cfg.WithDefaults()
	return &Holder{cfg: &c, doubleLate: -1}
}

// Losses returns how often the holder lost its lease for a cause:
// "deadline", "renew-failed", "renew-timeout", "write-refused" or "precheck".
func (h *Holder) Losses(cause string) int {
	switch cause {
	case "deadline":
		return h.lost.deadline
	case "renew-failed":
		return h.lost.renewFailed
	case "renew-timeout":
		return h.lost.renewTimeout
	case "write-refused":
		return h.lost.writeRefused
	case "precheck":
		return h.lost.precheck
	}
	return 0
}

// Config returns the configuration with defaults applied.
func (h *Holder) Config() Config { return *h.cfg }

// Ready returns the driver's instructions after the last Tick or Receive.
func (h *Holder) Ready() Ready {
	r := Ready{Send: h.send, WakeAt: h.wakeAt(), Believes: h.held, Done: h.ph == phaseDone,
		Waiting: h.ph == phaseAcquiring || h.ph == phaseBackoff || h.ph == phaseStart}
	if h.held {
		r.Fence = h.fence
	}
	h.send = h.send[:0]
	if h.cfg.Bugs&BugTrustWallClock != 0 && r.WakeAt != Never {
		r.WakeAt -= h.skew // the driver schedules on the monotonic clock
	}
	return r
}

// SetWall receives the wall-clock reading before every step
// (machine.WallClockUser). Only BugTrustWallClock reads it.
func (h *Holder) SetWall(w int64) { h.wall = w }

// clock maps the driver's monotonic reading to the time the holder decides by.
func (h *Holder) clock(now int64) int64 {
	if h.cfg.Bugs&BugTrustWallClock == 0 {
		return now
	}
	// BUG (trust-local-clock): the holder measures its lease on the wall
	// clock, which NTP steps, VM migrations and resumed containers move. A
	// step back makes the deadline and the next renewal look far away: the
	// holder keeps believing (and writing) after the coordinator expired it.
	h.skew = h.wall - now
	return h.wall
}

// KillRenewLoop is the renew-death fault: renewals stop, quietly, until the
// holder loses the lease and re-acquires.
func (h *Holder) KillRenewLoop() { h.renewDead = true }

// Overrun makes the next work item (or the current one) take d ms longer.
func (h *Holder) Overrun(now, d int64) {
	if h.working {
		h.workEnd += d
		return
	}
	h.overrun += d
}

// DoubleRelease makes the next release be sent again late ms after the first.
func (h *Holder) DoubleRelease(late int64) { h.doubleLate = max(late, 0) }

// Tick tells the holder its monotonic clock reads now.
func (h *Holder) Tick(now int64) { h.advance(h.clock(now)) }

// Receive hands the holder a reply at local time now. It reports whether the
// reply answered the request in flight; any other reply (a duplicate, or one
// for a request it gave up on) is ignored and returns false.
func (h *Holder) Receive(now int64, r Reply) bool {
	now = h.clock(now)
	if !h.inFlight || r.ID != h.out.ID {
		return false
	}
	req, sent := h.out, h.outSent
	h.out, h.inFlight = Request{}, false
	switch req.Kind {
	case model.Acquire:
		if r.OK {
			h.held, h.fence = true, r.Fence
			h.extend(sent, now, r.TTL)
			h.renewDead = false
			h.backoff = 0
			h.ph = phaseHolding
			h.startItem(now)
		} else {
			h.retry(now)
		}
	case model.Renew:
		if r.OK && h.held {
			if h.cfg.Bugs&BugLastMomentRenew != 0 && now >= h.deadline {
				// BUG (last-moment-renew-from-reply): a renew answered on
				// the very tick the deadline falls (before the deadline's
				// own wake-up has run) is counted from its answer, not its
				// send: the belief outlives the lease by the round trip.
				sent = now
			}
			h.extend(sent, now, r.TTL)
			if h.cfg.Bugs&BugFenceZeroOnRenew != 0 {
				// BUG (fence-zero-on-renew): the renew's answer carries no
				// fence, and the holder stores that 0 over the fence its
				// grant carried; it believes on under fence 0.
				h.fence = 0
			}
		} else if h.held {
			h.renewFailed(now, "renew-failed")
		}
	case model.Write:
		if r.OK {
			h.writesLeft--
			if h.writesLeft == 0 {
				h.item++
				h.startItem(now)
			}
		} else if h.held {
			// The store says we are not the holder (or our fence is stale):
			// stop writing, re-acquire.
			h.lose(now, "write-refused")
		}
	case model.Release:
		h.releaseDone(now)
	}
	h.advance(now)
	return true
}

// renewFailed applies the iron rule to a renew refused or unanswered: the
// lease is lost.
func (h *Holder) renewFailed(now int64, why string) {
	switch {
	case h.cfg.Bugs&BugWriteAfterFailedRenew != 0:
		// BUG (write-after-failed-renew): the iron rule broken. A failed
		// renew is logged and ignored: the holder keeps its lease locally and
		// goes on writing (and renewing) until the store refuses a write.
		h.nextRenew = now + h.cfg.RenewEvery
		return
	case h.cfg.Bugs&BugRenewLoopDies != 0:
		// BUG (renew-loop-dies): the renewal loop dies on its first failure,
		// quietly. The main loop is not told and keeps writing under the lost
		// lease until its local deadline.
		h.renewDead = true
		return
	}
	h.lose(now, why)
}

// extend moves the local deadline after a successful acquire or renew sent
// at local time sent and answered at recv: sent + TTL − 1 − ⌈2ρ·TTL⌉ −
// margin, with TTL the one the coordinator granted (granted: the reply's
// TTL, 0 when it granted what was asked). A lease granted shorter than
// asked is renewed that much sooner too: the renew interval keeps its
// share of the TTL. Measuring from the send, not the reply, covers the time the
// request spent in flight; 2ρ covers both our drift and the coordinator's
// (TTL·(1−2ρ) ≤ TTL·(1−ρ)/(1+ρ)); the one tick covers the coordinator's
// clock resolution: it counts the TTL from its integer reading, up to a
// tick after the instant it applied the grant. Without a margin, a
// deadline of sent + TTL·(1 − 2ρ) overlapped the next holder by a tick
// (found by drawing the margin).
func (h *Holder) extend(sent, recv, granted int64) {
	c := h.cfg
	ttl, every := c.TTL, c.RenewEvery
	if granted > 0 && c.Bugs&BugIgnoreGrantedTTL == 0 {
		// (BUG ignore-granted-ttl counts the TTL it asked for, whatever
		// the coordinator granted.)
		ttl = granted
		if granted < c.TTL {
			every = max(c.RenewEvery*granted/c.TTL, 1)
		}
	}
	if c.Bugs&BugDeadlineFromReply != 0 {
		// BUG (deadline-from-reply): the deadline is counted from when the
		// reply arrived, not from when the request was sent. The lease
		// started at the coordinator somewhere in between, so a slow reply
		// stretches the holder's belief past the coordinator's expiry.
		sent = recv
	}
	drift := 2 * ttl * c.RhoPPM
	switch {
	case c.Bugs&BugDriftOnce != 0:
		// BUG (drift-counted-once): only the holder's own drift is taken
		// off the lease, not the coordinator's too: with a margin to hide
		// it the belief is safe, without one a fast coordinator expires the
		// lease first.
		drift = ttl * c.RhoPPM
	case c.Bugs&BugDriftIgnored != 0:
		// BUG (drift-ignored): the deadline is the TTL less the margin, as
		// if clocks did not drift: the margin alone has to absorb both.
		drift = 0
	}
	h.deadline = sent + ttl - 1 - (drift+999_999)/1_000_000 - max(c.Margin, 0)
	h.nextRenew = sent + every
	if c.Bugs&BugDeadlineAtNextRenewal != 0 {
		// BUG (deadline-at-next-renewal): the lease is taken to last until
		// the next renewal is due: right with a renew interval of TTL/3,
		// wrong once the interval is set near the TTL.
		h.deadline = max(h.deadline, h.nextRenew)
	}
}

func (h *Holder) startItem(now int64) {
	h.working = false
	h.writesLeft = 0
	if h.item >= len(h.cfg.Work) {
		return
	}
	h.working = true
	h.workEnd = now + h.cfg.Work[h.item].Work + h.overrun
	h.overrun = 0
}

// lose applies the iron rule: stop writing, abandon what is in flight, back
// off, re-acquire. The current work item starts over.
func (h *Holder) lose(now int64, why string) {
	switch why {
	case "deadline":
		h.lost.deadline++
	case "renew-failed":
		h.lost.renewFailed++
	case "renew-timeout":
		h.lost.renewTimeout++
	case "write-refused":
		h.lost.writeRefused++
	case "precheck":
		h.lost.precheck++
	}
	h.held = false
	h.out, h.inFlight = Request{}, false
	h.working = false
	h.writesLeft = 0
	h.retry(now)
}

func (h *Holder) retry(now int64) {
	switch {
	case h.backoff == 0:
		h.backoff = h.cfg.RetryMin
	case h.cfg.Bugs&BugBackoffUncapped != 0:
		// BUG (backoff-uncapped): the backoff doubles without its cap: after
		// a few refusals a waiter sleeps far past the moment the lease is
		// released or expires.
		h.backoff *= 2
	default:
		h.backoff = min(2*h.backoff, h.cfg.RetryMax)
	}
	h.retryAt = now + h.backoff
	h.ph = phaseBackoff
}

func (h *Holder) request(now int64, r Request) {
	h.nextI++
	r.ID = h.nextI
	r.Key, r.Owner = h.cfg.Key, h.cfg.Owner
	h.out, h.inFlight, h.outSent, h.outUntil = r, true, now, now+h.cfg.Timeout
	h.send = append(h.send, r)
}

// expired reports whether the local deadline has passed.
func (h *Holder) expired(now int64) bool {
	if h.cfg.Bugs&BugNoLocalDeadline != 0 && h.renewDead {
		// BUG (no-local-deadline): the main loop keeps no deadline of its
		// own; it trusts the renewal loop to tell it when the lease is lost.
		// When that loop dies quietly, nobody tells it, and every write after
		// the expiry lands in someone else's term.
		return false
	}
	return now >= h.deadline
}

// advance runs the protocol until it has to wait.
func (h *Holder) advance(now int64) {
	for range 8 {
		if h.held && h.expired(now) {
			// Not renewed in time (renewal loop dead, renew unanswered, a
			// pause): stop, even with a write in flight.
			h.lose(now, "deadline")
		}
		if h.inFlight {
			if now < h.outUntil {
				return
			}
			req := h.out
			h.out, h.inFlight = Request{}, false // unanswered: its outcome stays unknown
			switch req.Kind {
			case model.Acquire:
				h.retry(now)
			case model.Renew:
				h.renewFailed(now, "renew-timeout")
			case model.Release:
				h.releaseDone(now)
			case model.Write:
				// The write may or may not have happened. The deadline and
				// the renewals still guard the lease; go on with the next.
				h.writesLeft--
				if h.writesLeft == 0 {
					h.item++
					h.startItem(now)
				}
			}
			continue
		}
		switch h.ph {
		case phaseStart:
			h.ph = phaseAcquiring
			h.request(now, Request{Kind: model.Acquire, TTL: h.cfg.TTL})
			return
		case phaseBackoff:
			if now < h.retryAt {
				return
			}
			h.ph = phaseAcquiring
			h.request(now, Request{Kind: model.Acquire, TTL: h.cfg.TTL})
			return
		case phaseHolding:
			if !h.renewDead && now >= h.nextRenew {
				h.request(now, Request{Kind: model.Renew, TTL: h.cfg.TTL, Fence: h.fence})
				return
			}
			if h.working {
				if now < h.workEnd {
					return
				}
				h.working = false
				h.writesLeft = h.cfg.Work[h.item].Writes
				if h.writesLeft == 0 {
					h.item++
					h.startItem(now)
					continue
				}
			}
			if h.writesLeft > 0 {
				// Re-check identity, deadline and fence before every write.
				if !h.held || h.expired(now) || h.fence < 1 && !h.cfg.NoFences {
					h.lose(now, "precheck")
					continue
				}
				h.nWrites++
				dest := machine.ToCoordinator
				if h.cfg.Fenced {
					dest = machine.ToResource
				}
				h.request(now, Request{Kind: model.Write, To: dest, Fence: h.fence,
					Value: h.cfg.Name + ":w" + strconv.Itoa(h.nWrites)})
				return
			}
			if h.item >= len(h.cfg.Work) {
				if h.cfg.Bugs&BugNoRelease != 0 {
					// BUG (forgets-to-release): the work is done and the
					// holder just stops, without giving the lease back: the
					// next holder waits for it to expire.
					h.held = false
					h.ph = phaseDone
					return
				}
				// No more writes from here on: the lease is being given back.
				h.ph = phaseReleasing
				h.held = h.cfg.Bugs&BugBeliefUntilReleaseAck != 0
				// (BUG belief-until-release-ack keeps believing until the
				// release is answered, though the coordinator frees the
				// lease, and may grant it, as soon as the release arrives.)
				h.relFence = h.fence
				h.request(now, Request{Kind: model.Release, Fence: h.fence})
				return
			}
			return
		case phaseRelease2:
			if now < h.secondAt {
				return
			}
			h.ph = phaseReleasing
			h.request(now, Request{Kind: model.Release, Fence: h.relFence})
			return
		default:
			return
		}
	}
}

// releaseDone ends a release (answered or not); the double-release fault sends
// one more, after this one, so the process stays sequential.
func (h *Holder) releaseDone(now int64) {
	h.held = false
	if h.doubleLate >= 0 {
		h.ph, h.secondAt = phaseRelease2, now+h.doubleLate
		h.doubleLate = -1
		return
	}
	h.ph = phaseDone
}

func (h *Holder) wakeAt() int64 {
	w := Never
	at := func(t int64) {
		if w == Never || t < w {
			w = t
		}
	}
	if h.held && !(h.cfg.Bugs&BugNoLocalDeadline != 0 && h.renewDead) {
		at(h.deadline)
	}
	if h.inFlight {
		at(h.outUntil)
		return w
	}
	switch h.ph {
	case phaseStart:
		at(0)
	case phaseBackoff:
		at(h.retryAt)
	case phaseRelease2:
		at(h.secondAt)
	case phaseHolding:
		if !h.renewDead {
			at(h.nextRenew)
		}
		if h.working {
			at(h.workEnd)
		}
	}
	return w
}
