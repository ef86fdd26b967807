package runprop

import (
	"fmt"
	"slices"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/runrecord"
	"github.com/leasecheck/leasecheck/model"
)

// exclusiveBelief judges that no two holders believe they hold the lease at
// once (the run's belief spans, runrecord.Run.Beliefs). A holder-side bug that
// only stretches a belief — a deadline counted from the reply, drift
// forgotten, a belief kept after a release — is invisible in the history
// when the storage re-checks every write; this property sees it.
//
// The exception is precisely where the holder of the older grant could not
// know better. The article: "代价是一个极窄的竞态窗口——慢速或已被分区的持有者，
// 会误以为租约还在自己手上" (the price is a narrow race: a slow holder believes
// the lease is still its own), and "一次垃圾回收停顿……会让协调者把租约发给写者乙，
// 而写者甲还以为自己持有租约" (a GC pause makes the coordinator grant the lease
// to B while A still thinks it holds it). So an overlap between the holder
// of the older grant A and a newer one is excused
//
//   - while A is paused or frozen (it cannot act on anything, its belief
//     included: runrecord.Run.Stops), and
//   - for as long as A's monotonic clock stood still (a freeze) since A last
//     sent the acquire or renew its deadline is counted from: its clock is
//     that far behind, so its deadline comes that much later in true time,
//     and nothing on the holder could have noticed;
//   - entirely, when A was told a smaller clock-drift bound than the truth
//     and a clock (its own or the coordinator's) did drift beyond what it
//     was told: its deadline was computed from a false premise (docs/design.md
//     §7, a misconfiguration the article warns about: "限定整个系统的时钟不确定度").
//
// These are excuses for not knowing, so they end where the holder was told:
// once a renew, write or release under A's fence has been refused (its
// answer arrived), A knows it lost the lease, and nothing excuses a belief
// after that — not a pause before it, not a clock that stood still, not a
// false drift bound. The time budgets above count only the part of the
// overlap before the refusal.
//
// A partitioned or slow-network holder is not excused: its local deadline,
// counted from the request's send with 2ρ and a margin, ends its belief
// before the coordinator's expiry.
//
// A belief the client only advises. Where the run declares the beliefs a
// hint (runrecord.Run.AdvisoryBelief: a client library that does not promise
// its belief ends before the lease can move, as client-go's elector does
// not) and the history is in fenced storage, an overlap the excuses leave
// is a warning, counted and told, not a violation — unless the fence
// failed: there the resource itself refuses the older fence once it has
// accepted a newer one, so the fence, not the belief, is the safety
// mechanism, which is the point of fencing (docs/specification.md §1). The fence failed
// when a write the older holder sent under its fence while it believed was
// accepted after one under a newer fence had been (staleWrite): then the
// overlap is a violation. Everywhere else an overlap is a violation: in
// seed semantics nothing but the holders' beliefs keeps their writes
// apart, and a holder that promises its belief (the simulator's, the
// article's) breaks the promise by overlapping, fenced or not — a
// holder-side bug that only stretches a belief is this property's to see.
func exclusiveBelief(r *runrecord.Run) []Finding {
	v, _ := exclusiveBeliefWarned(r)
	return v
}

