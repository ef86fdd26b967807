package machine

// The optional interfaces of exploration (DESIGN.md §7). The explorer
// (package explore) keeps the states it has seen and branches from them; a
// machine that can copy and digest itself makes that fast. Without them any
// machine still works: the explorer re-runs a path from the root instead of
// copying a state, and digests a machine by walking its fields with
// reflection (sim.HashValue) — slower, the same answers.

// HolderCloner is a Holder that copies itself: the copy and the original
// evolve independently from then on (no shared slices or maps).
type HolderCloner interface {
	CloneHolder() Holder
}

// CoordinatorCloner is a Coordinator that copies itself.
type CoordinatorCloner interface {
	CloneCoordinator() Coordinator
}

// ResourceCloner is a Resource that copies itself.
type ResourceCloner interface {
	CloneResource() Resource
}

// ClockedCloner is a Clocked coordinator that copies itself, so that
// ClockedCoordinator's adapter can copy itself too.
type ClockedCloner interface {
	CloneClocked() Clocked
}

// StateHasher is a machine that digests its state: two machines whose future
// behaviour is the same must write the same values (fields that never
// influence a decision, such as counters kept for tests, may be left out).
// The explorer skips a world state it has seen, so a digest that leaves out
// state that matters makes it miss paths.
type StateHasher interface {
	HashState(h *Hasher)
}

// Hasher accumulates a 64-bit digest of a machine's state, a word at a
// time (a multiply-xorshift mix; Sum finishes it with an avalanche). It is
// no cryptographic hash: it tells states apart.
type Hasher struct{ h uint64 }

// NewHasher returns an empty digest.
func NewHasher() *Hasher { return &Hasher{h: hashSeed} }

const hashSeed = 0x9e3779b97f4a7c15

// Reset empties the digest (a hasher kept for reuse).
func (h *Hasher) Reset() { h.h = hashSeed }

// Sum returns the digest.
func (h *Hasher) Sum() uint64 { return Finalize(h.h) }

// Finalize is the avalanche step of a digest (murmur3's fmix64): every
// input bit moves about half the output bits, so digests may be summed or
// XORed without near-equal inputs cancelling.
func Finalize(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Int mixes v in.
func (h *Hasher) Int(v int64) {
	x := (h.h ^ uint64(v)) * 0x100000001b3
	h.h = x ^ (x >> 29)
}

// Uint mixes v in.
func (h *Hasher) Uint(v uint64) { h.Int(int64(v)) }

// Bool mixes b in.
func (h *Hasher) Bool(b bool) {
	if b {
		h.Int(1)
	} else {
		h.Int(0)
	}
}

// String mixes s in, with its length (so "ab","c" and "a","bc" differ).
// Its bytes go in as big-endian words of 8, the last word of what is left.
// (Eight at a time and the rest in a loop of its own: the same words as a
// byte loop that counted to 8, in half the instructions; strings were 6% of
// the instructions an explored state cost.)
func (h *Hasher) String(s string) {
	n := len(s)
	for ; len(s) >= 8; s = s[8:] {
		h.Uint(uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
			uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7]))
	}
	if len(s) > 0 {
		var w uint64
		for i := 0; i < len(s); i++ {
			w = w<<8 | uint64(s[i])
		}
		h.Uint(w)
	}
	h.Int(int64(n) | 1<<62)
}

// CloneCoordinator copies a Coordinator made by ClockedCoordinator when the
// Clocked coordinator behind it is a ClockedCloner, and returns nil
// otherwise. (A driver digests such a coordinator through Unwrap.)
func (c *clocked) CloneCoordinator() Coordinator {
	cl, ok := c.c.(ClockedCloner)
	if !ok {
		return nil
	}
	return ClockedCoordinator(cl.CloneClocked())
}
