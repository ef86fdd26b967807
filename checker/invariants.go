package checker

import (
	"fmt"
	"sort"

	"github.com/leasecheck/leasecheck/model"
)

// The fast invariants: single-writer-per-fence, fence-monotonic and
// stop-on-renew-failure (DESIGN.md §2). Each is a sort and a sweep over one
// key's operations, O(n log n), and is decided whatever the others say.

// maxPerKey caps the violations reported per property and key: a badly
// broken history would otherwise bury the first, most telling one.
const maxPerKey = 50

func checkInvariants(c *model.Compiled) []Violation {
	var out []Violation
	for k := range c.Keys {
		kv := keyView{c: c, ko: &c.Keys[k]}
		out = append(out, capped(kv.singleWriterPerFence())...)
		out = append(out, capped(kv.fenceMonotonic())...)
		out = append(out, capped(kv.stopOnRenewFailure())...)
	}
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
	c  *model.Compiled
	ko *model.KeyOps
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
	grants := map[int64][]*model.Op{}
	for _, i := range kv.selectOps(grantedAcquire) {
		op := kv.op(i)
		grants[op.Fence] = append(grants[op.Fence], op)
	}
	// Unknown acquires, by owner: one of them may have granted a fence no
	// completed acquire reports.
	unknownAcq := map[string][]*model.Op{}
	for _, i := range kv.selectOps(func(op *model.Op) bool { return op.Kind == model.Acquire && !op.Returned }) {
		op := kv.op(i)
		unknownAcq[op.Owner] = append(unknownAcq[op.Owner], op)
	}
	writes := kv.selectOps(acceptedWrite)
	byFence := map[int64][]*model.Op{}
	var fences []int64
	for _, i := range writes {
		op := kv.op(i)
		if _, ok := byFence[op.Fence]; !ok {
			fences = append(fences, op.Fence)
		}
		byFence[op.Fence] = append(byFence[op.Fence], op)
	}
	sort.Slice(fences, func(i, j int) bool { return fences[i] < fences[j] })

	var out []Violation
	for _, f := range fences {
		ws := byFence[f]
		first := ws[0]
		for _, w := range ws[1:] {
			if w.Owner != first.Owner {
				out = append(out, kv.violation(SingleWriterPerFence, fmt.Sprintf(
					"writes under fence %d were accepted from two owners: %s's %q (line %d) and %s's %q (line %d); a fence must belong to one holder",
					f, first.Owner, first.Value, first.Line, w.Owner, w.Value, w.Line), first, w))
				break
			}
		}
		gs := grants[f]
		if len(gs) == 0 {
			if hasUnknownBefore(unknownAcq[first.Owner], first) {
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
		if a.Call <= w.Return {
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
	type ownerOps struct{ ops []int }
	byOwner := map[string]*ownerOps{}
	var owners []string
	for i := range kv.ko.Index {
		op := kv.op(i)
		oo := byOwner[op.Owner]
		if oo == nil {
			oo = &ownerOps{}
			byOwner[op.Owner] = oo
			owners = append(owners, op.Owner)
		}
		oo.ops = append(oo.ops, i)
	}
	sort.Strings(owners)
	var out []Violation
	for _, owner := range owners {
		ops := byOwner[owner].ops // file order, so each process's order
		for ri, i := range ops {
			r := kv.op(i)
			if r.Kind != model.Renew || r.Returned && r.OK {
				continue
			}
			f := r.Fence
			if f == 0 {
				f = kv.latestGrant(ops[:ri], r)
			}
			if f == 0 {
				continue // no grant to stop writing under
			}
			if v, ok := kv.firstWriteAfterFailedRenew(ops[ri+1:], r, f); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// latestGrant is the fence of O's latest successful acquire before r: in
// r's process order, or returned before r was called.
func (kv keyView) latestGrant(before []int, r *model.Op) int64 {
	var best *model.Op
	for _, i := range before {
		a := kv.op(i)
		if !grantedAcquire(a) || a.Process != r.Process && a.Return >= r.Call {
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
// same process, or called after a returned.
func after(a, b *model.Op) bool {
	if a.Process == b.Process {
		return true // callers pass b later in file order
	}
	return a.Returned && b.Call > a.Return
}

func (kv keyView) firstWriteAfterFailedRenew(later []int, r *model.Op, f int64) (Violation, bool) {
	var acquires []*model.Op
	for _, i := range later {
		op := kv.op(i)
		if grantedAcquire(op) && after(r, op) {
			acquires = append(acquires, op)
			continue
		}
		if op.Kind != model.Write || op.Fence != f || !after(r, op) {
			continue
		}
		ended := false
		for _, a := range acquires {
			if a.Process == op.Process || a.Return < op.Call {
				ended = true
				break
			}
		}
		if ended {
			continue
		}
		how := "failed"
		if !r.Returned {
			how = "never answered"
		} else if r.Error != "" {
			how = "failed (" + r.Error + ")"
		}
		outcome := "it was rejected, but writing at all breaks the rule"
		if op.Returned && op.OK {
			outcome = "and it was accepted"
		} else if !op.Returned {
			outcome = "its outcome is unknown"
		}
		return kv.violation(StopOnRenewFailure, fmt.Sprintf(
			"%s's renew of fence %d %s (line %d), yet %s wrote %q under fence %d afterwards (line %d) without acquiring again; %s. A failed renewal must stop all writing",
			r.Owner, f, how, r.Line, op.Owner, op.Value, f, op.Line, outcome), r, op), true
	}
	return Violation{}, false
}
