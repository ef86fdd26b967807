package timed

import (
	"fmt"
	"hash/maphash"
	"slices"
	"sort"

	"github.com/anishathalye/porcupine"
	"github.com/leasecheck/leasecheck/model"
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
	rules := RulesOf(c.History.Header)
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
			return c.DescribeState(c.History.Header.Semantics, state.(State))
		},
	}
}

// PorcupineOperations converts the ops for which keep returns true (all when
// keep is nil). An op that never returned gets a return time after every
// other event, as porcupine expects. ClientId numbers processes in order of
// first appearance.
//
// Times are renumbered so that porcupine, which orders a call before a
// return at equal times, also sees each process's own order where its next
// call came at the very time of its last return (docs/specification.md §2: a process is
// sequential, so that return precedes that call). Every distinct time t
// becomes a block of positions: calls at t that follow no return of their
// process at t come first, returns at t that no call of their process at t
// follows come last, and each process's run of events at t that holds such
// a tie sits in between, in its own order. This is exact unless two
// processes of one key both have such a run at one instant (TieConflict):
// then porcupine also orders one's returns before the other's calls.
func PorcupineOperations(c *Compiled, keep func(op int) bool) []porcupine.Operation {
	h := c.History
	pos := tiePositions(h)
	times := []int64{}
	for i := range h.Ops {
		times = append(times, h.Ops[i].Call)
		if h.Ops[i].Returned {
			times = append(times, h.Ops[i].Return)
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	block := int64(pos.width)
	at := func(t int64, p int) int64 {
		r, _ := slices.BinarySearch(times, t)
		return int64(r)*block + int64(p)
	}
	end := int64(len(times)) * block
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
				ret = at(op.Return, pos.ret[i])
			}
			out = append(out, porcupine.Operation{
				ClientId: clients[op.Process],
				Input:    &PorcupineInput{Key: ko.Key, Op: i, Input: ko.Inputs[j]},
				Call:     at(op.Call, pos.call[i]),
				Return:   ret,
			})
		}
	}
	return out
}

// tieLayout places each op's call and return inside its time's block.
type tieLayout struct {
	call, ret []int // by op index
	width     int   // positions per block
	// conflict: two processes of one key have a run with a tie at one
	// instant.
	conflict bool
}

// tiePositions lays out the events at each instant (see PorcupineOperations).
func tiePositions(h *model.History) tieLayout {
	n := len(h.Ops)
	l := tieLayout{call: make([]int, n), ret: make([]int, n)}
	type event struct {
		op     int
		isCall bool
		t      int64
	}
	byProc := map[string][]event{}
	var procs []string
	for i := range h.Ops {
		op := &h.Ops[i]
		if _, ok := byProc[op.Process]; !ok {
			procs = append(procs, op.Process)
		}
		byProc[op.Process] = append(byProc[op.Process], event{i, true, op.Call})
		if op.Returned {
			byProc[op.Process] = append(byProc[op.Process], event{i, false, op.Return})
		}
	}
	const last = 1 << 30 // for now: "after every run"
	for i := range h.Ops {
		l.ret[i] = last
	}
	type instant struct {
		key string
		t   int64
	}
	runsAt := map[instant]string{} // a process with a tie run there
	maxRun := 0
	for _, p := range procs {
		evs := byProc[p]
		for a := 0; a < len(evs); {
			b := a
			for b < len(evs) && evs[b].t == evs[a].t {
				b++
			}
			run := evs[a:b]
			tie := false
			for k := 1; k < len(run); k++ {
				if run[k].isCall && !run[k-1].isCall {
					tie = true
				}
			}
			if tie {
				for k, e := range run {
					if e.isCall {
						l.call[e.op] = k + 1
					} else {
						l.ret[e.op] = k + 1
					}
				}
				maxRun = max(maxRun, len(run))
				for _, e := range run {
					at := instant{h.Ops[e.op].Key, e.t}
					if other, ok := runsAt[at]; ok && other != p {
						l.conflict = true
					}
					runsAt[at] = p
				}
			}
			a = b
		}
	}
	l.width = maxRun + 2
	for i := range h.Ops {
		if l.ret[i] == last {
			l.ret[i] = maxRun + 1
		}
	}
	return l
}

// TieConflict reports whether porcupine cannot be given h's process order
// at ties exactly (see PorcupineOperations).
func TieConflict(h *model.History) bool { return tiePositions(h).conflict }

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

func describeState(c *Names, sem model.Semantics, s State) string {
	holder := "nobody"
	if s.Holder != NoOwner {
		holder = c.Owners[s.Holder]
	}
	data := "nothing"
	if s.Data != NoValue {
		data = fmt.Sprintf("%q", s.Data.Value())
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
	if sem == model.FencedStorage {
		out += fmt.Sprintf(" resource-fence=%d", s.Highest)
	}
	return out + " data=" + data
}
