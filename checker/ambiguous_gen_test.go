package checker

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// ambiguousWorkload builds the class of history the simulator found in
// interval-memory-budget (testdata/hard): a clock uncertainty many TTLs
// wide, so that in interval mode whether a lease had expired is ambiguous
// at almost every op, and holders that keep retrying acquires whose answers
// are lost, so that many unheard grants may or may not have happened. Each
// holder acquires (retrying until a grant is heard), writes under its fence
// and renews, then releases or walks away; a reader reads now and then.
// Every op runs against the reference coordinator (internal/impl/memstore) and, under
// fenced storage, the reference resource, at a true time inside its window,
// and the coordinator's clock wanders within the uncertainty of true time
// (monotonic, as the clock-offset faults leave it). So the history is
// correct; plant changes one thing that no clock reading can explain.
//
// Each op records `at` (the coordinator's reading); interval() strips it.
type ambiguousWorkload struct {
	ops       int
	holders   int
	ttl       int64
	u         int64   // clock uncertainty
	lost      float64 // fraction of answers lost (half of those ops applied anyway)
	semantics model.Semantics
	plant     plantKind
	seed      uint64
}

// plantKind is a violation no clock reading explains, whatever the
// unanswered ops did.
type plantKind int

const (
	plantNone plantKind = iota
	// plantReadFromFuture: a read returns a value whose only write was
	// called after the read returned.
	plantReadFromFuture
	// plantFenceReused: a successful acquire returns a fence another
	// grant, heard before it was called, returned already.
	plantFenceReused
	// plantStaleWrite: a write under a fence older than one heard granted
	// before it was called is accepted (fenced storage: the resource saw
	// the newer fence written first).
	plantStaleWrite
	// plantReadNeverWritten: a read returns a value nobody wrote.
	plantReadNeverWritten
	plantKinds
)

func (p plantKind) String() string {
	return [...]string{"correct", "read-from-future", "fence-reused", "stale-write", "read-never-written"}[p]
}

func (aw ambiguousWorkload) name() string {
	return fmt.Sprintf("%s/%d-ops/ttl-%d/u-%d/%s/seed-%d", aw.semantics, aw.ops, aw.ttl, aw.u, aw.plant, aw.seed)
}

// history generates the history with `at` on every op the coordinator
// applied (exact mode). ok reports whether the plant found a place (a
// history too short for it has none; it is then correct).
func (aw ambiguousWorkload) history() (h *model.History, ok bool) {
	rng := rand.New(rand.NewPCG(aw.seed, 0x616d6269))
	store, res := memstore.New(), memstore.NewResource()
	const key = "k"
	h = &model.History{Name: aw.name(), Header: model.DefaultHeader()}
	h.Header.Semantics, h.Header.ClockUncertainty = aw.semantics, aw.u
	type proc struct {
		name, owner string
		restarts    int
		next        int64 // when it calls its next op
		fence       int64 // the grant it heard, while it works under it
		work        int   // ops left under that grant
		stopped     bool  // a renew failed or was lost: acquire again (the iron rule)
	}
	var procs []*proc
	for i := range aw.holders {
		name := fmt.Sprintf("h%d", i+1)
		procs = append(procs, &proc{name: name, owner: name, next: int64(rng.IntN(int(aw.ttl) + 1))})
	}
	reader := &proc{name: "r1", next: 0}
	procs = append(procs, reader)
	latency := max(aw.ttl/4, 1)
	var now, lastApply, clock, offset int64 = 0, 0, -1 << 62, 0
	values := 0
	for len(h.Ops) < aw.ops {
		// The process whose call comes first; ties by order.
		p := procs[0]
		for _, q := range procs[1:] {
			if q.next < p.next {
				p = q
			}
		}
		call := max(p.next, now)
		// The op applies at a true time no earlier than the last one
		// (the coordinator serializes), and answers after it.
		apply := max(call, lastApply) + rng.Int64N(latency+1)
		ret := apply + rng.Int64N(latency+1)
		now, lastApply = call, apply
		if rng.IntN(8) == 0 {
			offset = rng.Int64N(2*aw.u+1) - aw.u // a clock-offset fault
		}
		clock = max(clock, apply+offset) // monotonic, within u of true time
		op := model.Op{Process: p.name, Owner: p.owner, Key: key, Call: call, Return: ret, Returned: true}
		lost := rng.Float64() < aw.lost
		applied := !lost || rng.IntN(2) == 0
		switch {
		case p == reader:
			op.Kind, op.OK = model.Read, true
			if aw.semantics == model.FencedStorage {
				op.Value, op.HasValue = res.Read(key)
			} else {
				op.Value, op.HasValue = store.Read(key)
			}
			if !applied {
				op.Value, op.HasValue = "", false
			}
			p.next = ret + aw.ttl/2 + rng.Int64N(aw.ttl+1)
		case p.work == 0 || p.stopped:
			op.Kind, op.TTL = model.Acquire, aw.ttl
			if applied {
				op.Fence, op.OK = store.Acquire(key, p.owner, aw.ttl, clock)
			}
			if op.OK && !lost {
				p.fence, p.work, p.stopped = op.Fence, 1+rng.IntN(4), false
			}
			p.next = ret + rng.Int64N(aw.ttl/2+1)
		case p.work == 1 && rng.IntN(3) == 0:
			op.Kind, op.Fence = model.Release, p.fence
			if applied {
				op.OK = store.Release(key, p.owner, p.fence)
			}
			p.work = 0
			p.next = ret + aw.ttl + rng.Int64N(3*aw.ttl+1)
		case rng.IntN(3) == 0:
			op.Kind, op.TTL, op.Fence = model.Renew, aw.ttl, p.fence
			if applied {
				op.OK = store.Renew(key, p.owner, aw.ttl, p.fence, clock)
			}
			p.stopped = lost || !op.OK
			p.work--
			p.next = ret
		default:
			values++
			op.Kind, op.Fence, op.Value, op.HasValue = model.Write, p.fence, fmt.Sprintf("%s:w%d", p.owner, values), true
			if applied {
				if aw.semantics == model.FencedStorage {
					op.OK = op.Fence <= store.Fence(key) && res.Write(key, op.Fence, op.Value) == nil
				} else {
					op.OK = store.Write(key, p.owner, op.Fence, op.Value, clock) == nil
				}
			}
			p.work--
			p.next = ret
		}
		if applied {
			op.At, op.HasAt = clock, true
		}
		if lost {
			// Its answer never came: the process gives up after a timeout
			// and goes on (sometimes as a new incarnation, like the
			// simulator's restarted holders).
			op.Returned, op.Return, op.OK = false, 0, false
			if op.Kind == model.Acquire || op.Kind == model.Read {
				op.Fence, op.Value, op.HasValue = 0, "", false
			}
			p.next = call + 2*latency + 1
			if p != reader && rng.IntN(4) == 0 {
				p.restarts++
				p.name = fmt.Sprintf("%s#%d", p.owner, p.restarts+1)
			}
		}
		if op.Kind == model.Acquire && !op.OK {
			op.Fence = 0
		}
		op.Line = len(h.Ops) + 2
		h.Ops = append(h.Ops, op)
	}
	if aw.plant == plantNone {
		return h, true
	}
	return h, aw.plantIn(h, rng)
}

