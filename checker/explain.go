package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// stuckAt is where every order of a key's operations stops: the furthest
// some order gets, the state it leaves there, and the ops that could come
// next but cannot follow it.
type stuckAt struct {
	state           timed.State
	depth, complete int       // completed ops placed, and in the key
	last, grant     *model.Op // the last op placed, the current grant (nil: none)
	next            []stuckOp
}

type stuckOp struct {
	op *model.Op
	in timed.Input
}

// stuckFromSearch is where the depth-first search's longest path stopped.
func stuckFromSearch(c *timed.Compiled, k int, res *searchResult) stuckAt {
	ko := &c.Keys[k]
	h := c.History
	st := stuckAt{state: res.state, depth: res.depth, complete: res.complete}
	placed := map[int]bool{}
	for p := res.path; p != nil; p = p.parent {
		placed[p.op] = true
		op := &h.Ops[ko.Index[p.op]]
		if st.last == nil {
			st.last = op
		}
		if st.grant == nil && op.Kind == model.Acquire && (p.unknown || op.OK) {
			st.grant = op
		}
	}
	// The ops that could come next: not placed, completed, called before
	// the earliest pending return, and after their process predecessor at a
	// tie.
	minRet := timed.Inf
	for i, in := range ko.Inputs {
		if !placed[i] && mustPlace(in) && !in.Unknown {
			minRet = min(minRet, h.Ops[ko.Index[i]].Return)
		}
	}
	pred := tiePredecessors(h, ko)
	for i, in := range ko.Inputs {
		if !placed[i] && mustPlace(in) && h.Ops[ko.Index[i]].Call <= minRet && (pred[i] < 0 || placed[int(pred[i])]) {
			st.next = append(st.next, stuckOp{&h.Ops[ko.Index[i]], in})
		}
	}
	return st
}

// stuckFromSweep is where a sweep's furthest configuration stopped.
func stuckFromSweep(ss *sweepStuck, complete int) stuckAt {
	st := stuckAt{state: ss.c.s, depth: ss.placed, complete: complete}
	if ss.c.last != nil {
		st.last = ss.c.last.op
	}
	if ss.c.grant != nil {
		st.grant = ss.c.grant.op
	}
	for _, k := range ss.pending {
		if k.pred == nil || placedIn(k.pred, ss.c.placed) {
			st.next = append(st.next, stuckOp{k.op, k.in})
		}
	}
	return st
}

// explainStuck tells why no order explains a key's history: the longest
// prefix some order explains, the state it leaves, and why the next
// operation cannot follow it.
func explainStuck(nm *timed.Names, tf timefmt.Times, rules timed.Rules, key string, st stuckAt) found {
	// The culprit is the earliest by clock, preferring an op that is not a
	// read: a read that sees the wrong data is usually the witness of
	// another op's fault, not the fault.
	cands := slices.Clone(st.next)
	sort.SliceStable(cands, func(a, b int) bool {
		ra, rb := cands[a].in.Kind == model.Read, cands[b].in.Kind == model.Read
		if ra != rb {
			return rb
		}
		return cands[a].in.Lo < cands[b].in.Lo
	})
	if len(cands) == 0 {
		f := newFound(Linearizable, key, "no order of the operations is consistent with the lease semantics")
		f.Lines = nil
		return f
	}
	n := names{nm, tf}
	culprit := cands[0].op
	var b strings.Builder
	fmt.Fprintf(&b, "no order of the operations explains line %d: %s. ", culprit.Line, culprit.DescribeInUnit(tf.Unit))
	if st.last != nil {
		fmt.Fprintf(&b, "The longest explainable prefix places %d of %d completed operations, ending with line %d", st.depth, st.complete, st.last.Line)
		if st.grant != nil && st.grant != st.last {
			fmt.Fprintf(&b, " (the current grant is line %d)", st.grant.Line)
		}
		fmt.Fprintf(&b, "; after it, %s. ", n.state(st.state, rules))
	} else {
		fmt.Fprintf(&b, "At the start, %s. ", n.state(st.state, rules))
	}
	b.WriteString(n.whyNot(rules, st.state, &cands[0].in, culprit))
	ops := []*model.Op{}
	if st.grant != nil && st.grant != culprit {
		ops = append(ops, st.grant)
	}
	ops = append(ops, culprit)
	for _, o := range cands[1:] {
		fmt.Fprintf(&b, " Nor can line %d come next. %s", o.op.Line, n.whyNot(rules, st.state, &o.in, o.op))
		ops = append(ops, o.op)
	}
	f := newFound(Linearizable, key, b.String(), ops...)
	f.Lines = slices.Compact(f.Lines)
	return f
}

