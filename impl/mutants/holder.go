package mutants

import (
	"strconv"

	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/model"
)

// holderBug selects the one planted bug of a holder mutant.
type holderBug uint8

const (
	holderOK                holderBug = iota // the reference protocol, unchanged
	holderWriteAfterFail                     // write-after-failed-renew
	holderRenewLoopDies                      // renew-loop-dies
	holderNoDeadline                         // writes-outlive-renew-loop
	holderTrustWallClock                     // trust-local-clock
	holderDeadlineFromReply                  // deadline-from-reply
	holderRenewEveryTTL                      // renew-every-ttl
)

// This file is a copy of impl/holder/holder.go (the reference holder) with
// the planted bugs switched in at the lines marked BUG. With holderOK it
// behaves exactly as the reference; TestHolderCopyIsReference proves it on
// many seeds by comparing histories.

type phase uint8

const (
	phaseStart phase = iota
	phaseAcquiring
	phaseHolding
	phaseBackoff
	phaseReleasing
	phaseRelease2
	phaseDone
)

// mholder is the reference holder state machine with one planted bug. It
// implements sim.Machine (and sim.WallClockUser, for trust-local-clock).
type mholder struct {
	bug   holderBug
	cfg   holder.Config
	ph    phase
	nextI uint64

	out      *holder.Request
	outSent  int64
	outUntil int64

	held      bool
	fence     int64
	deadline  int64
	nextRenew int64
	backoff   int64
	retryAt   int64

	item       int
	working    bool
	workEnd    int64
	writesLeft int
	nWrites    int
	overrun    int64

	renewDead  bool
	doubleLate int64
	secondAt   int64
	relFence   int64

	// trust-local-clock: the machine runs on its wall clock; skew is
	// wall - monotonic at the last step, used to map wake-ups back.
	wall, skew int64

	send []holder.Request
}

func newHolder(bug holderBug, cfg holder.Config) *mholder {
	if bug == holderRenewEveryTTL {
		// BUG: renew once per TTL instead of every TTL/3. The article:
		// renew at a third of the TTL so one lost heartbeat still leaves a
		// retry. Renewing once per TTL means the local deadline (TTL minus
		// the safety margin) always comes first: the lease is lost on every
		// term, with no fault at all.
		cfg.RenewEvery = cfg.TTL
	}
	return &mholder{bug: bug, cfg: cfg.WithDefaults(), doubleLate: -1}
}

// SetWall receives the wall-clock reading before every step.
func (h *mholder) SetWall(w int64) { h.wall = w }

// clock maps the driver's monotonic reading to the machine's time.
func (h *mholder) clock(now int64) int64 {
	if h.bug != holderTrustWallClock {
		return now
	}
	// BUG: the holder measures its lease on the wall clock, which NTP steps,
	// VM migrations and resumed containers move. A step back makes the
	// deadline and the next renewal look far away: the holder keeps
	// believing (and writing) after the coordinator has expired its lease.
	h.skew = h.wall - now
	return h.wall
}

func (h *mholder) Ready() holder.Ready {
	r := holder.Ready{Send: h.send, WakeAt: h.wakeAt(), Believes: h.held, Done: h.ph == phaseDone,
		Waiting: h.ph == phaseAcquiring || h.ph == phaseBackoff || h.ph == phaseStart}
	if h.bug == holderTrustWallClock && r.WakeAt != holder.Never {
		r.WakeAt -= h.skew // the driver schedules on the monotonic clock
	}
	if h.held {
		r.Fence = h.fence
	}
	h.send = h.send[:0]
	return r
}

func (h *mholder) KillRenewLoop() { h.renewDead = true }

func (h *mholder) Overrun(now, d int64) {
	if h.working {
		h.workEnd += d
		return
	}
	h.overrun += d
}

func (h *mholder) DoubleRelease(late int64) { h.doubleLate = max(late, 0) }

func (h *mholder) Tick(now int64) { h.advance(h.clock(now)) }

func (h *mholder) Receive(now int64, r holder.Reply) bool {
	now = h.clock(now)
	if h.out == nil || r.ID != h.out.ID {
		return false
	}
	req, sent := *h.out, h.outSent
	h.out = nil
	switch req.Kind {
	case model.Acquire:
		if r.OK {
			h.held, h.fence = true, r.Fence
			h.extend(sent, now)
			h.renewDead = false
			h.backoff = 0
			h.ph = phaseHolding
			h.startItem(now)
		} else {
			h.retry(now)
		}
	case model.Renew:
		if r.OK && h.held {
			h.extend(sent, now)
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
			h.lose(now, "write-refused")
		}
	case model.Release:
		h.releaseDone(now)
	}
	h.advance(now)
	return true
}

