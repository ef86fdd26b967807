package classgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/model"
)

// Params are the axes of the class (docs/design.md §10). The zero value of each field
// but Ops, Keys and Procs means the plain case: no unanswered ops, exact
// mode, no clock uncertainty, seed semantics, fenced, retrying holders.
type Params struct {
	Ops   int // operations (1k to 10^6 in the matrix)
	Keys  int // independent leases (1 to 100)
	Procs int // processes, each its own owner (2 to 16)
	// Unanswered is the fraction of ops whose answer is lost (0 to 0.2);
	// half of those took effect at the coordinator anyway.
	Unanswered float64
	// Interval drops `at`: the checker must find every op's clock reading
	// within [call-u, return+u] itself.
	Interval bool
	// TTL is every grant's and renewal's TTL (0: 100).
	TTL int64
	// Uncertainty is the header's clock_uncertainty: the coordinator's clock
	// wanders, monotonic, within it of true time (0 to 10×TTL).
	Uncertainty int64
	// NoRetry makes a holder whose acquire went unanswered walk away for a
	// while instead of asking again at once.
	NoRetry   bool
	Semantics model.Semantics
	// FenceLess: the service grants no token; the header declares
	// "fences":"none" and no op carries one. A fenced resource needs
	// tokens, so a fence-less history is always of seed semantics.
	FenceLess bool
	Plant     Plant
	Seed      uint64
}

// Plant is one deliberate violation, of the property it is named after.
type Plant int

const (
	Correct Plant = iota
	// PlantLinearizable flips one accepted write, whose value a later read
	// returned, to refused: no order explains the read.
	PlantLinearizable
	// PlantSingleWriter adds an accepted write, by an owner that never
	// acquired, under the fence of a write accepted beside it.
	PlantSingleWriter
	// PlantFenceMonotonic adds an accepted write under an older fence after
	// one under a newer fence was accepted.
	PlantFenceMonotonic
	// PlantStopOnRenew adds an unanswered renew between two writes of one
	// holder under one fence: the second breaks the iron rule.
	PlantStopOnRenew
	plants
)

// Plants lists every plant, Correct first.
func Plants() []Plant {
	out := make([]Plant, 0, plants)
	for p := Correct; p < plants; p++ {
		out = append(out, p)
	}
	return out
}

// Property is the stable name of the property a plant breaks ("" for
// Correct); the checker must report it violated.
func (p Plant) Property() string {
	return [...]string{"", "linearizable", "single-writer-per-fence", "fence-monotonic", "stop-on-renew-failure"}[p]
}

func (p Plant) String() string {
	if p == Correct {
		return "correct"
	}
	return "bad-" + p.Property()
}

// ParsePlant maps a plant's String back to it.
func ParsePlant(s string) (Plant, bool) {
	for _, p := range Plants() {
		if p.String() == s {
			return p, true
		}
	}
	return 0, false
}

