package model

import (
	"fmt"
	"strconv"
)

// The rules of format v1 (docs/specification.md §4) that concern values rather than
// JSON types. The reader applies them to every line as it decodes it, and
// Validate applies them to a history built in memory, so a Go caller's
// malformed history is refused with the same message a file's line would
// get. Each rule returns the reason the op breaks it, or "".

// ruleTime: a time lies within [-MaxTime, MaxTime], so that the checker's
// arithmetic on it (t - u, t + u, t + ttl) is exact.
func ruleTime(name string, t int64) string {
	if t < -MaxTime || t > MaxTime {
		return fmt.Sprintf("field %q: %d is outside the times leasecheck can reason about exactly, [-%d, %d] (2^62 - 1)", name, t, MaxTime, MaxTime)
	}
	return ""
}

// ruleUncertainty: the header's clock uncertainty is a time >= 0.
func ruleUncertainty(u int64) string {
	if u < 0 {
		return fmt.Sprintf("header field \"clock_uncertainty\": must be >= 0, got %d", u)
	}
	if u > MaxTime {
		return fmt.Sprintf("header field \"clock_uncertainty\": %d is above the largest time leasecheck can reason about exactly, %d (2^62 - 1)", u, MaxTime)
	}
	return ""
}

// ruleLateness: the header's expiry lateness is a time >= 0.
func ruleLateness(l int64) string {
	if l < 0 {
		return fmt.Sprintf("header field \"expiry_lateness\": must be >= 0, got %d", l)
	}
	if l > MaxTime {
		return fmt.Sprintf("header field \"expiry_lateness\": %d is above the largest time leasecheck can reason about exactly, %d (2^62 - 1)", l, MaxTime)
	}
	return ""
}

// ruleHeaderRules: the header's choices fit together. A fenced resource
// judges writes by their fences, so it cannot go without them; a holder's
// own tokens are ordered by such a resource, and which holder came later by
// the coordinator's grant numbers, so they need both.
func ruleHeaderRules(h Header) string {
	if h.Fences == NoFences && h.Semantics == FencedStorage {
		return `header: "fences":"none" cannot go with "semantics":"fenced-storage": a fenced resource judges writes by their fences`
	}
	if h.Tokens == OrderedTokens && h.Semantics != FencedStorage {
		return `header: "tokens":"ordered" needs "semantics":"fenced-storage": only a resource apart from the coordinator orders a holder's own tokens (under seed semantics the coordinator accepts its current fence only)`
	}
	if h.Tokens == OrderedTokens && h.Fences == NoFences {
		return `header: "tokens":"ordered" cannot go with "fences":"none": which holder is later is judged by the coordinator's grant numbers`
	}
	return ""
}

// ruleReturn: an op cannot return before it was called.
func ruleReturn(op *Op) string {
	if !op.Returned {
		return ""
	}
	if reason := ruleTime("return", op.Return); reason != "" {
		return reason
	}
	if op.Return < op.Call {
		return fmt.Sprintf("field \"return\": %d is before call %d", op.Return, op.Call)
	}
	return ""
}

// ruleTTL: acquire and renew carry a positive ttl. present says whether the
// field was given (in memory: whether it is non-zero).
func ruleTTL(op *Op, present bool) string {
	if op.Kind != Acquire && op.Kind != Renew {
		return ""
	}
	if !present {
		return fmt.Sprintf("field \"ttl\" is required for %s", op.Kind)
	}
	if op.TTL <= 0 {
		return fmt.Sprintf("field \"ttl\": must be > 0, got %d", op.TTL)
	}
	if op.TTL > MaxTime {
		return fmt.Sprintf("field \"ttl\": %d is above the largest time leasecheck can reason about exactly, %d (2^62 - 1)", op.TTL, MaxTime)
	}
	return ""
}

// ruleFence: a fence is >= 1; a write presents one, an acquire that
// succeeded names the one it was granted, and an acquire that never
// returned names none. In a fence-less history (header "fences":"none") no
// op carries one.
func ruleFence(op *Op, present bool, order FenceOrder) string {
	if order == NoFences {
		if present {
			return `field "fence": the header declares "fences":"none", so no operation may carry a fence`
		}
		return ""
	}
	if present && op.Fence < 1 {
		return fmt.Sprintf("field \"fence\": must be >= 1, got %d", op.Fence)
	}
	if present && op.Fence > MaxFence {
		return fmt.Sprintf("field \"fence\": %d is above the largest fence leasecheck can count past, %d (2^62)", op.Fence, MaxFence)
	}
	if present && op.Kind == Acquire && !op.Returned {
		// The fence an acquire names is the one its answer granted; one
		// that never answered told nobody a fence. Reading it as "granted
		// this fence if it took effect" would be a second meaning every
		// reader and checker must share, for a record no client can write
		// honestly: refuse it.
		return `field "fence": an acquire that never returned (no "return") cannot name a fence: the fence is what its answer would have said`
	}
	if !present {
		switch {
		case op.Kind == Write:
			return `field "fence" is required for write`
		case op.Kind == Acquire && op.Returned && op.OK:
			return `field "fence" is required for an acquire that succeeded (ok true): the token it was granted`
		}
	}
	return ""
}

// ruleValue: a write says what it wrote.
func ruleValue(op *Op, present bool) string {
	if op.Kind == Write && !present {
		return `field "value" is required for write`
	}
	return ""
}

