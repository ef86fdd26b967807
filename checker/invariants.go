package checker

import (
	"fmt"
	"sort"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// The fast invariants: single-writer-per-fence, fence-monotonic and
// stop-on-renew-failure (DESIGN.md §2). Each is a sort and a sweep over one
// key's operations, O(n log n), and is decided whatever the others say.

// maxPerKey caps the violations reported per property and key: a badly
// broken history would otherwise bury the first, most telling one.
const maxPerKey = 50

func checkInvariants(c *timed.Compiled, k int) []Violation {
	kv := keyView{c: c, ko: &c.Keys[k]}
	var out []Violation
	out = append(out, capped(kv.singleWriterPerFence())...)
	out = append(out, capped(kv.fenceMonotonic())...)
	out = append(out, capped(kv.stopOnRenewFailure())...)
	return out
}

func capped(vs []Violation) []Violation {
	if len(vs) <= maxPerKey {
		return vs
	}
	extra := len(vs) - maxPerKey
	vs = vs[:maxPerKey:maxPerKey]
	last := vs[maxPerKey-1]
	last.Explanation += fmt.Sprintf(" (%d more violations of %s on this key are not listed)", extra, last.Property)
	vs[maxPerKey-1] = last
	return vs
}

type keyView struct {
	c  *timed.Compiled
	ko *timed.KeyOps
}

func (kv keyView) op(i int) *model.Op { return &kv.c.History.Ops[kv.ko.Index[i]] }

func (kv keyView) violation(property string, explanation string, ops ...*model.Op) Violation {
	lines := make([]int, 0, len(ops))
	for _, op := range ops {
		lines = append(lines, op.Line)
	}
	sort.Ints(lines)
	return Violation{Property: property, Key: kv.ko.Key, Lines: lines, Explanation: explanation}
}

// select returns the key's ops (as KeyOps indices) that pass keep.
func (kv keyView) selectOps(keep func(*model.Op) bool) []int {
	var out []int
	for i := range kv.ko.Index {
		if keep(kv.op(i)) {
			out = append(out, i)
		}
	}
	return out
}

func grantedAcquire(op *model.Op) bool { return op.Kind == model.Acquire && op.Returned && op.OK }
func acceptedWrite(op *model.Op) bool  { return op.Kind == model.Write && op.Returned && op.OK }

func (kv keyView) singleWriterPerFence() []Violation {
	var grants, writes []*model.Op
	var unknownAcq []*model.Op
	for i := range kv.ko.Index {
		switch op := kv.op(i); {
		case grantedAcquire(op):
			grants = append(grants, op)
		case acceptedWrite(op):
			writes = append(writes, op)
		case op.Kind == model.Acquire && !op.Returned:
			unknownAcq = append(unknownAcq, op)
		}
	}
	if len(writes) == 0 {
		return nil
	}
	byFence := func(ops []*model.Op) {
		sort.SliceStable(ops, func(i, j int) bool { return ops[i].Fence < ops[j].Fence })
	}
	byFence(grants)
	byFence(writes)
	var out []Violation
	g := 0
	for lo := 0; lo < len(writes); {
		f := writes[lo].Fence
		hi := lo
		for hi < len(writes) && writes[hi].Fence == f {
			hi++
		}
		ws := writes[lo:hi]
		lo = hi
		for g < len(grants) && grants[g].Fence < f {
			g++
		}
		gEnd := g
		for gEnd < len(grants) && grants[gEnd].Fence == f {
			gEnd++
		}
		gs := grants[g:gEnd]
		first := ws[0]
		for _, w := range ws[1:] {
			if w.Owner != first.Owner {
				out = append(out, kv.violation(SingleWriterPerFence, fmt.Sprintf(
					"writes under fence %d were accepted from two owners: %s's %q (line %d) and %s's %q (line %d); a fence must belong to one holder",
					f, first.Owner, first.Value, first.Line, w.Owner, w.Value, w.Line), first, w))
				break
			}
		}
		if len(gs) == 0 {
			if hasUnknownBefore(unknownAcq, first) {
				continue // an acquire that never returned may have granted it
			}
			out = append(out, kv.violation(SingleWriterPerFence, fmt.Sprintf(
				"%s's write %q under fence %d was accepted (line %d), but no acquire granted fence %d to %s",
				first.Owner, first.Value, f, first.Line, f, first.Owner), first))
			continue
		}
		for _, w := range ws {
			if !ownerIn(gs, w.Owner) {
				g := gs[0]
				out = append(out, kv.violation(SingleWriterPerFence, fmt.Sprintf(
					"fence %d was granted to %s (line %d), yet %s's write %q under it was accepted (line %d)",
					f, g.Owner, g.Line, w.Owner, w.Value, w.Line), g, w))
				break
			}
		}
	}
	return out
}

func hasUnknownBefore(acqs []*model.Op, w *model.Op) bool {
	for _, a := range acqs {
		if a.Owner == w.Owner && a.Call <= w.Return {
			return true
		}
	}
	return false
}

func ownerIn(ops []*model.Op, owner string) bool {
	for _, op := range ops {
		if op.Owner == owner {
			return true
		}
	}
	return false
}

func (kv keyView) fenceMonotonic() []Violation {
	var out []Violation
	out = append(out, kv.monotone(grantedAcquire, true)...)
	out = append(out, kv.monotone(acceptedWrite, false)...)
	return out
}

// monotone checks that when a precedes b (a returned before b was called),
// fence(a) < fence(b) (strict: acquires) or fence(a) <= fence(b) (writes).
// One sweep: ops sorted by call; a running maximum over the ops that
// returned before the current call.
func (kv keyView) monotone(keep func(*model.Op) bool, strict bool) []Violation {
	sel := kv.selectOps(keep)
	byCall := make([]*model.Op, len(sel))
	for i, j := range sel {
		byCall[i] = kv.op(j)
	}
	byRet := append([]*model.Op(nil), byCall...)
	sort.SliceStable(byCall, func(i, j int) bool { return byCall[i].Call < byCall[j].Call })
	sort.SliceStable(byRet, func(i, j int) bool { return byRet[i].Return < byRet[j].Return })
	var out []Violation
	var best *model.Op
	r := 0
	for _, b := range byCall {
		for r < len(byRet) && byRet[r].Return < b.Call {
			if a := byRet[r]; best == nil || a.Fence > best.Fence {
				best = a
			}
			r++
		}
		if best == nil {
			continue
		}
		if strict && best.Fence >= b.Fence {
			out = append(out, kv.violation(FenceMonotonic, fmt.Sprintf(
				"%s was granted fence %d (line %d, returned t=%d) before %s's acquire was called (t=%d), yet %s was granted fence %d (line %d); fences must grow with every grant",
				best.Owner, best.Fence, best.Line, best.Return, b.Owner, b.Call, b.Owner, b.Fence, b.Line), best, b))
		}
		if !strict && b.Fence < best.Fence {
			out = append(out, kv.violation(FenceMonotonic, fmt.Sprintf(
				"%s's write %q under fence %d was accepted (line %d, returned t=%d) before %s's write %q was called (t=%d), yet that write under the older fence %d was accepted too (line %d)",
				best.Owner, best.Value, best.Fence, best.Line, best.Return, b.Owner, b.Value, b.Call, b.Fence, b.Line), best, b))
		}
	}
	return out
}

// stopOnRenewFailure: after a renew by O fails (ok=false) or never returns,
// O must not write under that fence again until it acquires anew. "Later"
// is O's same process's order, or another of O's processes calling after
// the renew returned.
func (kv keyView) stopOnRenewFailure() []Violation {
	type ownerOps struct {
		ops      []int           // file order, so each process's order
		writes   map[int64][]int // positions in ops, by fence
		acquires []int           // positions in ops of granted acquires
	}
	// Only owners with a failed renew need looking at.
	failing := map[string]bool{}
	for i := range kv.ko.Index {
		if op := kv.op(i); op.Kind == model.Renew && !(op.Returned && op.OK) {
			failing[op.Owner] = true
		}
	}
	if len(failing) == 0 {
		return nil
	}
	byOwner := map[string]*ownerOps{}
	var owners []string
	for i := range kv.ko.Index {
		op := kv.op(i)
		if !failing[op.Owner] {
			continue
		}
		oo := byOwner[op.Owner]
		if oo == nil {
			oo = &ownerOps{writes: map[int64][]int{}}
			byOwner[op.Owner] = oo
			owners = append(owners, op.Owner)
		}
		switch {
		case op.Kind == model.Write:
			oo.writes[op.Fence] = append(oo.writes[op.Fence], len(oo.ops))
		case grantedAcquire(op):
			oo.acquires = append(oo.acquires, len(oo.ops))
		}
		oo.ops = append(oo.ops, i)
	}
	sort.Strings(owners)
	var out []Violation
	for _, owner := range owners {
		oo := byOwner[owner]
		at := func(pos int) *model.Op { return kv.op(oo.ops[pos]) }
		for rpos, i := range oo.ops {
			r := kv.op(i)
			if r.Kind != model.Renew || r.Returned && r.OK {
				continue
			}
			f := r.Fence
			if f == 0 {
				f = kv.latestGrant(oo.acquires, at, rpos, r)
			}
			for _, wpos := range oo.writes[f] {
				w := at(wpos)
				if f == 0 || w.Process == r.Process && wpos < rpos || !after(r, w) || reacquired(oo.acquires, at, rpos, wpos, r, w) {
					continue
				}
				out = append(out, renewViolation(kv, r, w, f))
				break
			}
		}
	}
	return out
}

// latestGrant is the fence of O's latest successful acquire before the
// renew at rpos: earlier in its process, or returned before it was called.
func (kv keyView) latestGrant(acquires []int, at func(int) *model.Op, rpos int, r *model.Op) int64 {
	var best *model.Op
	for _, apos := range acquires {
		a := at(apos)
		if a.Process == r.Process && apos > rpos || a.Process != r.Process && a.Return >= r.Call {
			continue
		}
		if best == nil || a.Fence > best.Fence {
			best = a
		}
	}
	if best == nil {
		return 0
	}
	return best.Fence
}

// after reports whether b comes after a for the iron rule: later in the
// same process (callers pass b later in file order), or called after a
// returned.
func after(a, b *model.Op) bool {
	if a.Process == b.Process {
		return true
	}
	return a.Returned && b.Call > a.Return
}

// reacquired reports whether O acquired again between the failed renew r
// and the write w: an acquire after r that precedes w.
func reacquired(acquires []int, at func(int) *model.Op, rpos, wpos int, r, w *model.Op) bool {
	for _, apos := range acquires {
		a := at(apos)
		if apos <= rpos && a.Process == r.Process || !after(r, a) {
			continue
		}
		if a.Process == w.Process && apos < wpos || a.Return < w.Call {
			return true
		}
	}
	return false
}

func renewViolation(kv keyView, r, w *model.Op, f int64) Violation {
	how := "failed"
	if !r.Returned {
		how = "never answered"
	} else if r.Error != "" {
		how = fmt.Sprintf("failed with %q", r.Error)
	}
	outcome := "The write was rejected, but attempting it at all breaks the rule"
	if w.Returned && w.OK {
		outcome = "The write was accepted"
	} else if !w.Returned {
		outcome = "The write's outcome is unknown"
	}
	return kv.violation(StopOnRenewFailure, fmt.Sprintf(
		"%s's renew of fence %d %s (line %d), yet %s wrote %q under fence %d afterwards (line %d) without acquiring again. %s: a failed renewal must stop all writing.",
		r.Owner, f, how, r.Line, w.Owner, w.Value, f, w.Line, outcome), r, w)
}
