package report

import (
	"sort"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

// Window is a time the history knows only within bounds, [Lo, Hi] in the
// history's unit. In exact mode (every op carries `at`) Lo == Hi; in
// interval mode the coordinator's clock lies somewhere in the window
// (docs/specification.md §3).
type Window struct{ Lo, Hi int64 }

// Exact reports whether the window is a single instant.
func (w Window) Exact() bool { return w.Lo == w.Hi }

func (w Window) plus(d int64) Window { return Window{w.Lo + d, w.Hi + d} }

func minWindow(a, b Window) Window { return Window{min(a.Lo, b.Lo), min(a.Hi, b.Hi)} }

// EndCause says what ended a term.
type EndCause uint8

const (
	// Expired: the granted expiry came first (or the history ended before it).
	Expired EndCause = iota
	// Released: its holder released it before the expiry.
	Released
	// Superseded: the coordinator granted the lease again before the
	// expiry. The reference coordinator never does that; in a history it
	// is what a double holder looks like from the coordinator's side.
	Superseded
)

func (c EndCause) String() string {
	switch c {
	case Released:
		return "release"
	case Superseded:
		return "next grant"
	}
	return "expiry"
}

// Term is one grant of a key's lease as the coordinator saw it: who held
// it under which fence, when it was granted, the expiry its grant and
// renewals promised, and when it actually ended — at the release, the next
// grant or the expiry, whichever came first.
type Term struct {
	Key   string
	Owner string
	// Fence is the token granted; 0 when the history carries no fences (or
	// an unanswered acquire took effect under increasing fences, whose
	// number nobody heard).
	Fence int64
	// Grant is the index in History.Ops of the acquire that began it;
	// Renewals those of the renews that extended it; Release that of the
	// release that ended it, or -1.
	Grant    int
	Renewals []int
	Release  int
	// Start is when it was granted; Granted its promised expiry (the last
	// grant's or renewal's clock + ttl); End when it ended.
	Start, Granted, End Window
	EndedBy             EndCause
	// Linearized is true when the term comes from the checker's
	// linearization of the key. False: the key has no linearization that
	// covers these ops (no check was run, or the search stopped at a
	// violation), and the term is read off the recorded outcomes in clock
	// order: what the coordinator claimed, not an order proven consistent.
	Linearized bool
}

// Terms derives the coordinator's terms of every key, ordered by key (as
// the checker orders keys) and then by start.
//
// Where the checker found a linearization it is followed: the order is
// proven consistent with the lease semantics, so the derivation only
// narrates it — a granted acquire opens a term, a granted renew extends
// it, a granted release ends it — and never re-judges an outcome. An
// unanswered op the linearization applied counts as granted (it took
// effect). The clock of each step is its `at` in exact mode; in interval
// mode its window [call-u, return+u], narrowed because the coordinator's
// clock never goes backwards along a linearization (docs/specification.md §3). An op
// the linearization does not place (past a violation, or when r is nil)
// is taken at its recorded outcome, in clock order, marked not Linearized.
func Terms(h *model.History, r *checker.Result) []Term {
	d := newDeriver(h)
	var out []Term
	for _, key := range d.keys {
		out = append(out, d.keyTerms(key, r)...)
	}
	return out
}

type deriver struct {
	h     *model.History
	end   int64 // the history's last instant: caps windows with no upper bound
	keys  []string
	byKey map[string][]int
}

func newDeriver(h *model.History) *deriver {
	d := &deriver{h: h, byKey: map[string][]int{}, end: historyEnd(h)}
	for i := range h.Ops {
		k := h.Ops[i].Key
		if _, ok := d.byKey[k]; !ok {
			d.keys = append(d.keys, k)
		}
		d.byKey[k] = append(d.byKey[k], i)
	}
	sort.Strings(d.keys)
	return d
}

// historyEnd is the latest instant any op of h mentions.
func historyEnd(h *model.History) int64 {
	var end int64
	for i := range h.Ops {
		op := &h.Ops[i]
		end = max(end, op.Call)
		if op.Returned {
			end = max(end, op.Return)
		}
		if op.HasAt {
			end = max(end, op.At)
		}
	}
	for _, f := range h.Faults {
		end = max(end, f.Start)
		if f.HasEnd {
			end = max(end, f.End)
		}
	}
	return end
}

// ownWindow is where the coordinator's clock read `now` for op, by the op
// alone; an unanswered op's window is capped at the history's end.
func (d *deriver) ownWindow(op *model.Op) Window {
	if op.HasAt {
		return Window{op.At, op.At}
	}
	u := d.h.Header.ClockUncertainty
	if op.Returned {
		return Window{op.Call - u, op.Return + u}
	}
	return Window{op.Call - u, max(op.Call-u, d.end+u)}
}

type step struct {
	op         int
	applied    bool // never returned, took effect here
	w          Window
	linearized bool
}

func linearizationOf(r *checker.Result, key string) *checker.KeyLinearization {
	if r == nil {
		return nil
	}
	for i := range r.Linearizations {
		if r.Linearizations[i].Key == key {
			return &r.Linearizations[i]
		}
	}
	return nil
}

// steps orders key's ops for the derivation: the linearization first, with
// clock windows narrowed along it, then every op it does not place, by
// clock.
func (d *deriver) steps(key string, r *checker.Result) []step {
	var out []step
	placed := map[int]bool{}
	if kl := linearizationOf(r, key); kl != nil {
		for _, s := range kl.Steps {
			if s.Op < 0 || s.Op >= len(d.h.Ops) || placed[s.Op] {
				continue
			}
			placed[s.Op] = true
			out = append(out, step{op: s.Op, applied: s.Applied, w: d.ownWindow(&d.h.Ops[s.Op]), linearized: true})
		}
		// now never decreases along a linearization: each step's clock is
		// at least its predecessor's lower bound and at most its
		// successor's upper bound.
		for i := 1; i < len(out); i++ {
			out[i].w.Lo = max(out[i].w.Lo, out[i-1].w.Lo)
		}
		for i := len(out) - 2; i >= 0; i-- {
			out[i].w.Hi = min(out[i].w.Hi, out[i+1].w.Hi)
		}
		for i := range out {
			out[i].w.Hi = max(out[i].w.Hi, out[i].w.Lo)
		}
	}
	var rest []step
	for _, i := range d.byKey[key] {
		if !placed[i] {
			rest = append(rest, step{op: i, w: d.ownWindow(&d.h.Ops[i])})
		}
	}
	sort.SliceStable(rest, func(a, b int) bool { return rest[a].w.Lo < rest[b].w.Lo })
	return append(out, rest...)
}

func (d *deriver) keyTerms(key string, r *checker.Result) []Term {
	var terms []Term
	cur := -1 // index in terms of the open term
	var lastFence int64
	closeAt := func(w Window, cause EndCause) {
		t := &terms[cur]
		t.End = minWindow(w, t.Granted)
		t.EndedBy = cause
		if w.Lo >= t.Granted.Lo {
			t.EndedBy = Expired // the clock had (or may have) reached the expiry first
		}
		cur = -1
	}
	for _, s := range d.steps(key, r) {
		op := &d.h.Ops[s.op]
		granted := op.Returned && op.OK || s.applied
		if !granted {
			continue // refused, or never known to take effect: no change of term
		}
		switch op.Kind {
		case model.Acquire:
			if cur >= 0 {
				closeAt(s.w, Superseded)
			}
			fence := op.Fence
			if fence == 0 && !op.Returned && d.h.Header.Fences == model.Sequential {
				fence = lastFence + 1 // an applied unanswered acquire got the next fence
			}
			lastFence = max(lastFence, fence)
			terms = append(terms, Term{
				Key: key, Owner: op.Owner, Fence: fence, Grant: s.op, Release: -1,
				Start: s.w, Granted: s.w.plus(op.TTL), Linearized: s.linearized,
			})
			cur = len(terms) - 1
		case model.Renew:
			if cur >= 0 && terms[cur].Owner == op.Owner {
				terms[cur].Granted = s.w.plus(op.TTL)
				terms[cur].Renewals = append(terms[cur].Renewals, s.op)
				terms[cur].Linearized = terms[cur].Linearized && s.linearized
			}
		case model.Release:
			if cur >= 0 && terms[cur].Owner == op.Owner {
				terms[cur].Release = s.op
				closeAt(s.w, Released)
			}
		}
	}
	if cur >= 0 {
		terms[cur].End, terms[cur].EndedBy = terms[cur].Granted, Expired
	}
	sort.SliceStable(terms, func(a, b int) bool { return terms[a].Start.Lo < terms[b].Start.Lo })
	return terms
}
