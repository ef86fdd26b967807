package checker

import (
	"fmt"
	"math/rand/v2"

	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// workload builds large, realistic exact-mode histories for benchmarks:
// holders cycle through acquire, a few writes, renewals and a release on
// each key, against the reference coordinator, with a seeded PRNG. Lost
// responses become unknown-outcome ops; some of them took effect.
type workload struct {
	ops, keys, holders int
	// lostRenews and lostWrites are how many renew and write responses are
	// lost (spread evenly over the history).
	lostRenews, lostWrites int
	// unfenced: renews and releases present no fence, so a lost one may
	// take effect at any later time (the hard case for the search).
	unfenced bool
	// latency > 0 spreads each op's call and return up to that far around
	// the moment it applies, so ops of different holders overlap.
	latency int64
	// interval drops `at`: the checker must find the order itself.
	interval bool
	seed     uint64
}

func (w workload) history() *model.History {
	h := &model.History{Name: "workload", Header: model.DefaultHeader()}
	w.generate(func(op *model.Op) { h.Ops = append(h.Ops, *op) })
	return h
}

// generate emits the ops one by one, in call order, each with its Line,
// so that a history too long to hold can be written as it is made.
func (w workload) generate(emit func(*model.Op)) {
	rng := rand.New(rand.NewPCG(w.seed, 7))
	store := memstore.New()
	line := 1
	type holder struct {
		name  string
		fence int64
		free  int64
		lost  bool // a renew failed: stop writing, acquire again (the iron rule)
	}
	type keyState struct{ holders []*holder }
	keys := make([]keyState, w.keys)
	for k := range keys {
		for i := range w.holders {
			keys[k].holders = append(keys[k].holders, &holder{name: fmt.Sprintf("h%d", i)})
		}
	}
	lostEvery := func(n int) int {
		if n == 0 {
			return 0
		}
		return max(1, w.ops/n)
	}
	renewEvery, writeEvery := lostEvery(w.lostRenews), lostEvery(w.lostWrites)
	renews, writes := 0, 0
	var now int64
	for i := 0; i < w.ops; i++ {
		now += int64(rng.IntN(3))
		k := rng.IntN(w.keys)
		key := fmt.Sprintf("key%d", k)
		hd := keys[k].holders[rng.IntN(w.holders)]
		if hd.free > now {
			now = hd.free
		}
		op := model.Op{Process: hd.name + "/" + key, Owner: hd.name, Key: key, Call: now, Return: now + 1, Returned: true, At: now, HasAt: !w.interval}
		if w.latency > 0 {
			op.Call = max(hd.free, now-rng.Int64N(w.latency))
			op.Return = now + 1 + rng.Int64N(w.latency)
		}
		lost := false
		switch owner, _, held := store.Holder(key); {
		case !held || owner != hd.name || hd.lost:
			op.Kind, op.TTL = model.Acquire, 20
			op.Fence, op.OK = store.Acquire(key, hd.name, op.TTL, now)
			if op.OK {
				hd.fence, hd.lost = op.Fence, false
			}
		case rng.IntN(10) == 0:
			op.Kind, op.Fence = model.Release, w.fence(hd.fence)
			op.OK = store.Release(key, hd.name, op.Fence)
		case rng.IntN(3) == 0:
			op.Kind, op.TTL, op.Fence = model.Renew, 20, w.fence(hd.fence)
			renews++
			lost = renewEvery > 0 && renews%renewEvery == 0 && w.lostRenews > 0
			op.OK = store.Renew(key, hd.name, op.TTL, op.Fence, now)
			hd.lost = lost || !op.OK
		case rng.IntN(4) == 0:
			op.Kind, op.OK = model.Read, true
			op.Value, op.HasValue = store.Read(key)
		default:
			op.Kind, op.Fence, op.Value, op.HasValue = model.Write, hd.fence, fmt.Sprintf("%s:%d", hd.name, i), true
			writes++
			lost = writeEvery > 0 && writes%writeEvery == 0 && w.lostWrites > 0
			op.OK = store.Write(key, hd.name, hd.fence, op.Value, now) == nil
		}
		if lost {
			op.Returned, op.Return, op.OK = false, 0, false
			hd.free = op.Call
		} else {
			hd.free = op.Return
		}
		line++
		op.Line = line
		emit(&op)
	}
}

func (w workload) fence(f int64) int64 {
	if w.unfenced {
		return 0
	}
	return f
}

// loseResponses drops the responses of k renews and writes spread over the
// history from op 100 on (one every 90 ops), as a client that times out
// records them: they took effect, but nobody knows when (the coordinator's
// clock reading came back with the response that was lost).
func loseResponses(h *model.History, k int) {
	n := 0
	for i := 100; i < len(h.Ops) && n < k; i += 90 {
		for j := i; j < len(h.Ops); j++ {
			if op := &h.Ops[j]; op.Kind == model.Renew || op.Kind == model.Write {
				op.Returned, op.Return, op.OK, op.HasAt = false, 0, false, false
				n++
				break
			}
		}
	}
}

// breakAt corrupts the history near op i in a way no order can explain: a
// read returns a value that was never written.
func breakAt(h *model.History, i int) {
	for ; i < len(h.Ops); i++ {
		if op := &h.Ops[i]; op.Kind == model.Read && op.Returned {
			op.Value, op.HasValue = "never written", true
			return
		}
	}
	panic("no read to corrupt")
}