// exclusiveBeliefWarned returns the violations and, apart, the overlaps a
// working fence made harmless (warnings).
func exclusiveBeliefWarned(r *runrecord.Run) (violations, warnings []Finding) {
	bs := r.Beliefs
	grants := beliefGrants(r.History, bs)
	fenced := r.AdvisoryBelief && r.History.Header.Semantics == model.FencedStorage
	var out []Finding
	for i := range bs {
		for j := i + 1; j < len(bs) && bs[j].From < bs[i].To; j++ {
			a, b := &bs[i], &bs[j]
			if a.Process == b.Process {
				continue
			}
			lo, hi := max(a.From, b.From), min(a.To, b.To)
			if hi <= lo {
				continue
			}
			// Which grant is older is the coordinator's word (its grants in
			// the history), never the fence a holder reports believing
			// under: a holder that misreports its fence would otherwise
			// shift the blame onto the other one.
			old, fresh, og, fg := a, b, grants[i], grants[j]
			if olderGrant(grants[j], grants[i], b, a) {
				old, fresh, og, fg = b, a, grants[j], grants[i]
			}
			// The excuses hold until the holder is told (refusal); none after.
			refusal := refusedOp(r.History, old, og)
			cut := hi
			if refusal != nil {
				cut = min(hi, max(lo, refusal.Return))
			}
			excused := cut - lo
			if !misinformed(r, old) {
				ref := confirmedAt(r.History, old, og, lo)
				excused = min(excused, stopped(r, old.Process, lo, cut)+frozen(r, old.Process, ref, cut))
			}
			if hi-lo <= excused {
				continue
			}
			if refusal != nil && refusal.Return >= hi {
				refusal = nil // told only after the overlap: not part of this story
			}
			f := beliefFinding(r, old, fresh, og, fg, lo, hi, hi-lo-excused, refusal)
			if fenced {
				if stale := staleWrite(r.History, old, grantFence(old, og)); stale != nil {
					f.Lines = lines(append(f.Lines, stale.Line)...)
					f.Explanation += fmt.Sprintf(" The fence did not keep it harmless: %s's write %q under fence %d was accepted at t=%d (line %d), "+
						"after the resource had accepted a newer fence.", old.Process, stale.Value, stale.Fence, opTime(stale), stale.Line)
				} else {
					f.Warning = true
					f.Explanation += fmt.Sprintf(" A warning, not a violation: the client's belief is advisory, the history is in fenced storage, and no write %s sent under fence %d while it believed was accepted "+
						"after a newer fence had been — the fence kept the overlap harmless to the fenced resource (a side effect of %s's that the fence does not guard, it does not cover).",
						old.Process, grantFence(old, og), old.Process)
					if w, rel := writeAfterOwnRelease(r.History, old.Process); w != nil {
						f.Lines = lines(append(f.Lines, w.Line, rel.Line)...)
						f.Explanation += fmt.Sprintf(" Yet a write outlived its holder: %s's write %q (line %d), sent at t=%d, before its own release of the lease (line %d, t=%d), "+
							"was applied at t=%d, %dms after that release — delayed past it; the fence admitted it because no newer fence had been accepted yet.",
							old.Process, w.Value, w.Line, w.Call, rel.Line, opTime(rel), opTime(w), opTime(w)-opTime(rel))
					}
					if len(warnings) < maxFindings {
						warnings = append(warnings, f)
					}
					continue
				}
			}
			out = append(out, f)
			if len(out) == maxFindings {
				return out, warnings
			}
		}
	}
	return out, warnings
}

// staleWrite is the first write under fence (b's grant's), sent while b's
// holder believed, that the resource accepted after it had accepted a write
// under a newer fence: the fence failing (a correct fenced store refuses
// it), wherever the write landed — the harm a belief does comes after it.
// Nil when none was.
func staleWrite(h *model.History, b *runrecord.Belief, fence int64) *model.Op {
	if h.Header.Tokens == model.OrderedTokens {
		return staleOwnWrite(h, b, fence)
	}
	newer := int64(-1) // when a newer fence's write was first accepted
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind == model.Write && accepted(op) && op.Fence > fence && (newer < 0 || opTime(op) < newer) {
			newer = opTime(op)
		}
	}
	if newer < 0 {
		return nil
	}
	var first *model.Op
	for i := range h.Ops {
		op := &h.Ops[i]
		t := opTime(op)
		if op.Kind != model.Write || !accepted(op) || op.Fence != fence || op.Call < b.From || op.Call > b.To || t <= newer {
			continue
		}
		if first == nil || t < opTime(first) {
			first = op
		}
	}
	return first
}

// staleOwnWrite is staleWrite where the writes present their holders' own
// tokens (model.OrderedTokens), which say nothing of grants: a write is
// b's when b's process sent it while it believed, and newer when its owner
// is another, granted a fence above b's before the write was called (the
// grants' order, as the checker's stale-write reads it).
func staleOwnWrite(h *model.History, b *runrecord.Belief, fence int64) *model.Op {
	newer := int64(-1)
	for i := range h.Ops {
		w := &h.Ops[i]
		if w.Kind != model.Write || !accepted(w) || w.Owner == b.Owner || newer >= 0 && opTime(w) >= newer {
			continue
		}
		for j := range h.Ops {
			g := &h.Ops[j]
			if g.Kind == model.Acquire && g.Returned && g.OK && g.Owner == w.Owner && g.Fence > fence && g.Return < w.Call {
				newer = opTime(w)
				break
			}
		}
	}
	if newer < 0 {
		return nil
	}
	var first *model.Op
	for i := range h.Ops {
		op := &h.Ops[i]
		t := opTime(op)
		if op.Kind != model.Write || !accepted(op) || op.Process != b.Process || op.Call < b.From || op.Call > b.To || t <= newer {
			continue
		}
		if first == nil || t < opTime(first) {
			first = op
		}
	}
	return first
}

