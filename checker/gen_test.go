package checker

import (
	"fmt"

	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
	"pgregory.net/rapid"
)

// genOptions shape a generated history.
type genOptions struct {
	semantics model.Semantics
	// uncertainty is the header's clock_uncertainty; the coordinator's clock
	// stays within it of true time.
	uncertainty int64
	exact       bool // record `at`
	strict      bool // apply times strictly increase: the order is unique
	unknown     bool // some ops never return
	keys        int
	maxOps      int // 0: 40
	// ironRule makes every client follow it: after a renew fails or goes
	// unanswered, no write under that fence until a new grant. Each process
	// then has its own owner, since the rule binds an owner's processes.
	ironRule bool
	// increasing renumbers the fences with random gaps (an etcd revision,
	// a PostgreSQL sequence) and declares "fences":"increasing".
	increasing bool
	// noFences records no fence at all and declares "fences":"none": a
	// lock service whose writes check the holder and the expiry only.
	noFences bool
}

// genHistory draws a history that a correct lease service could produce:
// random processes send random operations to the reference coordinator
// (internal/impl/memstore, itself checked against reference/lease.py) and, under
// fenced storage, the reference resource. Each op applies at a true time
// inside its call/return window; the coordinator reads a monotonic clock
// that is off true time by at most the uncertainty. Some ops lose their
// response, and some of those never reached the coordinator at all.
func genHistory(t *rapid.T, o genOptions) *model.History {
	store := memstore.New()
	res := memstore.NewResource()
	nproc := rapid.IntRange(1, 4).Draw(t, "processes")
	owners := []string{"A", "B", "C"}
	type proc struct {
		name, owner string
		free        int64
		fence       map[string]int64
		held        map[string][]int64 // every fence granted, per key
		stopped     map[string]bool    // a renew failed: acquire before writing
	}
	procs := make([]*proc, nproc)
	for i := range procs {
		owner := rapid.SampledFrom(owners).Draw(t, "owner")
		if o.ironRule {
			owner = fmt.Sprintf("O%d", i)
		}
		procs[i] = &proc{name: fmt.Sprintf("p%d", i), owner: owner, fence: map[string]int64{}, held: map[string][]int64{}, stopped: map[string]bool{}}
	}
	h := &model.History{Name: "generated", Header: model.DefaultHeader()}
	h.Header.Semantics = o.semantics
	h.Header.ClockUncertainty = o.uncertainty
	if o.maxOps == 0 {
		o.maxOps = 40
	}
	nops := rapid.IntRange(1, o.maxOps).Draw(t, "ops")
	var now, clock int64 // true time; the coordinator's clock
	values := 0
	for range nops {
		if o.strict {
			now += rapid.Int64Range(1, 3).Draw(t, "step")
		} else {
			now += rapid.Int64Range(0, 3).Draw(t, "step")
		}
		// The coordinator's clock: monotonic, within the uncertainty.
		lo, hi := max(clock, now-o.uncertainty), now+o.uncertainty
		if o.strict {
			lo = max(clock+1, now-o.uncertainty)
		}
		if lo > hi {
			lo = hi
		}
		clock = rapid.Int64Range(lo, hi).Draw(t, "clock")
		var free []*proc
		for _, p := range procs {
			if p.free <= now {
				free = append(free, p)
			}
		}
		if len(free) == 0 {
			continue
		}
		p := rapid.SampledFrom(free).Draw(t, "process")
		key := fmt.Sprintf("k%d", rapid.IntRange(0, max(o.keys, 1)-1).Draw(t, "key"))
		op := model.Op{Process: p.name, Owner: p.owner, Key: key, Call: rapid.Int64Range(p.free, now).Draw(t, "call")}
		lost := o.unknown && rapid.IntRange(0, 9).Draw(t, "lost") == 0
		applied := !lost || rapid.Bool().Draw(t, "applied anyway")
		kind := rapid.IntRange(0, 4).Draw(t, "kind")
		if kind == 3 && len(p.held[key]) == 0 {
			kind = 4 // a client writes only under a fence it was granted
		}
		if kind == 3 && p.stopped[key] {
			kind = 0 // the iron rule: acquire again before writing
		}
		switch kind {
		case 0:
			op.Kind, op.TTL = model.Acquire, rapid.Int64Range(1, 10).Draw(t, "ttl")
			if applied {
				op.Fence, op.OK = store.Acquire(key, p.owner, op.TTL, clock)
				if op.OK && !lost { // a client learns of a grant from its answer
					p.fence[key] = op.Fence
					p.held[key] = append(p.held[key], op.Fence)
					p.stopped[key] = false
				}
			}
		case 1:
			op.Kind, op.TTL = model.Renew, rapid.Int64Range(1, 10).Draw(t, "ttl")
			if rapid.Bool().Draw(t, "fenced renew") && !o.noFences {
				op.Fence = p.fence[key]
			}
			if applied {
				op.OK = store.Renew(key, p.owner, op.TTL, op.Fence, clock)
			}
			if o.ironRule && (lost || !op.OK) {
				// Older fences stay usable only if a later grant ended
				// their rule; simplest: forget them all.
				p.stopped[key] = true
				p.held[key] = nil
			}
		case 2:
			op.Kind = model.Release
			if rapid.Bool().Draw(t, "fenced release") && !o.noFences {
				op.Fence = p.fence[key]
			}
			if applied {
				op.OK = store.Release(key, p.owner, op.Fence)
			}
		case 3:
			values++
			op.Kind, op.Value, op.HasValue = model.Write, fmt.Sprintf("v%d", values), true
			op.Fence = rapid.SampledFrom(p.held[key]).Draw(t, "fence") // maybe stale
			if o.ironRule {
				// A client that follows the rule presents its latest
				// grant's fence: an older one of its own, accepted by a
				// fenced resource after a later holder's write, lets that
				// holder's deposed predecessor overwrite it (stale-write).
				op.Fence = p.fence[key]
			}
			if o.noFences {
				op.Fence = store.Fence(key) // no fence: the holder and the expiry decide
			}
			if applied {
				if o.semantics == model.FencedStorage {
					op.OK = op.Fence <= store.Fence(key) && res.Write(key, op.Fence, op.Value) == nil
				} else {
					op.OK = store.Write(key, p.owner, op.Fence, op.Value, clock) == nil
				}
			}
		case 4:
			op.Kind, op.OK = model.Read, true
			if o.semantics == model.FencedStorage {
				op.Value, op.HasValue = res.Read(key)
			} else {
				op.Value, op.HasValue = store.Read(key)
			}
			if !applied {
				op.Value, op.HasValue = "", false
			}
		}
		if !lost {
			op.Return, op.Returned = now+rapid.Int64Range(0, 3).Draw(t, "latency"), true
			p.free = op.Return
		} else {
			p.free = op.Call
			op.OK = false
			if op.Kind == model.Acquire {
				op.Fence = 0
			}
		}
		if o.exact && applied {
			op.At, op.HasAt = clock, true
		}
		if op.Kind == model.Acquire && !op.OK {
			op.Fence = 0
		}
		op.Line = len(h.Ops) + 2 // after the header
		h.Ops = append(h.Ops, op)
	}
	if o.increasing {
		renumberFences(t, h)
	}
	if o.noFences {
		h.Header.Fences = model.NoFences
		for i := range h.Ops {
			h.Ops[i].Fence = 0
		}
	}
	return h
}

// renumberFences maps fence f to a strictly increasing sequence with gaps,
// the same map for every field that carries a fence.
func renumberFences(t *rapid.T, h *model.History) {
	h.Header.Fences = model.Increasing
	mapped := map[int64]int64{0: 0}
	var next int64
	fence := func(f int64) int64 {
		if g, ok := mapped[f]; ok {
			return g
		}
		return -1
	}
	maxFence := int64(0)
	for i := range h.Ops {
		maxFence = max(maxFence, h.Ops[i].Fence)
	}
	for f := int64(1); f <= maxFence; f++ {
		next += rapid.Int64Range(1, 4).Draw(t, "fence gap")
		mapped[f] = next
	}
	for i := range h.Ops {
		h.Ops[i].Fence = fence(h.Ops[i].Fence)
	}
}
