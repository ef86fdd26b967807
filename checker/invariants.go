package checker

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// The fast invariants: single-writer-per-fence, fence-monotonic and
// stop-on-renew-failure (docs/specification.md §2), each decided whatever the others
// say. Each is a state machine over a key's events in time order
// (events.go): what it keeps is bounded by the ops in flight and, for
// single-writer-per-fence, one small record per fence granted or written —
// never the history.
//
// "a precedes b" is docs/specification.md §2's: a returned before b was called, or a
// comes before b in one process's order. In time order the first part is
// "a's return event came before b's call event"; the second matters only at
// a tie, and each process's own ops arrive in its order.

// maxPerKey caps the violations reported per property and key: a badly
// broken history would otherwise bury the first, most telling one.
const maxPerKey = 50

// found is a violation with the span of time of the ops it cites, for the
// faults that overlapped it (faults.go).
type found struct {
	Violation
	from, to int64
	procs    []string // the processes of the ops cited, for ranking faults
}

func newFound(property, key, explanation string, ops ...*model.Op) found {
	f := found{Violation: Violation{Property: property, Key: key, Explanation: explanation}, from: timed.Inf, to: -timed.Inf}
	f.Lines = make([]int, 0, len(ops))
	for _, op := range ops {
		f.Lines = append(f.Lines, op.Line)
		if !slices.Contains(f.procs, op.Process) {
			f.procs = append(f.procs, op.Process)
		}
		f.from = min(f.from, op.Call)
		f.to = max(f.to, op.Call)
		if op.Returned {
			f.to = max(f.to, op.Return)
		}
	}
	sort.Ints(f.Lines)
	return f
}

