package holder

import (
	"math"
	"strconv"

	"github.com/leasecheck/leasecheck/model"
)

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
	Fenced     bool
	RenewEvery int64 // default TTL/3
	Margin     int64 // deadline safety margin; default TTL/10
	Timeout    int64 // request timeout; default TTL/3
	RetryMin   int64 // acquire backoff; default TTL/10
	RetryMax   int64 // backoff cap; default TTL/4
	Work       []Item
}

// WithDefaults returns c with every zero duration replaced by its default.
func (c Config) WithDefaults() Config {
	t := max(c.TTL, 1)
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = max(d, 1)
		}
	}
	def(&c.RenewEvery, t/3)
	def(&c.Margin, t/10)
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

// Never is WakeAt's "no timer". It is not -1: a clock with a negative
// offset reads negative times.
const Never int64 = math.MinInt64

// Ready is what the driver must do after a step.
type Ready struct {
	// Send holds the requests to send, in order; the slice is reused by the
	// next step.
	Send []Request
	// WakeAt is the local monotonic time the holder next wants a Tick, or Never.
	WakeAt int64
	// Believes reports whether the holder believes it holds the lease.
	Believes bool
	Fence    int64 // the fence it holds, when Believes
	Done     bool  // its program is finished (released)
	// Waiting reports that it is trying to acquire (in flight or backing off).
	Waiting bool
}

// Holder is the protocol state machine. Not safe for concurrent use.
type Holder struct {
	cfg   Config
	ph    phase
	nextI uint64

	out      *Request // the one request in flight
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

	send []Request
	// Lost counts lease losses by cause, for traces and tests.
	Lost map[string]int
}

// New returns a holder that starts acquiring on its first Tick.
func New(cfg Config) *Holder {
	return &Holder{cfg: cfg.WithDefaults(), doubleLate: -1, Lost: map[string]int{}}
}

// Config returns the configuration with defaults applied.
func (h *Holder) Config() Config { return h.cfg }

// Ready returns the driver's instructions after the last Tick or Receive.
func (h *Holder) Ready() Ready {
	r := Ready{Send: h.send, WakeAt: h.wakeAt(), Believes: h.held, Done: h.ph == phaseDone,
		Waiting: h.ph == phaseAcquiring || h.ph == phaseBackoff || h.ph == phaseStart}
	if h.held {
		r.Fence = h.fence
	}
	h.send = h.send[:0]
	return r
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
func (h *Holder) Tick(now int64) { h.advance(now) }

// Receive hands the holder a reply at local time now. It reports whether the
// reply answered the request in flight; any other reply (a duplicate, or one
// for a request it gave up on) is ignored and returns false.
func (h *Holder) Receive(now int64, r Reply) bool {
	if h.out == nil || r.ID != h.out.ID {
		return false
	}
	req, sent := *h.out, h.outSent
	h.out = nil
	switch req.Kind {
	case model.Acquire:
		if r.OK {
			h.held, h.fence = true, r.Fence
			h.extend(sent)
			h.renewDead = false
			h.backoff = 0
			h.ph = phaseHolding
			h.startItem(now)
		} else {
			h.retry(now)
		}
	case model.Renew:
		if r.OK && h.held {
			h.extend(sent)
		} else if h.held {
			h.lose(now, "renew-failed")
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

// extend moves the local deadline after a successful acquire or renew sent
// at local time sent: sent + TTL·(1 − 2ρ) − margin. Measuring from the send,
// not the reply, covers the time the request spent in flight; 2ρ covers both
// our drift and the coordinator's.
func (h *Holder) extend(sent int64) {
	c := h.cfg
	h.deadline = sent + c.TTL - (2*c.TTL*c.RhoPPM+999_999)/1_000_000 - c.Margin
	h.nextRenew = sent + c.RenewEvery
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
	h.Lost[why]++
	h.held = false
	h.out = nil
	h.working = false
	h.writesLeft = 0
	h.retry(now)
}

func (h *Holder) retry(now int64) {
	if h.backoff == 0 {
		h.backoff = h.cfg.RetryMin
	} else {
		h.backoff = min(2*h.backoff, h.cfg.RetryMax)
	}
	h.retryAt = now + h.backoff
	h.ph = phaseBackoff
}

func (h *Holder) request(now int64, r Request) {
	h.nextI++
	r.ID = h.nextI
	r.Key, r.Owner = h.cfg.Key, h.cfg.Owner
	cp := r
	h.out, h.outSent, h.outUntil = &cp, now, now+h.cfg.Timeout
	h.send = append(h.send, r)
}

// advance runs the protocol until it has to wait.
func (h *Holder) advance(now int64) {
	for range 8 {
		if h.held && now >= h.deadline {
			// Not renewed in time (renewal loop dead, renew unanswered, a
			// pause): stop, even with a write in flight.
			h.lose(now, "deadline")
		}
		if h.out != nil {
			if now < h.outUntil {
				return
			}
			req := h.out
			h.out = nil // unanswered: its outcome stays unknown
			switch req.Kind {
			case model.Acquire:
				h.retry(now)
			case model.Renew:
				h.lose(now, "renew-timeout")
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
				if !h.held || now >= h.deadline || h.fence < 1 {
					h.lose(now, "precheck")
					continue
				}
				h.nWrites++
				dest := ToCoordinator
				if h.cfg.Fenced {
					dest = ToResource
				}
				h.request(now, Request{Kind: model.Write, To: dest, Fence: h.fence,
					Value: h.cfg.Name + ":w" + strconv.Itoa(h.nWrites)})
				return
			}
			if h.item >= len(h.cfg.Work) {
				// No more writes from here on: the lease is being given back.
				h.ph = phaseReleasing
				h.held = false
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
	if h.held {
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
