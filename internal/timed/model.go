package timed

import (
	"math"

	"github.com/leasecheck/leasecheck/model"
)

// Inf stands for "no bound" on a clock reading. Every time in a valid
// history lies within model.MaxTime (2^62 - 1) and so does the clock
// uncertainty u, so every window bound (call - u, return + u) is strictly
// between -Inf and Inf, and the arithmetic here is exact: a sum that would
// pass Inf (an expiry at + ttl) saturates at Inf, which compares with every
// real clock reading exactly as the true sum would.
const Inf int64 = math.MaxInt64

// Rules are what changes the model: the header's semantics and fence
// numbering, and whether unknown-outcome ops are judged in the relaxed
// model of the refutation (checker/search.go), where each may take effect
// any number of times.
type Rules struct {
	Semantics model.Semantics
	Fences    model.FenceOrder
	// Relaxed: an unknown acquire that takes effect grants some fence above
	// the current one without saying which (State.Loose), whatever the fence
	// numbering, and a grant on a loose counter keeps its bound: repeated
	// grants then reach finitely many states.
	Relaxed bool
	// Lateness is the header's expiry_lateness: how long after its expiry
	// the coordinator may still answer that a lease is live (refuse an
	// acquire, accept its holder's renew or write). A grant still needs the
	// expiry (mutual exclusion stays strict); only live (below) changes.
	// Inf: any time after expiry, the checker's second look at a history
	// (is lateness all that is wrong?).
	Lateness int64
	// Ordered: the writes present their holder's own tokens, which the
	// resource orders (model.OrderedTokens): under fenced storage it
	// accepts a write iff its token is at least the highest it accepted,
	// whether or not the coordinator granted that number.
	Ordered bool
}

// RulesOf returns the exact model's rules for a history's header.
func RulesOf(h model.Header) Rules {
	return Rules{Semantics: h.Semantics, Fences: h.Fences, Lateness: h.ExpiryLateness, Ordered: h.Tokens == model.OrderedTokens}
}

// NoOwner is the interned ID of "no holder".
const NoOwner int32 = -1

// Value is a value written or read, or none. It holds the string itself
// rather than an interned number, so that a long history's values need not
// all be held at once: a value nobody refers to any more is garbage. (Ops
// that carry one share its bytes, so comparing two is cheap.)
type Value struct {
	s   string
	set bool
}

// NoValue is "nothing written yet".
var NoValue Value

// ValueOf is the value s.
func ValueOf(s string) Value { return Value{s, true} }

// Value returns the string ("" for NoValue).
func (v Value) Value() string { return v.s }

// State is one key's lease state in the timed model (docs/specification.md §3).
//
// The coordinator's clock is not known exactly in interval mode, so the
// state keeps bounds instead of values: NowLo is a lower bound on the
// coordinator's clock at the last operation (it never decreases along a
// linearization), and the expiry is somewhere in [ExpLo, ExpHi]. In exact
// mode every window is a single point and the bounds collapse to the plain
// semantics of reference/lease.py.
//
// State is comparable, so it can key a map directly.
type State struct {
	Holder  int32 // interned owner, or NoOwner
	Data    Value // the data, or NoValue
	Fence   int64 // the coordinator's fence counter: grants so far
	Highest int64 // fenced storage: highest fence the resource accepted
	NowLo   int64
	ExpLo   int64
	ExpHi   int64
	// Loose: under increasing fences (or in the relaxed model), an unknown
	// acquire took effect with a fence nobody heard; Fence is then only a
	// lower bound, until an op that presents the fence pins it. In a
	// fence-less history (model.NoFences) Fence stays 0: nothing presents
	// one, so counting grants would only tell equal states apart.
	Loose bool
}

// InitialState is a key nobody has touched.
func InitialState() State {
	return State{Holder: NoOwner, Data: NoValue, NowLo: -Inf}
}

