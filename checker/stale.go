package checker

import (
	"fmt"
	"slices"

	"github.com/leasecheck/leasecheck/model"
)

// stale-write (docs/specification.md §2): the fencing safety property, whatever token
// a write presents. An accepted write w by owner O is stale when a write w'
// by another owner O' was accepted before it, and O' had been granted the
// lease, before w' was called, under a fence above every fence O can have
// been granted before w. "Later holder" is the coordinator's grant order,
// read from the grants' own fences (fences only grow from grant to grant),
// never from the tokens the writes present: those are the holders' own
// (model.OrderedTokens) or the grants' (model.GrantTokens) — the property
// is the same for both.
//
// Why it never fires on a history some linearization explains, under
// either semantics: let g' be that grant of O'. It returned before w' was
// called, and w' took effect before w, so g' comes before w in every
// linearization. Every grant of O's that a linearization can put before w
// was called before w returned (a grant called after w returned comes
// after it), and the fence of each is below that of g' — and grants take effect
// in fence order. So at w the lease's latest grant is not O's: O is a
// deposed holder (or never held it), and its write landed after the later
// holder's. A correct store refuses it: under seed semantics the
// coordinator takes writes only from the holder; a fenced resource that
// keeps the highest token it accepted refuses w when its token is below
// that of w', and when it is not, the tokens failed to order the holders. An
// unanswered acquire of O's that a linearization can put before w may have
// granted O a later term under a fence nobody heard, so it clears w.
//
// "w' was accepted before w": w' returned before w was called (real time,
// which every linearization respects), or the coordinator's clock windows
// say so — the window of w' ends before that of w begins (exact mode: at(w') < at(w);
// docs/specification.md §3: now never goes backwards along a key's order) — the
// store's own record of the order, which catches a write sent before the
// later holder's and applied after it.
//
// It is decided online over the key's events: per owner the highest fence
// of its grants returned so far (a writer's term) and called so far (the
// latest term a write of its can belong to); the accepted writes returned
// so far folded into the best two of distinct owners; and those whose
// clock window may still end before that of a write not yet judged. A
// write is judged once every write whose window can end before its own
// begins has been called: at its return + 2u (at(w') < at(w) <= return(w)
// + u, and w' was called by at(w') + u). Its memory is bounded by the
// owners and the writes in flight or within 2u, never by the history (judge
// unlinks a judged write from those before it).
type staleWrites struct {
	u      int64 // the clock uncertainty
	seed   bool  // seed semantics: the coordinator judges the writes
	owners map[string]*staleOwner
	// prec: the accepted writes returned so far, the best two of distinct
	// owners by the term of their writer (staleWrite.term).
	prec staleBest
	// settled: the writes whose clock window ends before that of every
	// write not yet judged, or still to come, begins; recent: the other
	// returned ones.
	settled staleBest
	recent  []*staleWrite
	// flight: the accepted writes called and not yet returned; waiting:
	// returned and not yet judged.
	flight, waiting []*staleWrite
	out             sortedFinds
}

// staleOwner is one owner's grants so far.
type staleOwner struct {
	returned, called    int64     // the highest fence of its grants returned, called so far
	retGrant, callGrant *model.Op // the grants of those fences
	unanswered          bool      // an acquire of its that never answered was called
	// byProc: per process, its highest grant so far — earlier in the
	// process's order, so before any later write of the process's even
	// at a tie.
	byProc map[string]*model.Op
}

// staleWrite is an accepted write and the term its writer held at the
// latest: the highest fence of its owner's grants that returned before it
// was called (0: none).
type staleWrite struct {
	k      *kop
	term   int64
	grant  *model.Op // the grant of that fence
	lo, hi int64     // the coordinator's clock window
	before staleBest // at its call: the writes that returned before it
	// At its return: the latest term of its owner's it can belong to, and
	// whether an acquire of its owner's that never answered may have
	// granted it a later one.
	mine      int64
	mineGrant *model.Op
	open      bool
}