// names renders the interned owners and values, and the history's times
// (timefmt.Times: in ms, one unit for the whole account).
type names struct {
	nm *timed.Names
	t  timefmt.Times
}

func (n names) owner(id int32) string { return n.nm.Owner(id) }

func (n names) value(id timed.Value) string {
	if id == timed.NoValue {
		return "nothing"
	}
	return fmt.Sprintf("%q", id.Value())
}

func (n names) span(lo, hi int64) string {
	switch {
	case lo == hi:
		return n.t.At(lo)
	case hi >= timed.Inf:
		return "t>=" + n.t.Dur(lo)
	case lo <= -timed.Inf:
		return "t<=" + n.t.Dur(hi)
	}
	return "t in " + n.t.Span(lo, hi)
}

func (n names) state(s timed.State, rules timed.Rules) string {
	sem := rules.Semantics
	if rules.Fences == model.NoFences {
		// No fences: say who holds it, and until when.
		var b strings.Builder
		if s.Holder == timed.NoOwner {
			b.WriteString("nobody holds the lease")
		} else {
			fmt.Fprintf(&b, "%s holds the lease until %s", n.owner(s.Holder), n.span(s.ExpLo, s.ExpHi))
		}
		fmt.Fprintf(&b, ", the data is %s", n.value(s.Data))
		if s.NowLo > -timed.Inf {
			fmt.Fprintf(&b, ", and the coordinator's clock has reached t>=%s", n.t.Dur(s.NowLo))
		}
		return b.String()
	}
	var b strings.Builder
	if s.Holder == timed.NoOwner {
		fmt.Fprintf(&b, "nobody holds the lease (fences granted so far: %d)", s.Fence)
	} else {
		fmt.Fprintf(&b, "%s holds fence %d until %s", n.owner(s.Holder), s.Fence, n.span(s.ExpLo, s.ExpHi))
	}
	if sem == model.FencedStorage {
		fmt.Fprintf(&b, ", the resource has accepted fence %d", s.Highest)
	}
	fmt.Fprintf(&b, ", the data is %s", n.value(s.Data))
	if s.NowLo > -timed.Inf {
		fmt.Fprintf(&b, ", and the coordinator's clock has reached t>=%s", n.t.Dur(s.NowLo))
	}
	return b.String()
}