// Input is an operation compiled for the model: owners and values interned,
// and the window in which the coordinator's clock may have read `now`.
type Input struct {
	Kind  model.Kind
	Owner int32
	Value Value // write: the value written; read: the value returned (NoValue: nothing)
	TTL   int64
	Fence int64 // 0: not presented (renew, release) or unknown (an acquire that never returned)
	OK    bool
	// Unknown: the op never returned. It may have taken effect or not.
	Unknown bool
	// Lo and Hi bound the coordinator's clock when the op applied: [at, at]
	// in exact mode, [call-u, return+u] in interval mode (Hi = Inf when it
	// never returned).
	Lo, Hi int64
}

// Step appends to out every state the operation can lead to from s, given
// its recorded outcome, and returns out. None means the op cannot be
// explained from s. An unknown-outcome op yields s itself (it never took
// effect) plus whatever its success would yield. Failure of an unknown op
// has no effect, so it is the same as not applying it.
func Step(r Rules, s State, in *Input, out []State) []State {
	if in.Kind == model.Read && !in.OK || in.Kind == model.Read && in.Unknown {
		return append(out, s) // an unanswered or failed read observes nothing
	}
	if in.Unknown {
		out = append(out, s)
		ok := *in
		ok.OK = true
		return StepApplied(r, s, &ok, out)
	}
	return StepApplied(r, s, in, out)
}

// StepAnyOutcome is StepApplied for an op that was applied but whose
// outcome nobody heard (it never returned, yet carries `at`): it succeeded
// or failed, whichever the state allows. A completed op steps as recorded.
func StepAnyOutcome(r Rules, s State, in *Input, out []State) []State {
	if !in.Unknown {
		return StepApplied(r, s, in, out)
	}
	either := *in
	either.Unknown, either.OK = false, true
	out = StepApplied(r, s, &either, out)
	either.OK = false
	return StepApplied(r, s, &either, out)
}

// StepApplied is Step for an op whose outcome in.OK is known (for an
// unknown op the search passes OK=true: it took effect and succeeded).
func StepApplied(r Rules, s State, in *Input, out []State) []State {
	lo, hi := max(s.NowLo, in.Lo), in.Hi
	if lo > hi {
		return out // the coordinator's clock would have to go backwards
	}
	owns := s.Holder == in.Owner && s.Holder != NoOwner
	// Whether the presented fence can match the current one, and can differ.
	match, differ := in.Fence == 0 || in.Fence == s.Fence, in.Fence != 0 && in.Fence != s.Fence
	if s.Loose && in.Fence != 0 {
		match, differ = in.Fence >= s.Fence, true
	}
	matched := s // the state once the fence matched: a loose fence is pinned
	if s.Loose && in.Fence != 0 {
		matched.Fence, matched.Loose = in.Fence, false
	}
	switch in.Kind {
	case model.Acquire:
		if in.OK {
			next := s
			switch {
			case r.Fences == model.NoFences:
				// No fence is counted (State.Loose).
			case r.Fences == model.Sequential && !s.Loose && in.Fence != 0 && in.Fence != s.Fence+1:
				return out // fences are granted 1, 2, 3, ...
			case in.Fence != 0 && in.Fence <= s.Fence:
				return out // fences only grow (a loose counter is a lower bound)
			case in.Fence != 0:
				next.Fence, next.Loose = in.Fence, false
			case r.Relaxed && s.Loose:
				// Another unheard grant: the counter is still above the bound.
			default: // unknown: whatever it was granted
				next.Fence, next.Loose = s.Fence+1, r.Fences == model.Increasing || r.Relaxed
			}
			if s.Holder == NoOwner {
				return append(out, grant(next, in, lo, hi))
			}
			if e, ok := expired(next, lo, hi); ok {
				out = append(out, grant(e, in, e.NowLo, hi))
			}
			return out
		}
		if s.Holder == NoOwner {
			return out
		}
		if l, ok := live(s, lo, hi, r.Lateness); ok {
			out = append(out, l)
		}
		return out
	case model.Renew:
		if in.OK {
			if !owns || !match {
				return out
			}
			if l, ok := live(matched, lo, hi, r.Lateness); ok {
				// It succeeded, so it read the clock before the old expiry
				// (plus the lateness): now <= min(hi, ExpHi-1+Lateness).
				l.ExpLo, l.ExpHi = addTTL(l.NowLo, in.TTL), addTTL(min(hi, addTTL(s.ExpHi, r.Lateness)-1), in.TTL)
				out = append(out, l)
			}
			return out
		}
		return refused(s, matched, owns, match, differ, lo, hi, out)
	case model.Release:
		if in.OK {
			if !owns || !match {
				return out
			}
			matched.NowLo, matched.Holder = lo, NoOwner
			return append(out, matched)
		}
		if owns && !differ {
			return out
		}
		s.NowLo = lo
		return append(out, s)
	case model.Write:
		if r.Semantics == model.FencedStorage {
			fresh := in.Fence >= 1 && in.Fence >= s.Highest
			granted, notGranted := in.Fence <= s.Fence, in.Fence > s.Fence
			if s.Loose || r.Ordered {
				// Any fence above the bound may have been granted; a
				// holder's own token is not a grant at all.
				granted, notGranted = true, notGranted && !r.Ordered
			}
			if in.OK && !(fresh && granted) || !in.OK && fresh && !notGranted {
				return out
			}
			s.NowLo = lo
			if in.OK {
				s.Data, s.Highest = in.Value, in.Fence
			}
			return append(out, s)
		}
		if in.OK {
			if !owns || !match {
				return out
			}
			if l, ok := live(matched, lo, hi, r.Lateness); ok {
				l.Data = in.Value
				out = append(out, l)
			}
			return out
		}
		return refused(s, matched, owns, match, differ, lo, hi, out)
	case model.Read:
		if s.Data != in.Value {
			return out
		}
		s.NowLo = lo
		return append(out, s)
	}
	return out
}