// writeAfterOwnRelease returns process's first write the store accepted
// after process's own release of the lease had taken effect, though sent
// before it (a write delayed past its holder's release), and that release;
// nil when there is none.
func writeAfterOwnRelease(h *model.History, process string) (w, rel *model.Op) {
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Process != process || op.Kind != model.Release || !accepted(op) {
			continue
		}
		for j := range h.Ops {
			x := &h.Ops[j]
			if x.Process == process && x.Kind == model.Write && accepted(x) && x.Call < opTime(op) && opTime(x) > opTime(op) && (w == nil || opTime(x) < opTime(w)) {
				w, rel = x, op
			}
		}
		if w != nil {
			return w, rel
		}
	}
	return nil, nil
}

// accepted reports whether the store accepted op, as far as the history
// says: answered ok, or applied (an exact-mode op that carries its at) ok
// with the answer lost.
func accepted(op *model.Op) bool { return op.OK && (op.Returned || op.HasAt) }

// opTime is when op took effect as far as the history says: its at, or
// its return (an accepted op took effect by then).
func opTime(op *model.Op) int64 {
	if op.HasAt {
		return op.At
	}
	return op.Return
}

func beliefFinding(r *runrecord.Run, old, fresh *runrecord.Belief, og, fg *model.Op, lo, hi, unexcused int64, refusal *model.Op) Finding {
	f := Finding{Property: ExclusiveBelief, From: lo, To: hi,
		TraceLines: lines(old.FromLine, old.ToLine, fresh.FromLine, fresh.ToLine),
		Lines:      lines(beliefGrantLine(r.History, old, og), beliefGrantLine(r.History, fresh, fg))}
	if refusal != nil {
		f.Lines = lines(append(f.Lines, refusal.Line)...)
	}
	until := func(b *runrecord.Belief) string {
		if b.Open {
			return fmt.Sprintf("past the end of the run (t=%d)", b.To)
		}
		return fmt.Sprintf("until t=%d", b.To)
	}
	// A fence-less run's beliefs are numbered by grant: it has no fences.
	term := "fence"
	if r.History.Header.Fences == model.NoFences {
		term = "grant"
	}
	f.Explanation = fmt.Sprintf("%s believed it held the lease under "+term+" %d from t=%d %s, and %s under "+term+" %d from t=%d %s: "+
		"both believed at once for %dms (t=%d..%d), %dms of it while %s was neither paused nor frozen, nor behind a stopped clock, nor told a false drift bound. "+
		"A holder must stop believing before the coordinator can grant the lease to anyone else.",
		old.Process, grantFence(old, og), old.From, until(old), fresh.Process, grantFence(fresh, fg), fresh.From, until(fresh),
		hi-lo, lo, hi, unexcused, old.Process)
	if refusal != nil {
		f.Explanation += fmt.Sprintf(" %s was told it had lost the lease at t=%d — its %s under "+term+" %d was refused (line %d%s) — and believed on for %dms after it: "+
			"after a refusal nothing excuses a belief.", old.Process, refusal.Return, refusal.Kind, grantFence(old, og), refusal.Line, errorText(refusal), hi-max(lo, refusal.Return))
	}
	return f
}

func errorText(op *model.Op) string {
	if op.Error == "" {
		return ""
	}
	return ": " + op.Error
}

// refusedOp is the first operation that told b's holder it no longer holds
// b's lease: a renew, write or release it sent under b's grant, refused
// (answered, not OK) during the belief. Nil when none was. The grant (g,
// the coordinator's) ties an op to the belief: it was sent after it by the
// same process; without one in the history, the fence b names does.
func refusedOp(h *model.History, b *runrecord.Belief, g *model.Op) *model.Op {
	var first *model.Op
	for i := range h.Ops {
		op := &h.Ops[i]
		// A write under a token of the holder's own is b's by when it was
		// sent, not by its token.
		own := op.Kind == model.Write && h.Header.Tokens == model.OrderedTokens && op.Call >= b.From
		if op.Process != b.Process || !underGrant(op, b, g) && !own || !op.Returned || op.OK || op.Return < b.From {
			continue
		}
		if op.Kind != model.Renew && op.Kind != model.Write && op.Kind != model.Release {
			continue
		}
		if first == nil || op.Return < first.Return {
			first = op
		}
	}
	return first
}

