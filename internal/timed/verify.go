package timed

import (
	"fmt"
	"sort"

	"github.com/leasecheck/leasecheck/model"
)

// Placement is one step of a proposed linearization of a key: an op (its
// index in History.Ops) and, for an op that never returned and carries no
// `at`, that it took effect there.
type Placement struct {
	Op      int
	Applied bool
}

// maxVerifyStates bounds the states one placement may leave: past it the
// verifier gives up (an error, never an acceptance).
const maxVerifyStates = 1 << 12

// VerifyLinearization reports whether order is a linearization of one
// key's operations (ko, of history h) under the timed model: nil when it
// is, else why not. It is the judge of a witness that a search proposes
// (package checker's fast path), written apart from every search:
//
//   - every op that must be placed is placed exactly once: each answered
//     op (a read only when it answered ok) and each unanswered op that
//     carries `at`; an unanswered op without `at` at most once, and only
//     as Applied;
//   - the order respects real time (an op that returned before another
//     was called comes first) and each process's order (its answered ops
//     in file order, and no op of the process before an answered op that
//     precedes it in the file);
//   - replayed through Step, StepApplied and StepAnyOutcome from the
//     initial state, some state survives every placement.
//
// An applied op reads the coordinator's clock no later than any op placed
// after it reads it (the clock never goes back), so its window ends at the
// smallest window end after it — stricter than the model's open-ended
// window, never looser, so an order accepted here is accepted by the model
// as porcupine replays it too.
func VerifyLinearization(h *model.History, ko *KeyOps, order []Placement) error {
	rules := RulesOf(h.Header)
	pos := func(op int) int {
		i := sort.SearchInts(ko.Index, op)
		if i < len(ko.Index) && ko.Index[i] == op {
			return i
		}
		return -1
	}
	must := func(i int) bool {
		in := &ko.Inputs[i]
		if in.Kind == model.Read {
			return !in.Unknown && in.OK
		}
		return !in.Unknown || in.Hi < Inf
	}
	// The ops, by position in the key, and what each process must have
	// placed before it goes on.
	at := make([]int, len(order)) // position in ko of each step
	seen := make([]bool, len(ko.Index))
	for j, p := range order {
		i := pos(p.Op)
		if i < 0 {
			return fmt.Errorf("step %d: op %d is not an op of key %q", j, p.Op, ko.Key)
		}
		if seen[i] {
			return fmt.Errorf("step %d: line %d is placed twice", j, h.Ops[p.Op].Line)
		}
		seen[i] = true
		in := &ko.Inputs[i]
		if p.Applied != (in.Unknown && in.Hi == Inf) {
			return fmt.Errorf("step %d: line %d is marked applied %v, but it %s", j, h.Ops[p.Op].Line, p.Applied, map[bool]string{true: "never returned and carries no at", false: "returned or carries at"}[in.Unknown && in.Hi == Inf])
		}
		at[j] = i
	}
	for i := range ko.Index {
		if must(i) && !seen[i] {
			return fmt.Errorf("line %d is never placed", h.Ops[ko.Index[i]].Line)
		}
	}
	// Each process's answered ops that must be placed, in file order.
	byProc := map[string][]int{}
	for i, idx := range ko.Index {
		op := &h.Ops[idx]
		if op.Returned && must(i) {
			byProc[op.Process] = append(byProc[op.Process], i)
		}
	}
	next := map[string]int{}
	maxCall, maxCallLine := int64(-Inf), 0
	for j := range order {
		i := at[j]
		op := &h.Ops[ko.Index[i]]
		if op.Returned && op.Return < maxCall {
			return fmt.Errorf("step %d: line %d returned (at %d) before line %d, placed earlier, was called", j, op.Line, op.Return, maxCallLine)
		}
		if op.Call > maxCall {
			maxCall, maxCallLine = op.Call, op.Line
		}
		list, n := byProc[op.Process], next[op.Process]
		switch {
		case n < len(list) && list[n] == i:
			next[op.Process]++
		case n < len(list) && list[n] < i:
			return fmt.Errorf("step %d: line %d comes before line %d of its process", j, op.Line, h.Ops[ko.Index[list[n]]].Line)
		}
	}
	// The model.
	hiAfter := make([]int64, len(order)+1)
	hiAfter[len(order)] = Inf
	for j := len(order) - 1; j >= 0; j-- {
		hiAfter[j] = min(hiAfter[j+1], ko.Inputs[at[j]].Hi)
	}
	states := []State{InitialState()}
	var succ []State
	for j, p := range order {
		in := ko.Inputs[at[j]]
		succ = succ[:0]
		for _, s := range states {
			switch {
			case p.Applied:
				in.Unknown, in.OK, in.Hi = false, true, min(in.Hi, hiAfter[j+1])
				succ = StepApplied(rules, s, &in, succ)
			case in.Unknown:
				succ = StepAnyOutcome(rules, s, &in, succ)
			default:
				succ = Step(rules, s, &in, succ)
			}
		}
		states = states[:0]
		for _, s := range succ {
			dup := false
			for _, o := range states {
				if o == s {
					dup = true
					break
				}
			}
			if !dup {
				states = append(states, s)
			}
		}
		if len(states) == 0 {
			return fmt.Errorf("step %d: no state explains line %d", j, h.Ops[p.Op].Line)
		}
		if len(states) > maxVerifyStates {
			return fmt.Errorf("step %d: more than %d states to follow", j, maxVerifyStates)
		}
	}
	return nil
}
