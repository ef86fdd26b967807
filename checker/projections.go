package checker

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// Cheap refutations of linearizable, each a projection of the timed model
// onto one thing it keeps (docs/design.md §10: relax, and a relaxed refutation
// is a real one): the data as a register (register.go), the fence counter
// and the resource's highest fence, which never go down, and the holder,
// which only a grant makes. Each looks at real time alone, strictly (ops
// whose times touch are concurrent), and only at answered ops, so each
// keeps every constraint it uses true of every linearization. They run
// where the greedy pass got stuck, before the sweeps: a wrong history full
// of unanswered ops and wide clock windows is refuted in one sort instead
// of the sweeps' walk, or left to them.

// refuteProjections returns the first refutation the projections find, or
// nil.
func refuteProjections(key string, kops []kop, rules timed.Rules) *found {
	if f := refuteData(key, kops); f != nil {
		return f
	}
	if f := refuteFences(key, kops, rules); f != nil {
		return f
	}
	return refuteHolder(key, kops, rules)
}

// refuteFences: the coordinator's fence counter and the resource's highest
// fence only grow. An answered op that pins the counter (a grant of f: f
// after it; under seed semantics an accepted write, renew or release
// presenting f: f at it) is a lower bound on the counter for every op it precedes,
// and an op that needs the counter lower (a grant of g needs it below g; a
// presented f accepted under seed semantics needs it at f) cannot follow.
// Under fenced storage an accepted write under f needs the resource's
// highest at most f, which an accepted write under more raised for good.
func refuteFences(key string, kops []kop, rules timed.Rules) *found {
	if rules.Fences == model.NoFences {
		return nil
	}
	seed := rules.Semantics == model.Seed
	type bound struct {
		k     *kop
		ret   int64
		fence int64
	}
	var counter, highest []bound // what each answered op pins, by return
	var needs []*kop
	for i := range kops {
		k := &kops[i]
		op := k.op
		if !op.Returned || !op.OK || op.Fence <= 0 {
			continue
		}
		switch {
		case op.Kind == model.Acquire:
			counter = append(counter, bound{k, op.Return, op.Fence})
			needs = append(needs, k)
		case seed && (op.Kind == model.Write || op.Kind == model.Renew || op.Kind == model.Release):
			counter = append(counter, bound{k, op.Return, op.Fence})
			needs = append(needs, k)
		case !seed && op.Kind == model.Write:
			// (It also says fence f was granted, but the model keeps an
			// unheard grant's fence loose: only the resource's bound counts.)
			highest = append(highest, bound{k, op.Return, op.Fence})
			needs = append(needs, k)
		}
	}
	byRet := func(a, b bound) int { return cmp.Compare(a.ret, b.ret) }
	slices.SortFunc(counter, byRet)
	slices.SortFunc(highest, byRet)
	slices.SortFunc(needs, func(a, b *kop) int { return cmp.Compare(a.op.Call, b.op.Call) })
	// Walk the ops by call; the bounds of every op that returned strictly
	// before the call are in force.
	var maxC, maxH bound
	ci, hi := 0, 0
	for _, x := range needs {
		for ci < len(counter) && counter[ci].ret < x.op.Call {
			if counter[ci].fence > maxC.fence {
				maxC = counter[ci]
			}
			ci++
		}
		for hi < len(highest) && highest[hi].ret < x.op.Call {
			if highest[hi].fence > maxH.fence {
				maxH = highest[hi]
			}
			hi++
		}
		op := x.op
		switch {
		case op.Kind == model.Acquire && maxC.k != nil && maxC.fence >= op.Fence:
			return fenceFound(key, fmt.Sprintf("line %d was granted fence %d, but line %d, which returned before it was called, had already brought the fence counter to %d: fences only grow", op.Line, op.Fence, maxC.k.op.Line, maxC.fence), op, maxC.k.op)
		case seed && op.Kind != model.Acquire && maxC.k != nil && maxC.fence > op.Fence:
			return fenceFound(key, fmt.Sprintf("line %d's %s under fence %d was accepted, but line %d, which returned before it was called, had already brought the fence counter to %d: a fence, once passed, is never current again", op.Line, op.Kind, op.Fence, maxC.k.op.Line, maxC.fence), op, maxC.k.op)
		case !seed && op.Kind == model.Write && maxH.k != nil && maxH.fence > op.Fence:
			return fenceFound(key, fmt.Sprintf("line %d's write under fence %d was accepted, but line %d's write under fence %d, which returned before it was called, had already been accepted: the resource refuses a fence below the highest it accepted", op.Line, op.Fence, maxH.k.op.Line, maxH.fence), op, maxH.k.op)
		}
	}
	return nil
}

// refuteHolder: under seed semantics only the holder's renew, release or
// write is accepted, and only a grant makes an owner the holder. An
// accepted one by an owner none of whose acquires (granted, or never
// answered) was called before it returned has no grant to stand on.
func refuteHolder(key string, kops []kop, rules timed.Rules) *found {
	if rules.Semantics != model.Seed {
		return nil
	}
	first := map[string]int64{} // owner -> the earliest call of an acquire that may have been granted
	for i := range kops {
		op := kops[i].op
		if op.Kind == model.Acquire && (!op.Returned || op.OK) {
			if c, ok := first[op.Owner]; !ok || op.Call < c {
				first[op.Owner] = op.Call
			}
		}
	}
	for i := range kops {
		op := kops[i].op
		if !op.Returned || !op.OK || op.Kind == model.Acquire || op.Kind == model.Read {
			continue
		}
		if c, ok := first[op.Owner]; !ok || c > op.Return {
			return holderFound(key, fmt.Sprintf("line %d's %s by %s was accepted, but no acquire of %s's could have been granted before it returned", op.Line, op.Kind, op.Owner, op.Owner), op)
		}
	}
	return nil
}

func fenceFound(key, why string, ops ...*model.Op) *found {
	f := newFound(Linearizable, key, fmt.Sprintf("key %q: its fences alone cannot be explained: %s. No order of the operations explains that.", key, why), ops...)
	return &f
}

func holderFound(key, why string, ops ...*model.Op) *found {
	f := newFound(Linearizable, key, fmt.Sprintf("key %q: %s. No order of the operations explains that.", key, why), ops...)
	return &f
}
