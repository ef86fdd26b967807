package checker

import (
	"fmt"
	"math/rand/v2"

	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// timeoutWorkload builds the timeout shapes' histories: one key, several
// holders with different TTLs against the reference coordinator, and a
// fraction of their renews and writes timed out — each a distinct op (its
// own owner, TTL and call time; renews present no fence), some applied by
// the coordinator before the answer was lost, some never. bad flips one
// write by a holder that did not hold the lease, late in the history, to
// accepted. The history is written to w op by op (nil: kept in memory and
// returned), so that a long one need not be held.
type timeoutWorkload struct {
	ops, procs int
	lost       float64 // fraction of renews and writes that time out
	interval   bool    // no at: the checker finds the order itself
	bad        bool
	seed       uint64
}

func (tw timeoutWorkload) history() *model.History {
	h := &model.History{Name: tw.name(), Header: model.DefaultHeader()}
	tw.generate(func(op *model.Op) { h.Ops = append(h.Ops, *op) })
	return h
}

func (tw timeoutWorkload) name() string {
	mode := "exact"
	if tw.interval {
		mode = "interval"
	}
	what := "correct"
	if tw.bad {
		what = "bad-write"
	}
	return fmt.Sprintf("%s/%d-ops/%g%%-lost/%s", mode, tw.ops, 100*tw.lost, what)
}

// generate emits the ops, each with its Line, in the order their calls
// were made (which is time order).
func (tw timeoutWorkload) generate(emit func(*model.Op)) {
	rng := rand.New(rand.NewPCG(tw.seed, 12))
	store := memstore.New()
	const key = "k"
	type holder struct {
		name  string
		ttl   int64
		fence int64
		free  int64
		lost  bool // a renew failed: acquire again before writing (the iron rule)
	}
	hs := make([]*holder, tw.procs)
	for i := range hs {
		hs[i] = &holder{name: fmt.Sprintf("h%d", i), ttl: int64(12 + 3*i)}
	}
	badAt := -1
	if tw.bad {
		badAt = tw.ops * 9 / 10
	}
	var now int64
	line := 1
	for i := 0; i < tw.ops; i++ {
		now += 1 + int64(rng.IntN(2))
		hd := hs[rng.IntN(len(hs))]
		if hd.free > now {
			now = hd.free
		}
		op := model.Op{Process: hd.name, Owner: hd.name, Key: key, Call: now, Return: now + 1, Returned: true, At: now, HasAt: !tw.interval}
		if tw.interval {
			op.Call = max(hd.free, now-int64(rng.IntN(3)))
			op.Return = now + 1 + int64(rng.IntN(3))
		}
		lost, applied := rng.Float64() < tw.lost, true
		if lost {
			applied = rng.IntN(2) == 0
		}
		owner, _, held := store.Holder(key)
		late := false
		switch {
		case i == badAt:
			// A write by a holder that does not hold the lease, accepted.
			for _, o := range hs {
				if o.name != owner || !held {
					hd = o
					break
				}
			}
			op.Process, op.Owner = hd.name+"-late", hd.name
			op.Kind, op.Fence, op.Value, op.HasValue = model.Write, max(hd.fence, 1), fmt.Sprintf("bad:%d", i), true
			op.OK, lost, late = true, false, true
		case !held || owner != hd.name || hd.lost:
			op.Kind, op.TTL = model.Acquire, hd.ttl
			op.Fence, op.OK = store.Acquire(key, hd.name, op.TTL, now)
			if op.OK {
				hd.fence, hd.lost = op.Fence, false
			}
			lost = false // acquires always answer here: the shape
		case rng.IntN(10) == 0:
			op.Kind = model.Release
			op.OK = store.Release(key, hd.name, 0)
			lost = false
		case rng.IntN(3) == 0:
			op.Kind, op.TTL = model.Renew, hd.ttl
			if applied {
				op.OK = store.Renew(key, hd.name, op.TTL, 0, now)
			}
			hd.lost = lost || !op.OK
		case rng.IntN(4) == 0:
			op.Kind, op.OK = model.Read, true
			op.Value, op.HasValue = store.Read(key)
			lost = false
		default:
			op.Kind, op.Fence, op.Value, op.HasValue = model.Write, hd.fence, fmt.Sprintf("%s:%d", hd.name, i), true
			if applied {
				op.OK = store.Write(key, hd.name, hd.fence, op.Value, now) == nil
			}
		}
		switch {
		case late:
			// Its own process ("-late"), with this one op: the holder's
			// own process stays free from where its last op left it (the
			// op's times were drawn from another holder's).
		case lost:
			op.Returned, op.Return, op.OK = false, 0, false
			if !applied || tw.interval {
				op.At, op.HasAt = 0, false
			}
			hd.free = op.Call
		default:
			hd.free = op.Return
		}
		line++
		op.Line = line
		emit(&op)
	}
}
