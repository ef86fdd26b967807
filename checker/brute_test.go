package checker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// A brute-force reference checker, written from docs/specification.md §1–3 alone and
// sharing no code with the checker or internal/timed: it tries every order
// of a key's operations that respects real time and process order, every
// subset of the unanswered operations, and every clock value each one may
// have read (an integer in [call - u, return + u], never decreasing along
// the order), and applies the lease semantics of reference/lease.py to
// exact integers. It is exponential, so only for histories of a few ops.
//
// Its invariant checks are the pairwise definitions of docs/specification.md §2.

// bruteLinearizable reports whether every key of h is linearizable.
func bruteLinearizable(h *model.History) bool {
	byKey := map[string][]int{}
	var keys []string
	for i := range h.Ops {
		k := h.Ops[i].Key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !bruteCheckKey(h, byKey[k]) {
			return false
		}
	}
	return true
}

type bruteState struct {
	holder  string // "" is nobody (owners in tests are never "")
	expiry  int64
	fence   int64 // the coordinator's counter
	data    string
	hasData bool
	highest int64 // fenced storage: highest fence the resource accepted
}

type bruteKey struct {
	placed uint64
	s      bruteState
	clock  int64
}

type bruteSearch struct {
	h     *model.History
	ops   []*model.Op
	idx   []int // index in h.Ops
	must  []bool
	lo    []int64
	hi    []int64
	pred  [][]int // ops that must come before (as indices into ops)
	memo  map[bruteKey]bool
	maxT  int64
	maxF  int64
	nodes int
}

func bruteCheckKey(h *model.History, idx []int) bool {
	u := h.Header.ClockUncertainty
	b := &bruteSearch{h: h, idx: idx, memo: map[bruteKey]bool{}}
	for _, i := range idx {
		op := &h.Ops[i]
		b.ops = append(b.ops, op)
		b.maxT = max(b.maxT, op.Call, op.Return, op.At)
		b.maxF = max(b.maxF, op.Fence)
	}
	maxTTL := int64(0)
	for _, op := range b.ops {
		maxTTL = max(maxTTL, op.TTL)
	}
	// Past this clock value every lease in the history has expired, so
	// later readings are all alike.
	b.maxT += maxTTL + u + 2
	if h.Header.ExpiryLateness < timed.Inf {
		// (Unbounded lateness: a lease is answered live at any reading
		// after its grant, so readings past the last expiry are alike too.)
		b.maxT += h.Header.ExpiryLateness
	}
	for _, op := range b.ops {
		lo, hi := op.Call-u, op.Return+u
		switch {
		case op.HasAt:
			lo, hi = op.At, op.At
		case !op.Returned:
			hi = b.maxT
		}
		b.lo, b.hi = append(b.lo, lo), append(b.hi, hi)
		// An op the coordinator applied (answered, or carrying at) must be
		// placed; a read that failed or never answered observes nothing and
		// is left out; an op that never answered and has no at may or may
		// not have taken effect.
		must := op.Returned || op.HasAt
		if op.Kind == model.Read && (!op.Returned || !op.OK) {
			must = false
		}
		b.must = append(b.must, must)
	}
	for j, op := range b.ops {
		var pred []int
		for i, a := range b.ops {
			// An op that never returned precedes nothing; one that is never
			// placed (a failed read) constrains nothing that the ops around
			// it do not already: precedence through it is transitive.
			if i == j || !a.Returned || !b.must[i] {
				continue
			}
			if a.Return < op.Call || a.Process == op.Process && b.idx[i] < b.idx[j] {
				pred = append(pred, i)
			}
		}
		b.pred = append(b.pred, pred)
	}
	return b.dfs(0, bruteState{}, -1<<62, make([]bool, len(b.ops)))
}

// dfs places the remaining ops. placed marks those placed or skipped.
func (b *bruteSearch) dfs(depth int, s bruteState, clock int64, placed []bool) bool {
	b.nodes++
	done := true
	for j := range b.ops {
		if !placed[j] && b.must[j] {
			done = false
		}
	}
	if done {
		return true
	}
	key := bruteKey{s: s, clock: clock}
	for j, p := range placed {
		if p {
			key.placed |= 1 << j
		}
	}
	if v, ok := b.memo[key]; ok {
		return v
	}
	ok := false
	for j, op := range b.ops {
		if placed[j] || ok {
			continue
		}
		if !b.ready(j, placed) {
			continue
		}
		// A read that failed or never answered observed nothing.
		if !b.must[j] && op.Kind == model.Read {
			continue
		}
		placed[j] = true
		for c := max(clock, b.lo[j]); c <= b.hi[j] && !ok; c++ {
			for _, ns := range b.apply(s, op, c) {
				if b.dfs(depth+1, ns, c, placed) {
					ok = true
					break
				}
			}
		}
		placed[j] = false
	}
	// An optional op that never takes effect is one never placed: the
	// search ends as soon as every op that must be placed is.
	b.memo[key] = ok
	return ok
}

func (b *bruteSearch) ready(j int, placed []bool) bool {
	for _, p := range b.pred[j] {
		if !placed[p] {
			return false
		}
	}
	return true
}