// plantIn changes h by aw.plant, late in the history (where most is
// ambiguous), and reports whether it found a place.
func (aw ambiguousWorkload) plantIn(h *model.History, rng *rand.Rand) bool {
	ops := h.Ops
	// Candidates, latest first from about two thirds in.
	from := len(ops) * 2 / 3
	var idx []int
	for i := len(ops) - 1; i >= from; i-- {
		idx = append(idx, i)
	}
	for i := from - 1; i >= 0; i-- {
		idx = append(idx, i)
	}
	granted := func(i int) bool {
		return ops[i].Kind == model.Acquire && ops[i].Returned && ops[i].OK && ops[i].Fence > 0
	}
	bad := model.Op{Process: "planted", Owner: "planted", Key: "k", Returned: true, OK: true}
	switch aw.plant {
	case plantReadFromFuture:
		// A read that returned before the write of the value it returns was
		// called.
		for _, i := range idx {
			w := &ops[i]
			if w.Kind != model.Write || !w.Returned || !w.OK || w.Call < 2 {
				continue
			}
			bad.Kind, bad.Value, bad.HasValue = model.Read, w.Value, true
			bad.Call, bad.Return = w.Call-2, w.Call-1
			return insertOp(h, bad)
		}
	case plantFenceReused:
		// A grant of a fence heard granted before it was called.
		for _, i := range idx {
			if !granted(i) {
				continue
			}
			g := &ops[i]
			bad.Kind, bad.TTL, bad.Fence = model.Acquire, aw.ttl, g.Fence
			bad.Call = g.Return + 1 + rng.Int64N(aw.ttl+1)
			bad.Return = bad.Call + 1
			return insertOp(h, bad)
		}
	case plantStaleWrite:
		// An accepted write under a fence older than one heard granted —
		// and, under fenced storage, already written — before it was called.
		for _, i := range idx {
			if !granted(i) || ops[i].Fence < 2 {
				continue
			}
			g := &ops[i]
			after := g.Return
			if aw.semantics == model.FencedStorage {
				// The resource must have seen the newer fence: a completed
				// accepted write under it.
				found := false
				for j := i + 1; j < len(ops); j++ {
					if w := &ops[j]; w.Kind == model.Write && w.Returned && w.OK && w.Fence == g.Fence {
						after, found = w.Return, true
						break
					}
				}
				if !found {
					continue
				}
			}
			bad.Kind, bad.Fence, bad.Value, bad.HasValue = model.Write, g.Fence-1, "planted:stale", true
			bad.Call, bad.Return = after+1, after+2
			return insertOp(h, bad)
		}
	case plantReadNeverWritten:
		at := ops[idx[0]].Call
		bad.Kind, bad.Value, bad.HasValue = model.Read, "planted:never-written", true
		bad.Call, bad.Return = at, at+1
		return insertOp(h, bad)
	}
	return false
}

// insertOp adds op at its place in call order and renumbers the lines.
func insertOp(h *model.History, op model.Op) bool {
	i, _ := slices.BinarySearchFunc(h.Ops, op.Call, func(o model.Op, t int64) int {
		if o.Call <= t {
			return -1
		}
		return 1
	})
	h.Ops = slices.Insert(h.Ops, i, op)
	for j := range h.Ops {
		h.Ops[j].Line = j + 2
	}
	return true
}

// interval returns h without `at`: the checker knows the coordinator's
// clock only within u of each op's window.
func interval(h *model.History) *model.History {
	out := *h
	out.Ops = slices.Clone(h.Ops)
	for i := range out.Ops {
		out.Ops[i].At, out.Ops[i].HasAt = 0, false
	}
	return &out
}