// underGrant reports whether op, by b's process, was sent under the grant g
// b lives on: after g returned (and no later than b's end). Without g, the
// fence op presents must be b's.
func underGrant(op *model.Op, b *runrecord.Belief, g *model.Op) bool {
	if g == nil {
		return op.Fence == b.Fence
	}
	return op.Call >= g.Return && op.Call <= b.To
}

// beliefGrants returns, for each belief, the coordinator's grant it lives
// on (beliefGrant), or nil.
func beliefGrants(h *model.History, bs []runrecord.Belief) []*model.Op {
	out := make([]*model.Op, len(bs))
	for i := range bs {
		out[i] = beliefGrant(h, &bs[i])
	}
	return out
}

// beliefGrant is the grant b lives on, as the coordinator recorded it: the
// last acquire by b's process answered ok at or before b began (a holder
// believes on the answer). Nil when the history has none — a driver whose
// beliefs carry the fence the harness read from the server (vclient) is
// then ordered by that.
func beliefGrant(h *model.History, b *runrecord.Belief) *model.Op {
	var g *model.Op
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != model.Acquire || op.Process != b.Process || !op.Returned || !op.OK || op.Return > b.From {
			continue
		}
		if g == nil || op.Return >= g.Return {
			g = op
		}
	}
	return g
}

// olderGrant reports whether grant a (of belief ab) is older than grant b
// (of belief bb): the coordinator applied it first (its at, else its
// answer), or, at one instant, granted the smaller fence. Without both
// grants in the history, the beliefs' own fences decide.
func olderGrant(a, b *model.Op, ab, bb *runrecord.Belief) bool {
	if a == nil || b == nil {
		return ab.Fence < bb.Fence
	}
	if ta, tb := opTime(a), opTime(b); ta != tb {
		return ta < tb
	}
	return a.Fence < b.Fence
}

// grantFence is the fence the coordinator granted b's holder: its grant's,
// else the one b names.
func grantFence(b *runrecord.Belief, g *model.Op) int64 {
	if g == nil {
		return b.Fence
	}
	return g.Fence
}

// beliefGrantLine is the history line of b's grant: g's, else the acquire that
// granted the fence b names to its owner.
func beliefGrantLine(h *model.History, b *runrecord.Belief, g *model.Op) int {
	if g != nil {
		return g.Line
	}
	return grantOp(h, b.Owner, b.Fence)
}

// grantOp returns the line of the acquire that granted fence to owner, or 0.
func grantOp(h *model.History, owner string, fence int64) int {
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind == model.Acquire && op.Returned && op.OK && op.Owner == owner && op.Fence == fence {
			return op.Line
		}
	}
	return 0
}

// confirmedAt is when b's holder last sent the request its deadline at
// time t is counted from: the acquire that granted b's lease (g), or a
// later renew by the same process that succeeded before t.
func confirmedAt(h *model.History, b *runrecord.Belief, g *model.Op, t int64) int64 {
	ref := b.From
	if g != nil {
		ref = g.Call
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Process != b.Process || !op.Returned || !op.OK || op.Return > t {
			continue
		}
		switch {
		case g == nil && op.Kind == model.Acquire && op.Fence == b.Fence:
			ref = op.Call
		case op.Kind == model.Renew && op.Call >= ref && (g != nil || op.Fence == b.Fence):
			ref = op.Call
		}
	}
	return ref
}