func capped(vs []found) []found {
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

// sortedFinds keeps violations in a fixed order by a key, and only as many
// as are reported (the first maxPerKey by that order), counting the rest.
type sortedFinds struct {
	items []keyedFind
	extra int
}

type keyedFind struct {
	owner string
	pos   int
	f     found
}

func (s *sortedFinds) add(owner string, pos int, f found) {
	s.items = append(s.items, keyedFind{owner, pos, f})
	if len(s.items) > 4*maxPerKey {
		s.trim()
	}
}

// trim sorts the items and keeps the first maxPerKey.
func (s *sortedFinds) trim() {
	slices.SortStableFunc(s.items, func(a, b keyedFind) int {
		if c := cmp.Compare(a.owner, b.owner); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	if len(s.items) > maxPerKey {
		s.extra += len(s.items) - maxPerKey
		s.items = s.items[:maxPerKey]
	}
}

// list returns them in order, capped as capped caps a full list.
func (s *sortedFinds) list() []found {
	s.trim()
	out := make([]found, len(s.items))
	for i, it := range s.items {
		out[i] = it.f
	}
	if s.extra > 0 {
		last := &out[len(out)-1]
		last.Explanation += fmt.Sprintf(" (%d more violations of %s on this key are not listed)", s.extra, last.Property)
	}
	return out
}

func grantedAcquire(op *model.Op) bool { return op.Kind == model.Acquire && op.Returned && op.OK }
func acceptedWrite(op *model.Op) bool  { return op.Kind == model.Write && op.Returned && op.OK }

// invariants judges the three fast properties of one key.
type invariants struct {
	key      string
	fenced   bool // the history has fences
	ordered  bool // the writes present their holders' own tokens (model.OrderedTokens)
	mono     [2]monotone
	fenced1  fenceWriters
	unfenced fenceLessWriters
	stale    staleWrites
	stop     renewRule
}

func newInvariants(key string, hdr model.Header) *invariants {
	iv := &invariants{key: key, fenced: hdr.Fences != model.NoFences, ordered: hdr.Tokens == model.OrderedTokens}
	iv.mono[0] = monotone{strict: true, keep: grantedAcquire, tails: map[string][]*model.Op{}, tf: timefmt.Times{Unit: hdr.TimeUnit}}
	iv.mono[1] = monotone{keep: acceptedWrite, tails: map[string][]*model.Op{}, tf: timefmt.Times{Unit: hdr.TimeUnit}}
	iv.fenced1 = newFenceWriters()
	iv.fenced1.tf = timefmt.Times{Unit: hdr.TimeUnit}
	iv.unfenced = fenceLessWriters{owners: map[string]*ownerAcquires{}, pending: map[*kop]*model.Op{}, tails: map[string][]*model.Op{}}
	iv.stale = newStaleWrites(hdr)
	iv.stop = renewRule{fenced: iv.fenced, ordered: iv.ordered, owners: map[string]*renewOwner{}}
	return iv
}

func (iv *invariants) call(k *kop) {
	if iv.fenced {
		iv.mono[0].call(iv.key, k.op)
		iv.mono[1].call(iv.key, k.op)
		if !iv.ordered {
			iv.fenced1.call(k)
		}
		iv.stale.call(k)
	} else {
		iv.unfenced.call(k)
	}
	iv.stop.call(iv.key, k)
}

func (iv *invariants) ret(k *kop) {
	if iv.fenced {
		iv.mono[0].ret(k.op)
		iv.mono[1].ret(k.op)
		iv.stale.ret(k)
	} else {
		iv.unfenced.ret(iv.key, k)
	}
	iv.stop.ret(k)
}

// finish returns the violations, property by property.
func (iv *invariants) finish() []found {
	var out []found
	if iv.fenced {
		out = append(out, capped(iv.fenced1.finish(iv.key))...)
		// The acquires' violations, then the writes', the first maxPerKey.
		all := append(slices.Clone(iv.mono[0].out), iv.mono[1].out...)
		if n := iv.mono[0].n + iv.mono[1].n; n > maxPerKey {
			all = all[:maxPerKey]
			last := &all[maxPerKey-1]
			last.Explanation += fmt.Sprintf(" (%d more violations of %s on this key are not listed)", n-maxPerKey, last.Property)
		}
		out = append(out, all...)
		out = append(out, iv.stale.finish()...)
	} else {
		out = append(out, iv.unfenced.out.list()...)
	}
	iv.stop.finish()
	return append(out, iv.stop.out.list()...)
}

// monotone is fence-monotonic for acquires (strict: fence(a) < fence(b)
// when a precedes b) or for writes (fence(b) >= fence(a)). It keeps the
// selected op with the highest fence among those returned so far, and each
// process's selected ops that returned at its latest return time (for b's
// own process at a tie).
type monotone struct {
	strict bool
	keep   func(*model.Op) bool
	best   *model.Op
	tails  map[string][]*model.Op
	out    []found // the first maxPerKey
	n      int     // all of them
	tf     timefmt.Times
}

func (m *monotone) ret(op *model.Op) {
	if m.keep(op) && (m.best == nil || op.Fence > m.best.Fence) {
		m.best = op
	}
}

func (m *monotone) call(key string, b *model.Op) {
	if !m.keep(b) {
		return
	}
	prev, tie := m.best, false
	for _, a := range m.tails[b.Process] {
		if a.Return == b.Call && (prev == nil || a.Fence > prev.Fence) {
			prev, tie = a, true
		}
	}
	if ts := m.tails[b.Process]; len(ts) > 0 && ts[0].Return == b.Return {
		m.tails[b.Process] = append(ts, b)
	} else {
		m.tails[b.Process] = append(ts[:0], b)
	}
	if prev == nil {
		return
	}
	if m.strict && prev.Fence >= b.Fence || !m.strict && b.Fence < prev.Fence {
		m.n++
		if len(m.out) >= maxPerKey {
			return
		}
	}
	// when says how prev came before b, from "returned" on.
	when := func(what string) string {
		if tie {
			return fmt.Sprintf("returned %s), and then process %s called %s next (%s)", m.tf.At(prev.Return), b.Process, what, m.tf.At(b.Call))
		}
		return fmt.Sprintf("returned %s) before %s was called (%s)", m.tf.At(prev.Return), what, m.tf.At(b.Call))
	}
	if m.strict && prev.Fence >= b.Fence {
		m.out = append(m.out, newFound(FenceMonotonic, key, fmt.Sprintf(
			"%s was granted fence %d (line %d, %s, yet %s was granted fence %d (line %d); fences must grow with every grant",
			prev.Owner, prev.Fence, prev.Line, when(b.Owner+"'s acquire"), b.Owner, b.Fence, b.Line), prev, b))
	}
	if !m.strict && b.Fence < prev.Fence {
		m.out = append(m.out, newFound(FenceMonotonic, key, fmt.Sprintf(
			"%s's write %q under fence %d was accepted (line %d, %s, yet that write under the older fence %d was accepted too (line %d)",
			prev.Owner, prev.Value, prev.Fence, prev.Line, when(fmt.Sprintf("%s's write %q", b.Owner, b.Value)), b.Fence, b.Line), prev, b))
	}
}

// fenceWriters is single-writer-per-fence with fences: all accepted writes
// under fence f come from one owner, the one a successful acquire granted f.
// Per fence it keeps the first grant and each writer's first write, in file
// order; the verdict is reached at the end, fence by fence. A record is
// small (a zombie writer may come back under any old fence, so each fence's
// must be kept): two op references and no allocation of its own in the
// common case of one owner.
type fenceWriters struct {
	index   map[int64]int32 // fence -> records
	records []fenceRecord
	names   []string // owners and processes, interned
	ids     map[string]int32
	unknown map[string]*unknownAcquires // by owner
	tf      timefmt.Times
}

type fenceRecord struct {
	fence     int64
	grant     opRef // the first grant of the fence, in file order
	writer    opRef // the first accepted write under it, in file order
	hasGrant  bool
	hasWriter bool
	others    *fenceOthers // more owners; nil in the common case
}

type fenceOthers struct {
	owners  []int32 // owners granted it, beyond grant's
	writers []opRef // the first write of each owner beyond writer's
}

// opRef is what a report needs of an op it keeps long after the op passed:
// a few fields, not the op.
type opRef struct {
	value          string
	owner, process int32
	line, pos      int
	call, ret      int64
	returned       bool
}

func newFenceWriters() fenceWriters {
	return fenceWriters{index: map[int64]int32{}, ids: map[string]int32{}, unknown: map[string]*unknownAcquires{}}
}

func (fw *fenceWriters) id(s string) int32 {
	if id, ok := fw.ids[s]; ok {
		return id
	}
	id := int32(len(fw.names))
	fw.names = append(fw.names, s)
	fw.ids[s] = id
	return id
}

func (fw *fenceWriters) refOf(k *kop) opRef {
	op := k.op
	return opRef{owner: fw.id(op.Owner), value: op.Value, process: fw.id(op.Process), line: op.Line, pos: k.pos,
		call: op.Call, ret: op.Return, returned: op.Returned}
}

// op rebuilds as much of the op as reports use.
func (fw *fenceWriters) op(r *opRef) *model.Op {
	return &model.Op{Owner: fw.names[r.owner], Process: fw.names[r.process], Value: r.value, Line: r.line, Call: r.call, Return: r.ret, Returned: r.returned}
}

// unknownAcquires are an owner's unanswered acquires at their earliest call.
type unknownAcquires struct {
	call int64
	at   []*kop
}

func (fw *fenceWriters) record(f int64) *fenceRecord {
	i, ok := fw.index[f]
	if !ok {
		i = int32(len(fw.records))
		fw.index[f] = i
		fw.records = append(fw.records, fenceRecord{fence: f})
	}
	return &fw.records[i]
}

func (fw *fenceWriters) call(k *kop) {
	op := k.op
	switch {
	case grantedAcquire(op):
		r := fw.record(op.Fence)
		owner := fw.id(op.Owner)
		switch {
		case !r.hasGrant:
			r.grant, r.hasGrant = fw.refOf(k), true
		case owner == r.grant.owner || r.others != nil && slices.Contains(r.others.owners, owner):
		default:
			if r.others == nil {
				r.others = &fenceOthers{}
			}
			r.others.owners = append(r.others.owners, owner)
		}
		if k.pos < r.grant.pos {
			// The first grant in file order names the fence's holder in
			// messages; its owner stays among the owners.
			old := r.grant.owner
			r.grant = fw.refOf(k)
			if old != r.grant.owner {
				if r.others == nil {
					r.others = &fenceOthers{}
				}
				r.others.owners = append(r.others.owners, old)
			}
		}
	case acceptedWrite(op):
		r := fw.record(op.Fence)
		owner := fw.id(op.Owner)
		if !r.hasWriter {
			r.writer, r.hasWriter = fw.refOf(k), true
			return
		}
		if owner == r.writer.owner {
			if k.pos < r.writer.pos {
				r.writer = fw.refOf(k)
			}
			return
		}
		if r.others == nil {
			r.others = &fenceOthers{}
		}
		for i := range r.others.writers {
			if w := &r.others.writers[i]; w.owner == owner {
				if k.pos < w.pos {
					*w = fw.refOf(k)
				}
				return
			}
		}
		r.others.writers = append(r.others.writers, fw.refOf(k))
	case op.Kind == model.Acquire && !op.Returned:
		u := fw.unknown[op.Owner]
		switch {
		case u == nil:
			fw.unknown[op.Owner] = &unknownAcquires{call: op.Call, at: []*kop{k}}
		case op.Call < u.call:
			u.call, u.at = op.Call, append(u.at[:0], k)
		case op.Call == u.call:
			u.at = append(u.at, k)
		}
	}
}

// mayHaveGranted reports whether an unanswered acquire by w's owner may
// have been applied before w: called before w returned, and not after w in
// w's own process.
func (fw *fenceWriters) mayHaveGranted(w *opRef) bool {
	u := fw.unknown[fw.names[w.owner]]
	switch {
	case u == nil || u.call > w.ret:
		return false
	case u.call < w.ret:
		return true
	}
	for _, a := range u.at {
		if a.op.Process != fw.names[w.process] || a.pos < w.pos {
			return true
		}
	}
	return false
}

func (fw *fenceWriters) finish(key string) []found {
	var recs []*fenceRecord
	for i := range fw.records {
		if fw.records[i].hasWriter {
			recs = append(recs, &fw.records[i])
		}
	}
	slices.SortFunc(recs, func(a, b *fenceRecord) int { return cmp.Compare(a.fence, b.fence) })
	var out []found
	for _, r := range recs {
		f := r.fence
		ws := []opRef{r.writer}
		owners := []int32{}
		if r.hasGrant {
			owners = append(owners, r.grant.owner)
		}
		if r.others != nil {
			ws = append(ws, r.others.writers...)
			owners = append(owners, r.others.owners...)
		}
		slices.SortFunc(ws, func(a, b opRef) int { return cmp.Compare(a.pos, b.pos) })
		first := fw.op(&ws[0])
		if len(ws) > 1 {
			w := fw.op(&ws[1])
			out = append(out, newFound(SingleWriterPerFence, key, fmt.Sprintf(
				"writes under fence %d were accepted from two owners: %s's %q (line %d) and %s's %q (line %d); a fence must belong to one holder",
				f, first.Owner, first.Value, first.Line, w.Owner, w.Value, w.Line), first, w))
		}
		if !r.hasGrant {
			if fw.mayHaveGranted(&ws[0]) {
				continue // an acquire that never returned may have granted it
			}
			if u := fw.unknown[first.Owner]; u != nil {
				// The owner did ask, later, and never heard: that acquire may
				// have granted this very fence — but only after the write
				// was accepted. A fence belongs to its holder from its grant
				// on, so this is a violation here too (and of linearizable),
				// told as what it is.
				a := u.at[0].op
				out = append(out, newFound(SingleWriterPerFence, key, fmt.Sprintf(
					"%s's write %q under fence %d was accepted (line %d) before any acquire could have granted fence %d to %s: its only candidate, %s's acquire at line %d, never answered and was called at %s, after the write returned at %s",
					first.Owner, first.Value, f, first.Line, f, first.Owner, a.Owner, a.Line, fw.tf.At(a.Call), fw.tf.At(first.Return)), first, a))
				continue
			}
			out = append(out, newFound(SingleWriterPerFence, key, fmt.Sprintf(
				"%s's write %q under fence %d was accepted (line %d), but no acquire granted fence %d to %s",
				first.Owner, first.Value, f, first.Line, f, first.Owner), first))
			continue
		}
		for i := range ws {
			if !slices.Contains(owners, ws[i].owner) {
				w, g := fw.op(&ws[i]), fw.op(&r.grant)
				out = append(out, newFound(SingleWriterPerFence, key, fmt.Sprintf(
					"fence %d was granted to %s (line %d), yet %s's write %q under it was accepted (line %d)",
					f, g.Owner, g.Line, w.Owner, w.Value, w.Line), g, w))
				break
			}
		}
	}
	return out
}

// fenceLessWriters is single-writer-per-fence for a history without fences
// (docs/design.md §8): every accepted write comes from the owner that held the
// lease at that point. Writes are accepted only from the holder, and only a
// grant makes an owner the holder, so the rule is:
//
// A write w by O accepted is a violation when no acquire by O (granted, or
// unanswered: it may have been) can be linearized before w, or when a grant
// g to another owner precedes w and every such acquire by O precedes g: then
// in every linearization g comes after O's last grant and before w, so the
// holder at w is not O. "Precedes" is real time or process order, which
// every linearization respects whatever the clocks read, so the rule holds
// under any clock uncertainty and any concurrency: it never fires on a
// history some linearization explains. (It misses one corner, and stays
// silent there: an acquire by O and a grant to another owner issued by one
// process at the same instant.)
//
// At w's call it notes the grant to another owner that precedes w and was
// called last; at w's return, the acquires by O that w does not precede
// (all called by then) and which of them returned last.
type fenceLessWriters struct {
	best    [2]*model.Op // grants returned so far, latest call first, distinct owners
	tails   map[string][]*model.Op
	owners  map[string]*ownerAcquires
	pending map[*kop]*model.Op // accepted writes in flight -> the grant noted at their call
	out     sortedFinds
}

// ownerAcquires are an owner's acquires (granted or unanswered) so far: the
// latest "end" (return, or Inf when unanswered) of those called before its
// latest call time, and those called at that time.
type ownerAcquires struct {
	older   int64
	hasOld  bool
	at      int64
	atCalls []*kop
}

func acqEnd(op *model.Op) int64 {
	if !op.Returned {
		return timed.Inf
	}
	return op.Return
}

func (fl *fenceLessWriters) call(k *kop) {
	op := k.op
	switch {
	case op.Kind == model.Acquire && (grantedAcquire(op) || !op.Returned):
		oa := fl.owners[op.Owner]
		if oa == nil {
			oa = &ownerAcquires{older: -timed.Inf}
			fl.owners[op.Owner] = oa
		}
		if len(oa.atCalls) > 0 && op.Call > oa.at {
			for _, a := range oa.atCalls {
				oa.older = max(oa.older, acqEnd(a.op))
			}
			oa.hasOld = true
			oa.atCalls = oa.atCalls[:0]
		}
		oa.at = op.Call
		oa.atCalls = append(oa.atCalls, k)
		if grantedAcquire(op) {
			if ts := fl.tails[op.Process]; len(ts) > 0 && ts[0].Return == op.Return {
				fl.tails[op.Process] = append(ts, op)
			} else {
				fl.tails[op.Process] = append(ts[:0], op)
			}
		}
	case acceptedWrite(op):
		var g *model.Op
		for _, b := range fl.best {
			if b != nil && b.Owner != op.Owner {
				g = b
				break
			}
		}
		for _, t := range fl.tails[op.Process] {
			if t.Return == op.Call && t.Owner != op.Owner && (g == nil || t.Call > g.Call) {
				g = t
			}
		}
		fl.pending[k] = g
	}
}

func (fl *fenceLessWriters) ret(key string, k *kop) {
	op := k.op
	if grantedAcquire(op) {
		// Keep the latest-called grant, and the latest-called one of
		// another owner than its.
		b := &fl.best
		switch {
		case b[0] == nil:
			b[0] = op
		case op.Owner == b[0].Owner:
			if op.Call > b[0].Call {
				b[0] = op
			}
		case op.Call > b[0].Call:
			b[0], b[1] = op, b[0]
		case b[1] == nil || op.Call > b[1].Call:
			b[1] = op
		}
		return
	}
	g, ok := fl.pending[k]
	if !ok {
		return
	}
	delete(fl.pending, k)
	latest, any := int64(-timed.Inf), false
	if oa := fl.owners[op.Owner]; oa != nil {
		latest, any = oa.older, oa.hasOld
		for _, a := range oa.atCalls {
			if a.op.Call == op.Return && a.op.Process == op.Process && a.pos > k.pos {
				continue // op precedes it
			}
			latest, any = max(latest, acqEnd(a.op)), true
		}
	}
	switch {
	case !any:
		fl.out.add("", k.pos, newFound(SingleWriterPerFence, key, fmt.Sprintf(
			"%s's write %q was accepted (line %d), but %s did not acquire the lease before it",
			op.Owner, op.Value, op.Line, op.Owner), op))
	case g != nil && latest < g.Call:
		fl.out.add("", k.pos, newFound(SingleWriterPerFence, key, fmt.Sprintf(
			"%s's write %q was accepted (line %d), but the lease had been granted to %s (line %d) and %s did not acquire it again before the write",
			op.Owner, op.Value, op.Line, g.Owner, g.Line, op.Owner), g, op))
	}
}

// renewRule is stop-on-renew-failure: a renew by O fails when it returned
// ok=false or never returned; with f the fence it presented, or else the
// fence of O's latest successful acquire before it, any later write by O
// under f — later in the same process's order, or in another process of
// O's called after the renew returned — violates the rule, whatever its
// outcome, until O acquires again. One violation per failed renew: its
// first such write in file order.
//
// In a fence-less history (docs/design.md §8) no op names a fence, so the term is
// the owner's latest successful acquire before the renew: every later write
// by O counts, until O acquires again.
type renewRule struct {
	fenced bool
	// ordered: the writes present their holders' own tokens, not the
	// fence a renew names, so every write by O counts, as without fences.
	ordered bool
	owners  map[string]*renewOwner
	out     sortedFinds
}

type renewOwner struct {
	sameProc map[string]int64 // process -> highest fence granted to O in it so far
	returned int64            // highest fence granted to O whose grant has returned
	stops    []*stopRecord
}

type stopRecord struct {
	r        *kop
	fence    int64
	returned bool // r's return has passed: other processes' later writes count
	cleared  map[string]bool
	all      bool // an acquire after r has returned: later writes are covered
	viol     *kop // the first violating write in file order
}

func (rr *renewRule) owner(o string) *renewOwner {
	ro := rr.owners[o]
	if ro == nil {
		ro = &renewOwner{sameProc: map[string]int64{}}
		rr.owners[o] = ro
	}
	return ro
}

// after reports whether a (an acquire or a write by r's owner, at its call
// event) comes after the failed renew r for the rule: later in r's process,
// or called after r returned.
func (sr *stopRecord) after(a *kop) bool {
	if a.op.Process == sr.r.op.Process {
		return a.pos > sr.r.pos
	}
	return sr.r.op.Returned && a.op.Call > sr.r.op.Return
}

func (rr *renewRule) call(key string, k *kop) {
	op := k.op
	switch {
	case op.Kind == model.Renew && !(op.Returned && op.OK):
		ro := rr.owner(op.Owner)
		f := op.Fence
		if f == 0 {
			f = max(ro.sameProc[op.Process], ro.returned)
		}
		if f != 0 {
			ro.stops = append(ro.stops, &stopRecord{r: k, fence: f})
		}
	case grantedAcquire(op):
		ro := rr.owner(op.Owner)
		ro.sameProc[op.Process] = max(ro.sameProc[op.Process], rr.term(op))
		for _, sr := range ro.stops {
			if sr.after(k) {
				if sr.cleared == nil {
					sr.cleared = map[string]bool{}
				}
				sr.cleared[op.Process] = true
			}
		}
	case op.Kind == model.Write:
		ro := rr.owners[op.Owner]
		if ro == nil {
			return
		}
		for _, sr := range ro.stops {
			if rr.fenced && !rr.ordered && sr.fence != op.Fence || sr.all || sr.cleared[op.Process] {
				continue
			}
			// Another process of the owner's is bound once the failure
			// returned — unless the renewal was the library's own (a
			// background renewer): its writer learns of the failure only
			// through the library's loss signal (loss-signal judges when it
			// came), and a write checked before the failure and sent after
			// it is the race fencing exists for (stale-write judges its
			// effect), not a writer ignoring what it was told.
			if (op.Process == sr.r.op.Process && k.pos > sr.r.pos || op.Process != sr.r.op.Process && sr.returned && !sr.r.op.BackgroundRenewal()) &&
				(sr.viol == nil || k.pos < sr.viol.pos) {
				sr.viol = k
			}
		}
	}
}

func (rr *renewRule) ret(k *kop) {
	op := k.op
	ro := rr.owners[op.Owner]
	if ro == nil {
		return
	}
	switch {
	case op.Kind == model.Renew && !op.OK:
		for _, sr := range ro.stops {
			if sr.r == k {
				sr.returned = true
			}
		}
	case grantedAcquire(op):
		ro.returned = max(ro.returned, rr.term(op))
		kept := ro.stops[:0]
		for _, sr := range ro.stops {
			if sr.after(k) {
				sr.all = true
				rr.done(sr)
				continue
			}
			kept = append(kept, sr)
		}
		clear(ro.stops[len(kept):])
		ro.stops = kept
	}
}

// done files a stop record's violation, if it found one.
func (rr *renewRule) done(sr *stopRecord) {
	if sr.viol == nil {
		return
	}
	r, w := sr.r.op, sr.viol.op
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
	if !rr.fenced || rr.ordered {
		rr.out.add(r.Owner, sr.r.pos, newFound(StopOnRenewFailure, r.Key, fmt.Sprintf(
			"%s's renew %s (line %d), yet %s wrote %q afterwards (line %d) without acquiring again. %s: a failed renewal must stop all writing.",
			r.Owner, how, r.Line, w.Owner, w.Value, w.Line, outcome), r, w))
		return
	}
	rr.out.add(r.Owner, sr.r.pos, newFound(StopOnRenewFailure, r.Key, fmt.Sprintf(
		"%s's renew of fence %d %s (line %d), yet %s wrote %q under fence %d afterwards (line %d) without acquiring again. %s: a failed renewal must stop all writing.",
		r.Owner, sr.fence, how, r.Line, w.Owner, w.Value, sr.fence, w.Line, outcome), r, w))
}

// term names the term a grant starts: its fence, or in a fence-less
// history just "a grant" (1), as no fence tells terms apart.
func (rr *renewRule) term(op *model.Op) int64 {
	if rr.fenced {
		return op.Fence
	}
	return 1
}

// finishStops files what the stop records still open found.
func (rr *renewRule) finish() {
	owners := make([]string, 0, len(rr.owners))
	for o := range rr.owners {
		owners = append(owners, o)
	}
	sort.Strings(owners)
	for _, o := range owners {
		for _, sr := range rr.owners[o].stops {
			rr.done(sr)
		}
		rr.owners[o].stops = nil
	}
}