// ruleAt: the coordinator applied the op between its call and its return,
// within the clock uncertainty u.
func ruleAt(op *Op, u int64) string {
	if !op.HasAt {
		return ""
	}
	if reason := ruleTime("at", op.At); reason != "" {
		return reason
	}
	lo := satSub(op.Call, u)
	if op.Returned {
		hi := satAdd(op.Return, u)
		if op.At < lo || op.At > hi {
			return fmt.Sprintf("field \"at\": %d is outside [call - u, return + u] = [%d, %d] (call %d, return %d, clock_uncertainty u = %d)",
				op.At, lo, hi, op.Call, op.Return, u)
		}
	} else if op.At < lo {
		return fmt.Sprintf("field \"at\": %d is before call - u = %d (call %d, clock_uncertainty u = %d; the op never returned, so there is no upper bound)",
			op.At, lo, op.Call, u)
	}
	return ""
}

// validateHeader checks a header built in memory. A zero Version and an
// empty TimeUnit mean the defaults, as for the Writer.
func validateHeader(h Header) string {
	if h.Version != 0 && h.Version != 1 {
		return fmt.Sprintf("unsupported history version %d (this leasecheck reads version 1)", h.Version)
	}
	switch h.TimeUnit {
	case "", "ns", "us", "ms", "s":
	default:
		return fmt.Sprintf("header field \"time_unit\": want one of ns, us, ms, s, got %s", quoteShort(h.TimeUnit))
	}
	if reason := ruleUncertainty(h.ClockUncertainty); reason != "" {
		return reason
	}
	if reason := ruleLateness(h.ExpiryLateness); reason != "" {
		return reason
	}
	if h.Semantics != Seed && h.Semantics != FencedStorage {
		return fmt.Sprintf("header field \"semantics\": want \"seed\" or \"fenced-storage\", got %s", h.Semantics)
	}
	if h.Fences > NoFences {
		return fmt.Sprintf("header field \"fences\": want \"sequential\", \"increasing\" or \"none\", got %s", h.Fences)
	}
	return ruleHeaderRules(h)
}

// ruleFault checks a fault record's values: it names what struck and what
// it hit, and ends no earlier than it started. An unknown kind is allowed:
// the records are informative and never change a verdict.
func ruleFault(f *FaultRecord) string {
	if f.Kind == "" {
		return `field "fault": must not be empty (the fault's kind: pause, clock-step, partition, ...)`
	}
	if f.Target == "" {
		return `field "target": must not be empty (what the fault hit: a process, "coordinator", ...)`
	}
	if reason := ruleTime("start", f.Start); reason != "" {
		return reason
	}
	if f.HasEnd {
		if reason := ruleTime("end", f.End); reason != "" {
			return reason
		}
		if f.End < f.Start {
			return fmt.Sprintf("field \"end\": %d is before start %d", f.End, f.Start)
		}
	}
	return ""
}

// Validate checks a history built in memory against every rule of format
// v1 that the reader enforces, with the same messages. It returns nil or a
// *ParseError: Line is the offending op's Line when it has one (0 for the
// header, or for an op not read from a file, whose position in h.Ops the
// reason then names).
//
// In memory an optional field is absent when it is zero (Fence 0: no
// fence), as the Writer omits it; so Validate(h) reports what reading
// WriteHistory(h) back would report, at the same line when the ops' Lines
// are those the Writer gives them.
func Validate(h *History) error {
	fail := func(line int, reason string) error {
		return &ParseError{Name: h.Name, Line: line, Reason: reason}
	}
	if reason := validateHeader(h.Header); reason != "" {
		line := 0
		if len(h.Ops) > 0 && h.Ops[0].Line > 0 {
			line = 1 // where the Writer puts it
		}
		return fail(line, reason)
	}
	for i := range h.Faults {
		f := &h.Faults[i]
		if reason := ruleFault(f); reason != "" {
			if f.Line == 0 {
				reason = "fault record " + strconv.Itoa(i+1) + " (History.Faults[" + strconv.Itoa(i) + "]): " + reason
			}
			return fail(f.Line, reason)
		}
	}
	order := newOrderChecker()
	for i := range h.Ops {
		op := &h.Ops[i]
		reason := validateOp(h.Header, op)
		if reason == "" {
			reason = order.check(op)
		}
		if reason != "" {
			if op.Line == 0 {
				reason = "operation " + strconv.Itoa(i+1) + " (History.Ops[" + strconv.Itoa(i) + "]): " + reason
			}
			return fail(op.Line, reason)
		}
	}
	return nil
}

// validateOp applies the per-op rules in the reader's order.
func validateOp(hdr Header, op *Op) string {
	if op.Process == "" {
		return `field "process": must not be empty`
	}
	if op.Kind < Acquire || op.Kind > Read {
		return fmt.Sprintf("field \"op\": unknown operation %s (want acquire, renew, release, write or read)", op.Kind)
	}
	for _, rule := range [...]func() string{
		func() string { return ruleTime("call", op.Call) },
		func() string { return ruleReturn(op) },
		func() string { return ruleTTL(op, true) }, // the Writer always writes it
		func() string { return ruleFence(op, op.Fence != 0, hdr.Fences) },
		func() string { return ruleValue(op, true) }, // the Writer always writes a write's value
		func() string { return ruleAt(op, hdr.ClockUncertainty) },
	} {
		if reason := rule(); reason != "" {
			return reason
		}
	}
	return ""
}