// staleBest keeps the writes of the highest terms, at most one per owner,
// two owners: enough to find, for any owner, the best write of another.
type staleBest [2]*staleWrite

func (b *staleBest) add(w *staleWrite) {
	if w == nil || w.term == 0 {
		return
	}
	switch {
	case b[0] == nil || w.term > b[0].term && w.k.op.Owner == b[0].k.op.Owner:
		b[0] = w
	case w.k.op.Owner == b[0].k.op.Owner:
	case w.term > b[0].term:
		b[0], b[1] = w, b[0]
	case b[1] == nil || w.term > b[1].term:
		b[1] = w
	}
}

// other returns the best write of an owner other than o, or nil.
func (b *staleBest) other(o string) *staleWrite {
	for _, w := range b {
		if w != nil && w.k.op.Owner != o {
			return w
		}
	}
	return nil
}

func newStaleWrites(hdr model.Header) staleWrites {
	return staleWrites{u: hdr.ClockUncertainty, seed: hdr.Semantics == model.Seed, owners: map[string]*staleOwner{}}
}

func (sw *staleWrites) owner(o string) *staleOwner {
	so := sw.owners[o]
	if so == nil {
		so = &staleOwner{}
		sw.owners[o] = so
	}
	return so
}

func (sw *staleWrites) call(k *kop) {
	op := k.op
	sw.advance(op.Call)
	switch {
	case grantedAcquire(op):
		so := sw.owner(op.Owner)
		if op.Fence > so.called {
			so.called, so.callGrant = op.Fence, op
		}
		if g := so.byProc[op.Process]; g == nil || op.Fence > g.Fence {
			if so.byProc == nil {
				so.byProc = map[string]*model.Op{}
			}
			so.byProc[op.Process] = op
		}
	case op.Kind == model.Acquire && !op.Returned:
		sw.owner(op.Owner).unanswered = true
	case acceptedWrite(op):
		w := &staleWrite{k: k, lo: k.in.Lo, hi: k.in.Hi, before: sw.prec}
		if so := sw.owners[op.Owner]; so != nil {
			w.term, w.grant = so.returned, so.retGrant
			if g := so.byProc[op.Process]; g != nil && g.Fence > w.term {
				w.term, w.grant = g.Fence, g
			}
		}
		sw.flight = append(sw.flight, w)
	}
}

func (sw *staleWrites) ret(k *kop) {
	op := k.op
	sw.advance(op.Return)
	if grantedAcquire(op) {
		so := sw.owner(op.Owner)
		if op.Fence > so.returned {
			so.returned, so.retGrant = op.Fence, op
		}
		return
	}
	if !acceptedWrite(op) {
		return
	}
	i := slices.IndexFunc(sw.flight, func(w *staleWrite) bool { return w.k == k })
	w := sw.flight[i]
	sw.flight = slices.Delete(sw.flight, i, i+1)
	// Every grant of its owner's that can come before it has been called
	// by now (calls come before returns at a tie).
	if so := sw.owners[op.Owner]; so != nil {
		w.mine, w.mineGrant, w.open = so.called, so.callGrant, so.unanswered
	}
	sw.prec.add(w)
	sw.recent = append(sw.recent, w)
	sw.waiting = append(sw.waiting, w)
	if sw.u == 0 {
		sw.advance(op.Return)
	}
}

