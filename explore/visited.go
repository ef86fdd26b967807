package explore

// The visited set: 64-bit state digests (sim.World.StateHash) in an
// open-addressing table, 16 bytes a slot, with each state's sleep set in a
// shared arena (most are empty: they cost nothing there).
//
// Two different states that share a digest make the search treat the
// second as seen and skip its subtree: the one way the visited set can lose
// a state. Taking the digest as a uniformly random 64-bit value per state,
// the chance that any two of n distinct states share one is at most
// n(n-1)/2 / 2^64 ≈ n²/2^65: 3·10⁻⁸ at 10⁶ states, 3·10⁻⁴ at 10⁸. The
// report states the figure for the states it visited (Report.CollisionOdds),
// as TLC does for its fingerprints. The digest's word mix (machine.Hasher)
// is a bijection of its state for each word, so two states whose digested
// words differ in one place never collide; the estimate is for the rest.

import (
	"math/bits"
	"slices"
)

// vslot is one slot of the table. used tells an empty slot from digest 0.
type vslot struct {
	fp       uint64
	off      uint32 // the sleep set: arena[off : off+n]
	n        uint16
	used     bool
	expanded bool
}

// visitedSet is the table. Its slot count is a power of two, at most 3/4
// full.
type visitedSet struct {
	slots []vslot
	n     int
	shift uint
	arena []tkey
	// depths, kept by depth-first search only (trackDepths), is the fewest
	// moves each slot's state was reached in, slot by slot: a state reached
	// in fewer moves than before is explored again (search.go's dfs).
	depths []uint32
}

// trackDepths makes v keep each state's depth (add's depth argument).
func (v *visitedSet) trackDepths() {
	v.depths = make([]uint32, len(v.slots))
}

func newVisitedSet() *visitedSet {
	v := &visitedSet{}
	v.resize(1 << 12)
	return v
}

func (v *visitedSet) resize(size int) {
	old, oldDepths := v.slots, v.depths
	v.slots = make([]vslot, size)
	if oldDepths != nil || v.depths != nil {
		v.depths = make([]uint32, size)
	}
	v.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for i := range old {
		if old[i].used {
			j := v.index(old[i].fp)
			v.slots[j] = old[i]
			if oldDepths != nil {
				v.depths[j] = oldDepths[i]
			}
		}
	}
}

// slot returns fp's slot, or the empty one where it would go.
func (v *visitedSet) slot(fp uint64) *vslot { return &v.slots[v.index(fp)] }

// index returns the index of fp's slot, or of the empty one where it would
// go.
func (v *visitedSet) index(fp uint64) uint64 {
	mask := uint64(len(v.slots) - 1)
	// Fibonacci hashing: the digest's top bits, mixed, pick the home slot.
	i := (fp * 0x9e3779b97f4a7c15) >> v.shift
	for {
		s := &v.slots[i]
		if !s.used || s.fp == fp {
			return i
		}
		i = (i + 1) & mask
	}
}

// depth returns the fewest moves fp's state was reached in (trackDepths).
func (v *visitedSet) depth(fp uint64) int { return int(v.depths[v.index(fp)]) }

// setDepth records that fp's state was reached in d moves (trackDepths).
func (v *visitedSet) setDepth(fp uint64, d int) { v.depths[v.index(fp)] = uint32(d) }

// get returns fp's slot, or nil.
func (v *visitedSet) get(fp uint64) *vslot {
	s := v.slot(fp)
	if !s.used {
		return nil
	}
	return s
}

// add records fp, unseen, reached in depth moves, with sleep set sleep,
// and returns its slot (valid until the next add).
func (v *visitedSet) add(fp uint64, sleep []tkey, depth int) *vslot {
	if (v.n+1)*4 > len(v.slots)*3 {
		v.resize(len(v.slots) * 2)
	}
	i := v.index(fp)
	s := &v.slots[i]
	if v.depths != nil {
		v.depths[i] = uint32(depth)
	}
	*s = vslot{fp: fp, used: true}
	v.setSleep(s, sleep)
	v.n++
	return s
}

// sleep returns s's sleep set (a copy: the arena is rewritten in place).
func (v *visitedSet) sleep(s *vslot) []tkey {
	if s.n == 0 {
		return nil
	}
	return slices.Clone(v.arena[s.off : s.off+uint32(s.n)])
}

// setSleep stores s's sleep set: in place when it is no larger (a sleep
// set only shrinks once stored), else at the arena's end.
func (v *visitedSet) setSleep(s *vslot, sleep []tkey) {
	if len(sleep) > 0xffff {
		panic("explore: a sleep set of more than 65535 transitions")
	}
	if len(sleep) <= int(s.n) {
		copy(v.arena[s.off:], sleep)
	} else {
		s.off = uint32(len(v.arena))
		v.arena = append(v.arena, sleep...)
	}
	s.n = uint16(len(sleep))
}