// apply returns the states op can lead to from s at clock reading now, given
// its recorded outcome; an op that never answered took effect with the
// outcome the state gives.
func (b *bruteSearch) apply(s bruteState, op *model.Op, now int64) []bruteState {
	if !op.Returned {
		// It took effect (the search placed it): with whatever outcome the
		// state gives. Its failure changes nothing.
		var out []bruteState
		for _, ok := range []bool{true, false} {
			out = append(out, b.step(s, op, now, ok, true)...)
		}
		return out
	}
	return b.step(s, op, now, op.OK, false)
}

// step applies op with outcome ok; unanswered: the op never answered, so an
// acquire's fence is whatever it would have been.
func (b *bruteSearch) step(s bruteState, op *model.Op, now int64, ok, unanswered bool) []bruteState {
	hdr := b.h.Header
	// The coordinator may answer that a lease is live (refuse an acquire,
	// accept its holder's renew or write) up to expiry_lateness after its
	// expiry (live); it may answer that it expired (grant it, refuse its
	// holder) from its expiry on (expired).
	live := s.holder != "" && (hdr.ExpiryLateness >= timed.Inf || now-hdr.ExpiryLateness < s.expiry)
	expired := s.holder == "" || now >= s.expiry
	// allowed: the outcome ok is possible when success needs the lease live
	// and the rest (holder, fence) is can.
	allowed := func(can bool) bool {
		if ok {
			return can && live
		}
		return !can || expired
	}
	fenceMatches := func(f int64) bool {
		return hdr.Fences == model.NoFences || f == 0 || f == s.fence
	}
	switch op.Kind {
	case model.Acquire:
		can := s.holder == "" || now >= s.expiry
		if !ok {
			if !live {
				return nil
			}
			return []bruteState{s}
		}
		if !can {
			return nil
		}
		n := s
		n.holder, n.expiry = op.Owner, now+op.TTL
		switch {
		case hdr.Fences == model.NoFences:
			return []bruteState{n}
		case hdr.Fences == model.Sequential:
			n.fence = s.fence + 1
			if !unanswered && op.Fence != n.fence {
				return nil
			}
			return []bruteState{n}
		default: // increasing: any larger fence
			if !unanswered {
				if op.Fence <= s.fence {
					return nil
				}
				n.fence = op.Fence
				return []bruteState{n}
			}
			var out []bruteState
			for f := s.fence + 1; f <= max(b.maxF, s.fence)+1; f++ {
				n.fence = f
				out = append(out, n)
			}
			return out
		}
	case model.Renew:
		if !allowed(s.holder == op.Owner && fenceMatches(op.Fence)) {
			return nil
		}
		if ok {
			s.expiry = now + op.TTL
		}
		return []bruteState{s}
	case model.Release:
		can := s.holder == op.Owner && fenceMatches(op.Fence)
		if ok != can {
			return nil
		}
		if ok {
			s.holder = ""
		}
		return []bruteState{s}
	case model.Write:
		var can bool
		if hdr.Semantics == model.FencedStorage {
			can = op.Fence >= 1 && op.Fence <= s.fence && op.Fence >= s.highest
		} else {
			can = s.holder == op.Owner && fenceMatches(op.Fence) && (hdr.Fences == model.NoFences || op.Fence == s.fence)
			if !allowed(can) {
				return nil
			}
			can = ok
		}
		if ok != can {
			return nil
		}
		if ok {
			s.data, s.hasData = op.Value, true
			if hdr.Semantics == model.FencedStorage {
				s.highest = op.Fence
			}
		}
		return []bruteState{s}
	case model.Read:
		if !ok {
			return []bruteState{s}
		}
		if op.HasValue != s.hasData || op.HasValue && op.Value != s.data {
			return nil
		}
		return []bruteState{s}
	}
	return nil
}

// brutePrecedes is docs/specification.md §2's "a precedes b": a returned before b was
// called, or a comes before b in one process's order (a answered).
func brutePrecedes(h *model.History, i, j int) bool {
	a, b := &h.Ops[i], &h.Ops[j]
	if !a.Returned || i == j {
		return false
	}
	return a.Return < b.Call || a.Process == b.Process && i < j
}

// bruteFenceMonotonic is fence-monotonic by its pairwise definition.
func bruteFenceMonotonic(h *model.History) bool {
	if h.Header.Fences == model.NoFences {
		return true
	}
	for i := range h.Ops {
		for j := range h.Ops {
			a, b := &h.Ops[i], &h.Ops[j]
			if a.Key != b.Key || !brutePrecedes(h, i, j) || !b.Returned || !a.OK || !b.OK || a.Kind != b.Kind {
				continue
			}
			if a.Kind == model.Acquire && a.Fence >= b.Fence || a.Kind == model.Write && b.Fence < a.Fence {
				return false
			}
		}
	}
	return true
}

// describeBrute names a history's ops for a failure message.
func describeBrute(h *model.History) string {
	var b strings.Builder
	fmt.Fprintf(&b, "semantics=%s fences=%s u=%d late=%d\n", h.Header.Semantics, h.Header.Fences, h.Header.ClockUncertainty, h.Header.ExpiryLateness)
	for i := range h.Ops {
		fmt.Fprintf(&b, "  %d %s key=%q process=%s\n", h.Ops[i].Line, h.Ops[i].Describe(), h.Ops[i].Key, h.Ops[i].Process)
	}
	return b.String()
}