// advance judges the waiting writes whose time has come by t (their
// return + 2u), then moves into settled the recent writes whose clock
// window ends before that of every write not yet judged, or called at t
// or later, begins.
func (sw *staleWrites) advance(t int64) {
	if len(sw.waiting) > 0 {
		kept := sw.waiting[:0]
		for _, w := range sw.waiting {
			if w.k.op.Return <= t-2*sw.u {
				sw.judge(w)
			} else {
				kept = append(kept, w)
			}
		}
		clear(sw.waiting[len(kept):])
		sw.waiting = kept
	}
	if len(sw.recent) == 0 {
		return
	}
	floor := t
	for _, w := range sw.flight {
		floor = min(floor, w.k.op.Call)
	}
	for _, w := range sw.waiting {
		floor = min(floor, w.k.op.Call)
	}
	floor -= sw.u
	kept := sw.recent[:0]
	for _, r := range sw.recent {
		if r.hi < floor {
			sw.settled.add(r)
		} else {
			kept = append(kept, r)
		}
	}
	clear(sw.recent[len(kept):])
	sw.recent = kept
}

// judge decides w.
func (sw *staleWrites) judge(w *staleWrite) {
	// Judged, w needs what came before it no more. Kept, it would chain
	// every write to the ones before it (w.before holds the best writes at
	// its call, whose own before hold earlier ones): a stream would hold
	// every write it ever read, and each write's kop holds its slab of 256
	// ops.
	before := w.before
	w.before = staleBest{}
	if w.open {
		return // its owner may have been granted a later term nobody heard of
	}
	o := w.k.op.Owner
	// The write of the latest term of another owner's accepted before w:
	// by real time, or by the clock windows.
	best := before.other(o)
	consider := func(c *staleWrite) {
		if c != nil && c.k.op.Owner != o && c.term > 0 && c.hi < w.lo && (best == nil || c.term > best.term) {
			best = c
		}
	}
	consider(sw.settled.other(o))
	for _, r := range sw.recent {
		consider(r)
	}
	for _, r := range sw.flight {
		consider(r)
	}
	if best == nil || best.term <= w.mine {
		return
	}
	sw.out.add("", w.k.pos, staleFound(w, best, sw.seed))
}

func staleFound(w, later *staleWrite, seed bool) found {
	op, lw := w.k.op, later.k.op
	mine, mineGrant := w.mine, w.mineGrant
	how := fmt.Sprintf("after %s's write %q (line %d) had been accepted", lw.Owner, lw.Value, lw.Line)
	if lw.Returned && lw.Return < op.Call {
		how += " (it returned before this one was called)"
	} else {
		how += " (the store's clock says so: it applied that one first)"
	}
	term := fmt.Sprintf("%s's latest grant that can have come before its write is fence %d (line %d)", op.Owner, mine, lineOf(mineGrant))
	if mineGrant == nil {
		term = fmt.Sprintf("no acquire of %s's that can have come before its write was granted", op.Owner)
	}
	tokens := fmt.Sprintf("Its token %d is not below %s's %d: the tokens did not order the two holders, so nothing could refuse it.", op.Fence, lw.Owner, lw.Fence)
	if seed {
		tokens = "Under seed semantics the coordinator accepts a write from the holder only."
	} else if op.Fence < lw.Fence {
		tokens = fmt.Sprintf("Its token %d is below %s's %d, which the store had already accepted: a store that keeps the highest token refuses it.", op.Fence, lw.Owner, lw.Fence)
	}
	ops := []*model.Op{op, lw, later.grant}
	if mineGrant != nil {
		ops = append(ops, mineGrant)
	}
	return newFound(StaleWrite, op.Key, fmt.Sprintf(
		"%s's write %q (line %d) was accepted %s, yet %s was the later holder: it was granted fence %d (line %d) before that write, while %s. A write from a holder the lease had passed by landed after the later holder's. %s",
		op.Owner, op.Value, op.Line, how, lw.Owner, later.term, later.grant.Line, term, tokens), ops...)
}

func lineOf(op *model.Op) int {
	if op == nil {
		return 0
	}
	return op.Line
}

// finish judges the writes still waiting and returns the violations.
func (sw *staleWrites) finish() []found {
	for _, w := range sw.waiting {
		sw.judge(w)
	}
	sw.waiting = nil
	return sw.out.list()
}