// renewFailed handles a renew refused or unanswered; the reference loses the
// lease (the iron rule).
func (h *mholder) renewFailed(now int64, why string) {
	switch h.bug {
	case holderWriteAfterFail:
		// BUG: the iron rule broken. A failed renew is logged and ignored:
		// the holder keeps its lease locally and goes on writing (and
		// renewing) until the store refuses a write.
		h.nextRenew = now + h.cfg.RenewEvery
		return
	case holderRenewLoopDies:
		// BUG: the renewal loop dies on its first failure, quietly. The
		// main loop is not told and keeps writing under the lost lease
		// until its local deadline.
		h.renewDead = true
		return
	}
	h.lose(now, why)
}

// extend moves the local deadline after a grant or renewal sent at sent and
// answered at recv.
func (h *mholder) extend(sent, recv int64) {
	c := h.cfg
	if h.bug == holderDeadlineFromReply {
		// BUG: the deadline is counted from when the reply arrived, not from
		// when the request was sent. The lease started at the coordinator
		// somewhere in between, so a slow reply stretches the holder's
		// belief past the coordinator's expiry by up to the round trip.
		sent = recv
	}
	h.deadline = sent + c.TTL - (2*c.TTL*c.RhoPPM+999_999)/1_000_000 - c.Margin
	h.nextRenew = sent + c.RenewEvery
}

func (h *mholder) startItem(now int64) {
	h.working = false
	h.writesLeft = 0
	if h.item >= len(h.cfg.Work) {
		return
	}
	h.working = true
	h.workEnd = now + h.cfg.Work[h.item].Work + h.overrun
	h.overrun = 0
}

func (h *mholder) lose(now int64, why string) {
	h.held = false
	h.out = nil
	h.working = false
	h.writesLeft = 0
	h.retry(now)
}

func (h *mholder) retry(now int64) {
	if h.backoff == 0 {
		h.backoff = h.cfg.RetryMin
	} else {
		h.backoff = min(2*h.backoff, h.cfg.RetryMax)
	}
	h.retryAt = now + h.backoff
	h.ph = phaseBackoff
}

func (h *mholder) request(now int64, r holder.Request) {
	h.nextI++
	r.ID = h.nextI
	r.Key, r.Owner = h.cfg.Key, h.cfg.Owner
	cp := r
	h.out, h.outSent, h.outUntil = &cp, now, now+h.cfg.Timeout
	h.send = append(h.send, r)
}

// expired reports whether the local deadline has passed.
func (h *mholder) expired(now int64) bool {
	if h.bug == holderNoDeadline && h.renewDead {
		// BUG: the main loop keeps no deadline of its own; it trusts the
		// renewal loop to tell it when the lease is lost. When that loop
		// dies quietly, nobody tells it, and every write after the expiry
		// lands in someone else's term.
		return false
	}
	return now >= h.deadline
}

func (h *mholder) advance(now int64) {
	for range 8 {
		if h.held && h.expired(now) {
			h.lose(now, "deadline")
		}
		if h.out != nil {
			if now < h.outUntil {
				return
			}
			req := h.out
			h.out = nil
			switch req.Kind {
			case model.Acquire:
				h.retry(now)
			case model.Renew:
				h.renewFailed(now, "renew-timeout")
			case model.Release:
				h.releaseDone(now)
			case model.Write:
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
			h.request(now, holder.Request{Kind: model.Acquire, TTL: h.cfg.TTL})
			return
		case phaseBackoff:
			if now < h.retryAt {
				return
			}
			h.ph = phaseAcquiring
			h.request(now, holder.Request{Kind: model.Acquire, TTL: h.cfg.TTL})
			return
		case phaseHolding:
			if !h.renewDead && now >= h.nextRenew {
				h.request(now, holder.Request{Kind: model.Renew, TTL: h.cfg.TTL, Fence: h.fence})
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
				if !h.held || h.expired(now) || h.fence < 1 {
					h.lose(now, "precheck")
					continue
				}
				h.nWrites++
				dest := holder.ToCoordinator
				if h.cfg.Fenced {
					dest = holder.ToResource
				}
				h.request(now, holder.Request{Kind: model.Write, To: dest, Fence: h.fence,
					Value: h.cfg.Name + ":w" + strconv.Itoa(h.nWrites)})
				return
			}
			if h.item >= len(h.cfg.Work) {
				h.ph = phaseReleasing
				h.held = false
				h.relFence = h.fence
				h.request(now, holder.Request{Kind: model.Release, Fence: h.fence})
				return
			}
			return
		case phaseRelease2:
			if now < h.secondAt {
				return
			}
			h.ph = phaseReleasing
			h.request(now, holder.Request{Kind: model.Release, Fence: h.relFence})
			return
		default:
			return
		}
	}
}

func (h *mholder) releaseDone(now int64) {
	h.held = false
	if h.doubleLate >= 0 {
		h.ph, h.secondAt = phaseRelease2, now+h.doubleLate
		h.doubleLate = -1
		return
	}
	h.ph = phaseDone
}

func (h *mholder) wakeAt() int64 {
	w := holder.Never
	at := func(t int64) {
		if w == holder.Never || t < w {
			w = t
		}
	}
	if h.held && !(h.bug == holderNoDeadline && h.renewDead) {
		at(h.deadline)
	}
	if h.out != nil {
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
