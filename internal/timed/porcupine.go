package timed

import (
	"github.com/leasecheck/leasecheck/model"

	"fmt"
	"hash/maphash"
	"sort"

	"github.com/anishathalye/porcupine"
)

// PorcupineInput is the Input of a porcupine.Operation built by
// PorcupineOperations: the compiled op and where it came from.
type PorcupineInput struct {
	Key   string
	Op    int // index in History.Ops
	Input Input
}

// PorcupineModel is the timed lease model (seed or fenced-storage, exact and
// interval time, unknown outcomes) as a porcupine model, partitioned by key.
//
// leasecheck's own search (package checker) decides linearizability faster
// on histories with unknown outcomes; this model is what the HTML report
// visualizes, and an independent oracle the checker is tested against.
func PorcupineModel(c *Compiled) porcupine.NondeterministicModel {
	rules := c.History.Header.Rules()
	seed := maphash.MakeSeed()
	return porcupine.NondeterministicModel{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[string][]porcupine.Operation{}
			var keys []string
			for _, op := range history {
				k := op.Input.(*PorcupineInput).Key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			sort.Strings(keys)
			out := make([][]porcupine.Operation, 0, len(keys))
			for _, k := range keys {
				out = append(out, byKey[k])
			}
			return out
		},
		Init: func() []any { return []any{InitialState()} },
		Step: func(state, input, _ any) []any {
			s := state.(State)
			in := &input.(*PorcupineInput).Input
			var buf [3]State
			next := Step(rules, s, in, buf[:0])
			out := make([]any, len(next))
			for i, n := range next {
				out[i] = n
			}
			return out
		},
		Equal: func(a, b any) bool { return a.(State) == b.(State) },
		Hash: func(state any) uint64 {
			return maphash.Comparable(seed, state.(State))
		},
		DescribeOperation: func(input, _ any) string {
			return c.History.Ops[input.(*PorcupineInput).Op].Describe()
		},
		DescribeState: func(state any) string {
			return DescribeState(c, state.(State))
		},
	}
}

// PorcupineOperations converts the ops for which keep returns true (all when
// keep is nil). An op that never returned gets a return time after every
// other event, as porcupine expects. ClientId numbers processes in order of
// first appearance.
func PorcupineOperations(c *Compiled, keep func(op int) bool) []porcupine.Operation {
	h := c.History
	end := int64(0)
	for i := range h.Ops {
		end = max(end, h.Ops[i].Call, h.Ops[i].Return)
	}
	end++
	clients := ProcessIDs(h)
	var out []porcupine.Operation
	for _, ko := range c.Keys {
		for j, i := range ko.Index {
			if keep != nil && !keep(i) {
				continue
			}
			op := &h.Ops[i]
			ret := end
			if op.Returned {
				ret = op.Return
			}
			out = append(out, porcupine.Operation{
				ClientId: clients[op.Process],
				Input:    &PorcupineInput{Key: ko.Key, Op: i, Input: ko.Inputs[j]},
				Call:     op.Call,
				Return:   ret,
			})
		}
	}
	return out
}

// ProcessIDs numbers the processes 0, 1, ... in order of first appearance:
// porcupine's ClientId.
func ProcessIDs(h *model.History) map[string]int {
	ids := map[string]int{}
	for i := range h.Ops {
		if _, ok := ids[h.Ops[i].Process]; !ok {
			ids[h.Ops[i].Process] = len(ids)
		}
	}
	return ids
}

// DescribeState renders a state in words, with names instead of IDs.
func DescribeState(c *Compiled, s State) string {
	holder := "nobody"
	if s.Holder != NoOwner {
		holder = c.Owners[s.Holder]
	}
	data := "nothing"
	if s.Data != NoValue {
		data = fmt.Sprintf("%q", c.Values[s.Data])
	}
	out := fmt.Sprintf("holder=%s fence=%d", holder, s.Fence)
	if s.Holder != NoOwner {
		if s.ExpLo == s.ExpHi {
			out += fmt.Sprintf(" expiry=%d", s.ExpLo)
		} else if s.ExpHi >= Inf {
			out += fmt.Sprintf(" expiry>=%d", s.ExpLo)
		} else {
			out += fmt.Sprintf(" expiry∈[%d,%d]", s.ExpLo, s.ExpHi)
		}
	}
	if c.History.Header.Semantics == model.FencedStorage {
		out += fmt.Sprintf(" resource-fence=%d", s.Highest)
	}
	return out + " data=" + data
}