// whyNot says in plain words why in cannot follow state s.
func (n names) whyNot(rules timed.Rules, s timed.State, in *timed.Input, op *model.Op) string {
	sem := rules.Semantics
	lo, hi := max(s.NowLo, in.Lo), in.Hi
	who := op.Owner
	if lo > hi {
		return fmt.Sprintf("The operation's clock window ends at %s, but the coordinator's clock never runs backwards.", n.t.At(hi))
	}
	owns := s.Holder == in.Owner && s.Holder != timed.NoOwner
	holder := n.owner(s.Holder)
	mustLive := lo < s.ExpHi && hi < s.ExpLo
	// pastLate: the op came after the expiry plus the declared lateness,
	// so no answer "still live" explains it (timed.Rules.Lateness).
	lateEnd := s.ExpHi
	past, late := "", ""
	if rules.Lateness > 0 && rules.Lateness < timed.Inf {
		lateEnd = s.ExpHi + min(rules.Lateness, timed.Inf-max(s.ExpHi, 0))
		past, late = fmt.Sprintf(" more than the declared lateness (%s) before", n.t.Dur(rules.Lateness)), " plus the declared lateness"
	}
	switch in.Kind {
	case model.Acquire:
		if in.OK {
			// The fence rules as the model applies them: none without
			// fences or for a grant whose fence is unknown (0), and a loose
			// counter is only a lower bound.
			counted := rules.Fences != model.NoFences && in.Fence != 0
			if counted && rules.Fences == model.Sequential && !s.Loose && in.Fence != s.Fence+1 {
				return fmt.Sprintf("The next grant's fence is %d, but %s was granted %d.", s.Fence+1, who, in.Fence)
			}
			if counted && in.Fence <= s.Fence {
				return fmt.Sprintf("Fences only grow, but %s was granted %d after fence %d.", who, in.Fence, s.Fence)
			}
			if s.Holder == in.Owner && hi < s.ExpLo {
				return fmt.Sprintf("%s's own lease was still live (until %s) when it was granted a new one at %s; an acquire of a live lease must be refused, even to its holder.", who, n.span(s.ExpLo, s.ExpHi), n.span(lo, hi))
			}
			if s.Holder != timed.NoOwner && hi < s.ExpLo {
				return fmt.Sprintf("%s's lease was still live (until %s) when %s was granted it at %s: two holders.", holder, n.span(s.ExpLo, s.ExpHi), who, n.span(lo, hi))
			}
		} else {
			if s.Holder == timed.NoOwner {
				return fmt.Sprintf("Nobody held the lease, yet %s's acquire was refused.", who)
			}
			if lo >= lateEnd {
				return fmt.Sprintf("%s's lease had expired (by %s)%s, yet %s's acquire at %s was refused.", holder, n.span(s.ExpLo, s.ExpHi), past, who, n.span(lo, hi))
			}
		}
	case model.Renew, model.Release:
		verb := "renew"
		if in.Kind == model.Release {
			verb = "release"
		}
		if in.OK {
			if !owns {
				return fmt.Sprintf("%s's %s succeeded, but the lease was held by %s.", who, verb, holder)
			}
			if in.Fence != 0 && in.Fence != s.Fence {
				return fmt.Sprintf("%s's %s of fence %d succeeded, but the current fence is %d.", who, verb, in.Fence, s.Fence)
			}
			if in.Kind == model.Renew && lo >= lateEnd {
				return fmt.Sprintf("%s's lease had expired (at %s%s) by the time of its renew (%s); a renew after expiry must fail.", who, n.span(s.ExpLo, s.ExpHi), late, n.span(lo, hi))
			}
		} else if owns && (in.Fence == 0 || in.Fence == s.Fence) && (in.Kind == model.Release || mustLive) {
			if rules.Fences == model.NoFences {
				return fmt.Sprintf("%s held the lease (until %s), yet its %s failed.", who, n.span(s.ExpLo, s.ExpHi), verb)
			}
			return fmt.Sprintf("%s held the lease (fence %d, until %s), yet its %s failed.", who, s.Fence, n.span(s.ExpLo, s.ExpHi), verb)
		}
	case model.Write:
		if sem == model.FencedStorage {
			if in.OK && in.Fence > s.Fence && !rules.Ordered {
				return fmt.Sprintf("The resource accepted fence %d, which had not been granted yet (fences granted: %d).", in.Fence, s.Fence)
			}
			if in.OK && in.Fence < s.Highest {
				return fmt.Sprintf("The resource accepted %s's write under fence %d after accepting fence %d.", who, in.Fence, s.Highest)
			}
			if !in.OK && rules.Ordered {
				return fmt.Sprintf("The resource rejected %s's write under token %d although it was not below %d, the highest it had accepted.", who, in.Fence, s.Highest)
			}
			if !in.OK {
				return fmt.Sprintf("The resource rejected %s's write under fence %d although it was granted and not older than %d.", who, in.Fence, s.Highest)
			}
			break
		}
		if in.OK {
			if !owns {
				return fmt.Sprintf("%s's write was accepted, but the lease was held by %s.", who, holder)
			}
			if in.Fence != s.Fence {
				return fmt.Sprintf("%s's write under fence %d was accepted, but the current fence is %d.", who, in.Fence, s.Fence)
			}
			if lo >= lateEnd {
				return fmt.Sprintf("%s's write at %s was accepted after its lease expired (%s%s).", who, n.span(lo, hi), n.span(s.ExpLo, s.ExpHi), late)
			}
		} else if owns && in.Fence == s.Fence && mustLive {
			if rules.Fences == model.NoFences {
				return fmt.Sprintf("%s held a live lease (until %s), yet its write at %s was rejected.", who, n.span(s.ExpLo, s.ExpHi), n.span(lo, hi))
			}
			return fmt.Sprintf("%s held a live lease under fence %d (until %s), yet its write at %s was rejected.", who, s.Fence, n.span(s.ExpLo, s.ExpHi), n.span(lo, hi))
		}
	case model.Read:
		return fmt.Sprintf("The read returned %s, but the data is %s.", n.value(in.Value), n.value(s.Data))
	}
	return "No order of the remaining concurrent operations gets past this point."
}
