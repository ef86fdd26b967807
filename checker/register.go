package checker

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// The data refutation: a key's data alone, as a register. In the timed
// model only an accepted write changes the data (under either semantics),
// to its value, and a read that answered ok returns it; nothing else
// touches it. So every linearization of the key is, restricted to its
// accepted writes, the unanswered writes that took effect and its answered
// reads, a linearization of a register — and a history whose data cannot
// be one is not linearizable, whatever its leases did. With unique values
// that is decided in O(n log n) by Gibbons and Korach's zones ("Testing
// shared memories", 1997): per value, its cluster (the write and the reads
// that returned it) spans from the earliest return f to the latest call s;
// when f < s the value must stay current over [f, s] (a forward zone), else
// every op of the cluster is in flight over [s, f] (a backward zone). No
// read may return before its write was called, no two forward zones may
// overlap, and no backward zone may lie inside a forward one.
//
// Only what is sure counts: real time alone (not the clock readings, which
// only constrain more), strict inequalities (ops whose times touch are
// concurrent), and only values written once by a write that may have
// taken effect; an unanswered write nobody read is left out (it may never
// have taken effect). Dropping constraints only loses refutations, so
// every refutation found here is a real one. It decides in one sort where
// the sweeps would walk the whole history; the sweeps and the search stay
// for every other way a history can be wrong.

// zoneOp is one op of a cluster, by its real-time interval.
type zoneOp struct {
	k          *kop
	call, ret  int64 // ret: timed.Inf for a write that never answered
	write, set bool  // set: the op's value is a value (not "nothing written")
}

type cluster struct {
	value    timed.Value
	write    *zoneOp // nil: the initial "nothing written", before everything
	reads    []*zoneOp
	f, s     int64 // the earliest return and the latest call
	fOp, sOp *zoneOp
}

// refuteData returns the refutation of a key's data as a register, or nil
// when the zones find none.
func refuteData(key string, kops []kop) *found {
	clusters := map[timed.Value]*cluster{}
	writes := map[timed.Value]int{}
	get := func(v timed.Value) *cluster {
		c := clusters[v]
		if c == nil {
			c = &cluster{value: v, f: timed.Inf, s: -timed.Inf}
			clusters[v] = c
		}
		return c
	}
	ops := make([]zoneOp, 0, len(kops))
	for i := range kops {
		k := &kops[i]
		op := k.op
		switch {
		case op.Kind == model.Write && (op.Returned && op.OK || !op.Returned):
			writes[k.in.Value]++
		case op.Kind == model.Read && op.Returned && op.OK:
		default:
			continue
		}
		z := zoneOp{k: k, call: op.Call, ret: timed.Inf, write: op.Kind == model.Write, set: k.in.Value != timed.NoValue}
		if op.Returned {
			z.ret = op.Return
		}
		ops = append(ops, z)
	}
	for i := range ops {
		z := &ops[i]
		v := z.k.in.Value
		if z.write {
			get(v).write = z
			continue
		}
		get(v).reads = append(get(v).reads, z)
	}
	var forward, backward []*cluster
	for _, c := range clusters {
		v := c.value
		if v != timed.NoValue && writes[v] > 1 {
			continue // written twice: which write a read saw is not known
		}
		if c.write != nil && !c.write.k.op.Returned && len(c.reads) == 0 {
			continue // never answered, never read: it may not have taken effect
		}
		if v != timed.NoValue && c.write == nil {
			r := c.reads[0]
			return dataFound(key, fmt.Sprintf("line %d read %q, but no write of it took effect: every write of %q was refused", r.k.op.Line, v.Value(), v.Value()), r.k.op)
		}
		members := c.reads
		if c.write != nil {
			members = append([]*zoneOp{c.write}, c.reads...)
		}
		for _, z := range members {
			if z.ret < c.f {
				c.f, c.fOp = z.ret, z
			}
			if z.call > c.s {
				c.s, c.sOp = z.call, z
			}
		}
		if c.write == nil { // the initial value: current from the very start
			c.f, c.fOp = -timed.Inf, nil
		}
		if c.write != nil {
			for _, r := range c.reads {
				if r.ret < c.write.call {
					return dataFound(key, fmt.Sprintf("line %d read %q and returned before line %d, the only write of it, was called", r.k.op.Line, v.Value(), c.write.k.op.Line), r.k.op, c.write.k.op)
				}
			}
		}
		if c.f < c.s {
			forward = append(forward, c)
		} else {
			backward = append(backward, c)
		}
	}
	// Forward zones by start; each must begin no earlier than every earlier
	// one ended.
	slices.SortFunc(forward, func(a, b *cluster) int {
		return cmp.Or(cmp.Compare(a.f, b.f), cmp.Compare(a.s, b.s), compareValues(a.value, b.value))
	})
	var widest *cluster
	for _, c := range forward {
		if widest != nil && c.f < widest.s {
			return dataFound(key, fmt.Sprintf("%s must stay the data from %s until %s, and %s from %s until %s: at once, which one register cannot hold",
				describeValue(widest), zoneFrom(widest), zoneTo(widest), describeValue(c), zoneFrom(c), zoneTo(c)), zoneOps(widest, c)...)
		}
		if widest == nil || c.s > widest.s {
			widest = c
		}
	}
	// Forward zones are now disjoint and sorted: a backward zone inside one
	// is inside the last that starts before it.
	for _, c := range backward {
		i, _ := slices.BinarySearchFunc(forward, c.s, func(z *cluster, t int64) int { return cmp.Compare(z.f, t) })
		if i == 0 {
			continue
		}
		z := forward[i-1]
		if z.f < c.s && c.f < z.s {
			return dataFound(key, fmt.Sprintf("%s must stay the data from %s until %s, but %s was written, and read if at all, within that span (between %s and %s)",
				describeValue(z), zoneFrom(z), zoneTo(z), describeValue(c), zoneTo(c), zoneFrom(c)), zoneOps(z, c)...)
		}
	}
	return nil
}

func compareValues(a, b timed.Value) int {
	if c := cmp.Compare(a.Value(), b.Value()); c != 0 {
		return c
	}
	switch {
	case a == b:
		return 0
	case a == timed.NoValue:
		return -1
	}
	return 1
}

func describeValue(c *cluster) string {
	if c.write == nil {
		return "nothing written yet"
	}
	return fmt.Sprintf("%q (line %d)", c.value.Value(), c.write.k.op.Line)
}

// zoneFrom and zoneTo name the ops that bound a cluster's zone: the one
// that returned first, the one called last.
func zoneFrom(c *cluster) string {
	if c.fOp == nil {
		return "the start"
	}
	return fmt.Sprintf("line %d's return", c.fOp.k.op.Line)
}

func zoneTo(c *cluster) string { return fmt.Sprintf("line %d's call", c.sOp.k.op.Line) }

func zoneOps(cs ...*cluster) []*model.Op {
	var out []*model.Op
	for _, c := range cs {
		for _, z := range []*zoneOp{c.write, c.fOp, c.sOp} {
			if z != nil && !slices.Contains(out, z.k.op) {
				out = append(out, z.k.op)
			}
		}
	}
	return out
}

func dataFound(key, why string, ops ...*model.Op) *found {
	f := newFound(Linearizable, key, fmt.Sprintf("key %q: its data alone cannot be explained: %s. No order of the operations explains that, whatever the leases did.", key, why), ops...)
	return &f
}