// refused steps the failure of an op that succeeds only for the holder,
// under the current fence, before expiry (a renew; a write under seed
// semantics): another holder or another fence explains it, or expiry.
func refused(s, matched State, owns, match, differ bool, lo, hi int64, out []State) []State {
	if !owns || differ {
		s.NowLo = lo
		out = append(out, s)
	}
	if owns && match {
		if e, ok := expired(matched, lo, hi); ok {
			out = append(out, e)
		}
	}
	return out
}

// live refines s by "now < expiry + late" for some now in [lo, hi], if
// possible: the coordinator still answers that the lease is live up to
// late after its expiry (Rules.Lateness).
func live(s State, lo, hi, late int64) (State, bool) {
	if lo >= addTTL(s.ExpHi, late) {
		return s, false
	}
	s.ExpLo = max(s.ExpLo, subSat(lo+1, late))
	s.NowLo = lo
	return s, true
}

// expired refines s by "now >= expiry" for some now in [lo, hi], if possible.
func expired(s State, lo, hi int64) (State, bool) {
	if hi < s.ExpLo {
		return s, false
	}
	s.NowLo = max(lo, s.ExpLo)
	s.ExpHi = min(s.ExpHi, hi)
	return s, true
}

// grant makes in.Owner the holder (s already carries the new fence); now
// is in [nowLo, hi].
func grant(s State, in *Input, nowLo, hi int64) State {
	s.Holder = in.Owner
	s.NowLo = nowLo
	s.ExpLo, s.ExpHi = addTTL(nowLo, in.TTL), addTTL(hi, in.TTL)
	return s
}

// subSat is t - d, saturating at -Inf (d >= 0).
func subSat(t, d int64) int64 {
	if t <= -Inf+d {
		return -Inf
	}
	return t - d
}

// addTTL is t + ttl, saturating at Inf (ttl > 0).
func addTTL(t, ttl int64) int64 {
	if t >= Inf-ttl {
		return Inf
	}
	return t + ttl
}