// Name describes the parameters in one line, the way the matrix prints a
// cell.
func (p Params) Name() string {
	p = p.normal()
	mode := "exact"
	if p.Interval {
		mode = "interval"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%dk/%dkeys/%dp/%g%%-unans", mode, p.Ops/1000, p.Keys, p.Procs, 100*p.Unanswered)
	if p.Uncertainty > 0 {
		fmt.Fprintf(&b, "/u%gttl", float64(p.Uncertainty)/float64(p.ttl()))
	}
	if p.NoRetry {
		b.WriteString("/noretry")
	}
	if p.Semantics == model.FencedStorage {
		b.WriteString("/fenced-storage")
	}
	if p.FenceLess {
		b.WriteString("/fence-less")
	}
	fmt.Fprintf(&b, "/%s/s%d", p.Plant, p.Seed)
	return b.String()
}

// normal is p with what cannot go together settled.
func (p Params) normal() Params {
	if p.FenceLess {
		p.Semantics = model.Seed
	}
	return p
}

func (p Params) ttl() int64 {
	if p.TTL <= 0 {
		return 100
	}
	return p.TTL
}

// proc is one client process: a holder that acquires a key, writes and
// reads under the grant it heard, renews at about TTL/3, obeys the iron
// rule (a renew refused or unanswered: no write until a new grant), and
// releases or walks away.
type proc struct {
	name    string
	key     string
	holding bool
	fence   int64 // the grant heard, while holding
	renewAt int64 // when it renews next (true time)
	free    int64 // when it may call its next op
}

// History generates the history: correct, or with the plant. ok is false
// when the plant found no place in it (then the history is correct, and
// the caller should draw another seed or make it longer).
func (p Params) History() (h *model.History, ok bool) {
	p = p.normal()
	ops := p.correct()
	h = &model.History{Name: p.Name(), Header: model.DefaultHeader(), Ops: ops}
	h.Header.Semantics, h.Header.ClockUncertainty = p.Semantics, p.Uncertainty
	if p.FenceLess {
		h.Header.Fences = model.NoFences
	}
	ok = true
	if p.Plant != Correct {
		rng := rand.New(rand.NewPCG(p.Seed, 0x706c616e74))
		ok = p.plant(h, rng)
	}
	h.NumberLines()
	return h, ok
}

// correct runs the processes against the reference coordinator
// (internal/impl/memstore) and, under fenced storage, the reference resource. Each op
// takes effect at a true time inside its [call, return] window, in the
// order of those times, at a coordinator clock reading that never goes
// back and stays within the uncertainty of true time; so every history it
// makes satisfies every property.
func (p Params) correct() []model.Op {
	rng := rand.New(rand.NewPCG(p.Seed, 0x636c617373))
	store, res := memstore.New(), memstore.NewResource()
	ttl, u := p.ttl(), p.Uncertainty
	keys, nproc := max(p.Keys, 1), max(p.Procs, 1)
	procs := make([]*proc, nproc)
	for i := range procs {
		procs[i] = &proc{name: fmt.Sprintf("p%d", i)}
	}
	lat := max(ttl/20, 1) // each side of an op's effect, at most
	ops := make([]model.Op, 0, p.Ops)
	var now, clock, offset int64
	free := make([]*proc, 0, nproc)
	for len(ops) < p.Ops {
		now += rng.Int64N(max(ttl/(10*int64(nproc)), 1) + 1)
		// The coordinator's clock: a random walk within u of true time,
		// monotonic.
		if u > 0 {
			offset = min(max(offset+rng.Int64N(2*max(u/20, 1)+1)-max(u/20, 1), -u), u)
		}
		clock = max(clock, now+offset)
		free = free[:0]
		for _, pr := range procs {
			if pr.free <= now {
				free = append(free, pr)
			}
		}
		if len(free) == 0 {
			continue
		}
		pr := free[rng.IntN(len(free))]
		op := model.Op{Process: pr.name, Owner: pr.name, Call: max(pr.free, now-rng.Int64N(lat+1))}
		lost := rng.Float64() < p.Unanswered
		applied := !lost || rng.IntN(2) == 0
		switch {
		case !pr.holding:
			if pr.key == "" || !lost && rng.IntN(4) == 0 {
				pr.key = fmt.Sprintf("k%d", rng.IntN(keys))
			}
			op.Key, op.Kind, op.TTL = pr.key, model.Acquire, ttl
			if applied {
				op.Fence, op.OK = store.Acquire(pr.key, pr.name, ttl, clock)
			}
		case now >= pr.renewAt:
			op.Key, op.Kind, op.TTL = pr.key, model.Renew, ttl
			if !p.FenceLess {
				op.Fence = pr.fence
			}
			if applied {
				op.OK = store.Renew(pr.key, pr.name, ttl, op.Fence, clock)
			}
		case rng.IntN(12) == 0:
			op.Key, op.Kind = pr.key, model.Release
			if !p.FenceLess {
				op.Fence = pr.fence
			}
			if applied {
				op.OK = store.Release(pr.key, pr.name, op.Fence)
			}
		case rng.IntN(4) == 0:
			op.Key, op.Kind, op.OK = pr.key, model.Read, true
			if applied {
				if p.Semantics == model.FencedStorage {
					op.Value, op.HasValue = res.Read(pr.key)
				} else {
					op.Value, op.HasValue = store.Read(pr.key)
				}
			}
		default:
			op.Key, op.Kind, op.Fence = pr.key, model.Write, pr.fence
			op.Value, op.HasValue = fmt.Sprintf("%s:%d", pr.name, len(ops)), true
			if p.FenceLess {
				op.Fence = store.Fence(pr.key) // no token: the holder and the expiry decide
			}
			if applied {
				if p.Semantics == model.FencedStorage {
					op.OK = op.Fence <= store.Fence(pr.key) && res.Write(pr.key, op.Fence, op.Value) == nil
				} else {
					op.OK = store.Write(pr.key, pr.name, op.Fence, op.Value, clock) == nil
				}
			}
			if p.FenceLess {
				op.Fence = 0
			}
		}
		if !op.OK && op.Kind != model.Read {
			op.Error = refusal(op.Kind)
		}
		if lost {
			op.OK, op.Error = false, ""
			if op.Kind == model.Acquire {
				op.Fence = 0
			}
			if op.Kind == model.Read {
				op.Value, op.HasValue = "", false
			}
			pr.free = op.Call + 1
		} else {
			op.Return, op.Returned = now+rng.Int64N(lat+1), true
			if !p.Interval && applied {
				op.At, op.HasAt = clock, true
			}
			pr.free = op.Return
		}
		// What the holder heard decides what it does next.
		switch op.Kind {
		case model.Acquire:
			switch {
			case op.Returned && op.OK:
				pr.holding, pr.fence, pr.renewAt = true, op.Fence, op.Call+ttl/3
				if p.FenceLess {
					op.Fence = 0
				}
			case !op.Returned && p.NoRetry:
				pr.free += ttl + rng.Int64N(ttl) // walk away for a while
				pr.key = ""
			case op.Returned:
				pr.free += rng.Int64N(ttl/4 + 1) // held: back off a little
			}
		case model.Renew:
			if !op.Returned || !op.OK {
				pr.holding = false // the iron rule: acquire again before writing
			} else {
				pr.renewAt = op.Call + ttl/3
			}
		case model.Release:
			pr.holding = false
			if op.Returned {
				pr.free += rng.Int64N(ttl/2 + 1)
			}
		}
		ops = append(ops, op)
	}
	return ops
}

func refusal(k model.Kind) string {
	switch k {
	case model.Acquire:
		return "held"
	case model.Write:
		return "stale-fence"
	}
	return "not-holder"
}

// plant makes the one change p.Plant names.
func (p Params) plant(h *model.History, rng *rand.Rand) bool {
	ops := h.Ops
	// Candidates are drawn from the second half, so the violation sits
	// deep in the history.
	from := len(ops) / 2
	accepted := func(op *model.Op) bool { return op.Kind == model.Write && op.Returned && op.OK }
	switch p.Plant {
	case PlantLinearizable:
		// An accepted write whose value a later completed read returned.
		written := map[string]int{}
		var cands [][2]int
		for i := from; i < len(ops); i++ {
			op := &ops[i]
			if accepted(op) {
				written[op.Value] = i
			}
			if op.Kind == model.Read && op.Returned && op.HasValue {
				if w, ok := written[op.Value]; ok {
					cands = append(cands, [2]int{w, i})
					delete(written, op.Value)
				}
			}
		}
		if len(cands) == 0 {
			return false
		}
		w := &ops[cands[rng.IntN(len(cands))][0]]
		w.OK, w.Error = false, "stale-fence"
		return true
	case PlantSingleWriter:
		var cands []int
		for i := from; i < len(ops); i++ {
			if accepted(&ops[i]) && (p.FenceLess || ops[i].Fence > 0) {
				cands = append(cands, i)
			}
		}
		if len(cands) == 0 {
			return false
		}
		w := ops[cands[rng.IntN(len(cands))]]
		// An owner that never acquired: no clock reading and no unanswered
		// grant makes it the holder, so no reading of the history excuses
		// it, fenced or fence-less.
		const other = "intruder"
		rogue := model.Op{Process: other, Owner: other, Key: w.Key, Kind: model.Write, Fence: w.Fence,
			Value: "rogue:" + other, HasValue: true, Call: w.Call, Return: w.Return, Returned: true, OK: true, At: w.At, HasAt: w.HasAt}
		h.Ops = insert(h.Ops, rogue)
		return true
	case PlantFenceMonotonic:
		if p.FenceLess {
			return false // no fences, nothing to order
		}
		// An accepted write under f1, then (after it returned) one under
		// f2 > f1: a late write under f1 after that.
		var cands [][2]int
		first := map[string]int{} // key -> index of its oldest-fence accepted write since from
		for i := from; i < len(ops); i++ {
			op := &ops[i]
			if !accepted(op) {
				continue
			}
			if j, ok := first[op.Key]; !ok {
				first[op.Key] = i
			} else if op.Fence > ops[j].Fence && ops[j].Return < op.Call {
				cands = append(cands, [2]int{j, i})
			}
		}
		if len(cands) == 0 {
			return false
		}
		c := cands[rng.IntN(len(cands))]
		old, newer := ops[c[0]], ops[c[1]]
		late := model.Op{Process: old.Owner + "-late", Owner: old.Owner, Key: old.Key, Kind: model.Write, Fence: old.Fence,
			Value: "late:" + old.Owner, HasValue: true, Call: newer.Return + 1, Return: newer.Return + 2, Returned: true, OK: true}
		if newer.HasAt {
			late.At, late.HasAt = max(newer.At, newer.Return)+1, true
		}
		h.Ops = insert(h.Ops, late)
		return true
	case PlantStopOnRenew:
		// Two answered writes of one process under one fence, back to back
		// in its order: an unanswered renew between them.
		lastWrite := map[string]int{}
		var cands [][2]int
		for i := from; i < len(ops); i++ {
			op := &ops[i]
			prev, seen := lastWrite[op.Process]
			if op.Kind == model.Write && op.Returned {
				if seen && ops[prev].Key == op.Key && ops[prev].Fence == op.Fence && ops[prev].Return <= op.Call {
					cands = append(cands, [2]int{prev, i})
				}
				lastWrite[op.Process] = i
			} else {
				delete(lastWrite, op.Process)
			}
		}
		if len(cands) == 0 {
			return false
		}
		c := cands[rng.IntN(len(cands))]
		w1 := ops[c[0]]
		renew := model.Op{Process: w1.Process, Owner: w1.Owner, Key: w1.Key, Kind: model.Renew, TTL: p.ttl(), Fence: w1.Fence, Call: w1.Return}
		h.Ops = slices.Insert(h.Ops, c[1], renew) // just before the second write
		return true
	}
	return false
}

// insert puts op, the only op of its process, about where its call falls
// (ops are near enough sorted by call for a binary search to find a place
// that keeps a file close to time order).
func insert(ops []model.Op, op model.Op) []model.Op {
	i, _ := slices.BinarySearchFunc(ops, op.Call, func(o model.Op, c int64) int {
		if o.Call <= c {
			return -1
		}
		return 1
	})
	return slices.Insert(ops, i, op)
}
