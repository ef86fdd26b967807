package checker

import (
	"cmp"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// The checker reads a key's history as a sequence of events in time order:
// each op's call, and each answered op's return. Everything that decides a
// property — the invariants and the sweeps of the linearizability check —
// is written against that sequence, so that a history held in memory and
// one streamed from a file too big to hold are judged by the same code.
//
// Order: by time; at equal times calls before returns (ops whose windows
// only touch are concurrent, docs/specification.md §2), and otherwise in file order.
// Process order at a tie, which that rule alone would lose, is carried by
// kop.pred.

// role is what the linearizability check does with an op.
type role uint8

const (
	// placed: an answered op (a read only when it answered), or one that
	// never answered but carries at: the coordinator applied it, so it
	// must be placed, with whichever outcome the state gives.
	rolePlaced role = iota
	// optional: an op that never answered and carries no at: it may have
	// taken effect, once, at any time after its call, or never.
	roleOptional
	// dropped: it constrains nothing — a read that failed or never
	// answered, or an unanswered write nobody could have observed.
	roleDropped
)

// kop is one of a key's operations as the checker sees it.
type kop struct {
	op   *model.Op
	hidx int // its index in History.Ops, in memory (-1 when streaming)
	pos  int // position among the key's ops, in file order (process order)
	in   timed.Input
	role role
	// due: by when it must have been placed: its return; for an unanswered
	// op with at, at + u (it was applied at true time <= at + u, so every
	// op called later comes after it); Inf otherwise.
	due int64
	// pred is its process predecessor at a tie (tiePredecessors), or nil.
	pred *kop
	// The sweeps' bookkeeping.
	slot    int  // its pending slot while called and not yet due; -1
	retired bool // due and placed in every configuration
}

// evKind orders the events at one time.
type evKind uint8

const (
	evCall evKind = iota
	evReturn
	// evDue: the op must have been placed by now, though it never answered
	// (an unanswered op with at, at at + u). Only the sweeps see it.
	evDue
)

type event struct {
	t    int64
	kind evKind
	k    *kop
}

func compareEvents(a, b event) int {
	if c := cmp.Compare(a.t, b.t); c != 0 {
		return c
	}
	ak, bk := a.kind, b.kind
	if ak == evDue {
		ak = evReturn
	}
	if bk == evDue {
		bk = evReturn
	}
	if c := cmp.Compare(ak, bk); c != 0 {
		return c
	}
	return cmp.Compare(a.k.pos, b.k.pos)
}

// eventsOf appends an op's events.
func eventsOf(k *kop, out []event) []event {
	out = append(out, event{t: k.op.Call, kind: evCall, k: k})
	switch {
	case k.op.Returned:
		out = append(out, event{t: k.op.Return, kind: evReturn, k: k})
	case k.role == rolePlaced && k.due < timed.Inf:
		out = append(out, event{t: k.due, kind: evDue, k: k})
	}
	return out
}

// keyFacts is what is known about a key as a whole before its events are
// read: in memory, from the ops themselves; when streaming, from the first
// pass over the file.
type keyFacts struct {
	// read reports whether some answered read of the key returned the
	// value (it may say true of a value nobody read; never false of one
	// somebody did).
	read func(value string) bool
	// minRejected is the lowest fence of a rejected completed write
	// (timed.Inf: none).
	minRejected int64
	// unique reports whether exactly one write of the key writes the value
	// (it may say false of such a value; never true of one written twice).
	// nil: not known.
	unique func(value string) bool
	// maxFence is the largest fence an op of the key presents (timed.Inf:
	// not known).
	maxFence int64
}

// preparer turns a key's ops, in file order, into kops.
type preparer struct {
	hdr   model.Header
	names *timed.Names
	facts keyFacts
	n     int
	last  map[string]*kop // process -> its last answered op that is placed
}

func newPreparer(hdr model.Header, names *timed.Names, facts keyFacts) *preparer {
	return &preparer{hdr: hdr, names: names, facts: facts, last: map[string]*kop{}}
}

// prepare makes the next op's kop in *k; in is the op compiled (nil: it is
// compiled here).
func (p *preparer) prepare(op *model.Op, in *timed.Input, k *kop) {
	u := p.hdr.ClockUncertainty
	*k = kop{op: op, hidx: -1, pos: p.n, slot: -1, due: timed.Inf}
	if in != nil {
		k.in = *in
	} else {
		k.in = p.names.Input(op, u)
	}
	p.n++
	in = &k.in
	switch {
	case mustPlace(*in):
		k.role = rolePlaced
		if op.Returned {
			k.due = op.Return
		} else {
			k.due = in.Hi + u // at + u
		}
	case in.Kind == model.Read:
		k.role = roleDropped
	case in.Kind == model.Write && !p.facts.read(op.Value) &&
		(p.hdr.Semantics == model.Seed || in.Fence <= p.facts.minRejected):
		// An unknown write whose value nobody read has no observable effect
		// under seed semantics (it changes only the data). Under fenced
		// storage it also raises the resource's highest fence, so it is
		// dropped only if no rejected write might be explained by it.
		k.role = roleDropped
	default:
		k.role = roleOptional
	}
	if prev, ok := p.last[op.Process]; ok && prev.op.Return == op.Call {
		k.pred = prev
	}
	if op.Returned && k.role == rolePlaced {
		p.last[op.Process] = k
	}
}

// factsOf computes a key's facts from its ops in memory.
func factsOf(h *model.History, idx []int) keyFacts {
	read := map[string]bool{}
	writes := map[string]int{}
	minRejected := timed.Inf
	maxFence := int64(0)
	for _, i := range idx {
		op := &h.Ops[i]
		maxFence = max(maxFence, op.Fence)
		switch {
		case op.Kind == model.Read && op.Returned && op.OK && op.HasValue:
			read[op.Value] = true
		case op.Kind == model.Write:
			writes[op.Value]++
			if op.Returned && !op.OK {
				minRejected = min(minRejected, op.Fence)
			}
		}
	}
	return keyFacts{read: func(v string) bool { return read[v] }, minRejected: minRejected,
		unique: func(v string) bool { return writes[v] == 1 }, maxFence: maxFence}
}

// pinsAhead returns, for each of a key's events in order, the lowest fence
// presented by a successful acquire whose call comes later (timed.Inf:
// none): fenceFacts.pinAhead as the sweep reaches each event.
func pinsAhead(events []event) []int64 {
	out := make([]int64, len(events))
	low := timed.Inf
	for i := len(events) - 1; i >= 0; i-- {
		out[i] = low
		if e := events[i]; pinsEvent(e) {
			low = min(low, e.k.in.Fence)
		}
	}
	return out
}
