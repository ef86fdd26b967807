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

// vslot is one slot of the table, 16 bytes: the digest, the state's
// depth and, in meta, whether the slot is used (which tells an empty slot
// from digest 0), whether the state was expanded, and where its sleep set
// lies in the arena (0: empty). The depth sits in the slot, not in an
// array beside it: a depth-first visit reads both, and two arrays were two
// cache misses a state where one is one.
type vslot struct {
	fp    uint64
	depth uint32
	meta  uint32
}

const (
	slotUsed     = 1 << 31
	slotExpanded = 1 << 30
	sleepOffMask = slotExpanded - 1
)

func (s *vslot) used() bool     { return s.meta&slotUsed != 0 }
func (s *vslot) expanded() bool { return s.meta&slotExpanded != 0 }

func (s *vslot) setExpanded(e bool) {
	if e {
		s.meta |= slotExpanded
	} else {
		s.meta &^= slotExpanded
	}
}

// visitedSet is the table. Its slot count is a power of two, at most 3/4
// full. A sleep set lies in the arena as its length (a header's id) and
// its transitions; arena[0] is a placeholder, so offset 0 means empty.
type visitedSet struct {
	slots []vslot
	n     int
	shift uint
	arena []tkey
	// keepDepths says the slots' depths are kept, by depth-first search only
	// (trackDepths): a state reached in fewer moves than before is explored
	// again (search.go's dfs).
	keepDepths bool
}

// trackDepths makes v keep each state's depth (add's depth argument).
func (v *visitedSet) trackDepths() { v.keepDepths = true }

func newVisitedSet() *visitedSet {
	v := &visitedSet{arena: make([]tkey, 1, 64)}
	v.resize(1 << 12)
	return v
}

func (v *visitedSet) resize(size int) {
	old := v.slots
	v.slots = make([]vslot, size)
	v.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for i := range old {
		if old[i].used() {
			v.slots[v.index(old[i].fp)] = old[i]
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
		if !s.used() || s.fp == fp {
			return i
		}
		i = (i + 1) & mask
	}
}

// get returns fp's slot, or nil.
func (v *visitedSet) get(fp uint64) *vslot {
	s := v.slot(fp)
	if !s.used() {
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
	s := v.slot(fp)
	*s = vslot{fp: fp, depth: uint32(depth), meta: slotUsed}
	v.setSleep(s, sleep)
	v.n++
	return s
}

// sleepOf returns s's sleep set where it lies in the arena: read it before
// the next setSleep.
func (v *visitedSet) sleepOf(s *vslot) []tkey {
	off := s.meta & sleepOffMask
	if off == 0 {
		return nil
	}
	return v.arena[off+1 : off+1+uint32(v.arena[off].id)]
}

// sleep returns s's sleep set (a copy: the arena is rewritten in place).
func (v *visitedSet) sleep(s *vslot) []tkey {
	return slices.Clone(v.sleepOf(s))
}

// setSleep stores s's sleep set: in place when it is no larger (a sleep
// set only shrinks once stored), else at the arena's end.
func (v *visitedSet) setSleep(s *vslot, sleep []tkey) {
	off := s.meta & sleepOffMask
	switch {
	case len(sleep) == 0:
		off = 0
	case off != 0 && len(sleep) <= int(v.arena[off].id):
		copy(v.arena[off+1:], sleep)
		v.arena[off].id = uint64(len(sleep))
	default:
		if len(v.arena)+1+len(sleep) > sleepOffMask {
			panic("explore: the visited set's sleep sets hold more than 2^30 transitions")
		}
		off = uint32(len(v.arena))
		v.arena = append(v.arena, tkey{id: uint64(len(sleep))})
		v.arena = append(v.arena, sleep...)
	}
	s.meta = s.meta&^sleepOffMask | off
}