// beliefFence judges that every holder believes under the fence the
// coordinator granted it (fenced histories only): a holder reporting
// another — a fence overwritten on renew, a counter of its own — presents
// it on its writes, renewals and release, and anyone trusting its word
// about which grant is older blames the wrong holder. One finding per
// grant, the first belief that misnames it.
func beliefFence(r *runrecord.Run) []Finding {
	if r.History.Header.Fences == model.NoFences || r.HarnessFences {
		return nil
	}
	var out []Finding
	var told []*model.Op
	for i := range r.Beliefs {
		b := &r.Beliefs[i]
		g := beliefGrant(r.History, b)
		if g == nil || b.Fence == g.Fence || slices.Contains(told, g) {
			continue
		}
		told = append(told, g)
		until := fmt.Sprintf("until t=%d", b.To)
		if b.Open {
			until = fmt.Sprintf("past the end of the run (t=%d)", b.To)
		}
		f := Finding{Property: BeliefFence, From: b.From, To: b.To, Lines: lines(g.Line), TraceLines: lines(b.FromLine, b.ToLine)}
		f.Explanation = fmt.Sprintf("%s believed it held the lease under fence %d from t=%d %s, but the coordinator granted it fence %d (line %d, answered at t=%d), ",
			b.Process, b.Fence, b.From, until, g.Fence, g.Line, g.Return)
		if late := lateAcquire(r.History, b, g); late != nil {
			// The belief rests on an answer the process took after it had
			// moved on (the history keeps that acquire unanswered): the
			// coordinator did grant something since, to a request the
			// process no longer stood behind.
			f.Lines = lines(g.Line, late.Line)
			f.Explanation += fmt.Sprintf("the last grant it took while waiting for one; its acquire sent at t=%d (line %d) is unanswered in the history: "+
				"if the holder took that answer late, after a later request of its own, it believes on it, and a process that acts on an answer to a request it gave up on "+
				"holds a grant nobody expects it to hold.", late.Call, late.Line)
		} else {
			f.Explanation += "and granted it nothing since: the holder reports a fence it was not granted."
		}
		f.Explanation += " It presents that fence on its writes, renewals and release, " +
			"and anyone who trusts the holder's word about which grant is older blames the wrong holder."
		if w := firstWriteUnder(r.History, b, g); w != nil {
			f.Lines = lines(append(f.Lines, w.Line)...)
			f.Explanation += fmt.Sprintf(" Its first write while it did was sent under fence %d at t=%d (line %d).", w.Fence, w.Call, w.Line)
		}
		out = append(out, f)
		if len(out) == maxFindings {
			break
		}
	}
	return out
}

// lateAcquire is the last acquire b's process sent after grant g and before
// b began that the history keeps unanswered (the answer came after a later
// request of the process's own), or nil.
func lateAcquire(h *model.History, b *runrecord.Belief, g *model.Op) *model.Op {
	var late *model.Op
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind == model.Acquire && op.Process == b.Process && !op.Returned && op.Call > g.Call && op.Call <= b.From {
			late = op
		}
	}
	return late
}

// firstWriteUnder is the first write b's holder sent during b, or nil.
func firstWriteUnder(h *model.History, b *runrecord.Belief, g *model.Op) *model.Op {
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind == model.Write && op.Process == b.Process && op.Call >= b.From && op.Call <= b.To && op.Call >= g.Return {
			return op
		}
	}
	return nil
}

// stopped is how long within [lo, hi] process p was paused or frozen.
func stopped(r *runrecord.Run, p string, lo, hi int64) int64 {
	var iv [][2]int64
	for _, s := range r.Stops {
		if s.Process == p {
			iv = append(iv, [2]int64{max(s.From, lo), min(s.To, hi)})
		}
	}
	return union(iv)
}

// frozen is how long within [lo, hi] process p's clock stood still.
func frozen(r *runrecord.Run, p string, lo, hi int64) int64 {
	var iv [][2]int64
	for _, s := range r.Stops {
		if s.Process == p && s.Kind == faults.Freeze {
			iv = append(iv, [2]int64{max(s.From, lo), min(s.To, hi)})
		}
	}
	return union(iv)
}

func union(iv [][2]int64) int64 {
	slices.SortFunc(iv, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	var total, end int64
	first := true
	for _, x := range iv {
		if x[1] <= x[0] {
			continue
		}
		if first || x[0] > end {
			total += x[1] - x[0]
			end, first = x[1], false
			continue
		}
		if x[1] > end {
			total += x[1] - end
			end = x[1]
		}
	}
	return total
}

// misinformed reports whether b's holder was told a smaller drift bound than
// a drift that actually happened to its clock or the coordinator's.
func misinformed(r *runrecord.Run, b *runrecord.Belief) bool {
	sc := r.Setting
	if b.Told >= sc.RhoPPM {
		return false
	}
	abs := func(x int64) int64 { return max(x, -x) }
	node := b.Process
	for k := range len(node) {
		if node[k] == '#' { // an incarnation "h1#2" runs on node "h1"
			node = node[:k]
			break
		}
	}
	actual := abs(sc.CoordinatorDriftPPM)
	for i := range sc.Holders {
		if sc.Holders[i].Name == node {
			actual = max(actual, abs(sc.Holders[i].DriftPPM))
		}
	}
	for _, f := range r.Plan {
		if f.Kind == faults.ClockDrift && (f.Target == node || f.Target == faults.Coordinator) {
			actual = max(actual, abs(f.Amount))
		}
	}
	return actual > b.Told
}
