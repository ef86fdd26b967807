package machine

// The optional interfaces of exploration (docs/design.md §7). The explorer
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
// no cryptographic hash: it tells states apart. Its digest so far is a
// Digest, whose methods it calls.
type Hasher struct{ h Digest }

// NewHasher returns an empty digest.
func NewHasher() *Hasher { return &Hasher{h: NewDigest()} }

const hashSeed = 0x9e3779b97f4a7c15

// Reset empties the digest (a hasher kept for reuse).
func (h *Hasher) Reset() { h.h = NewDigest() }

// Sum returns the digest.
func (h *Hasher) Sum() uint64 { return h.h.Sum() }

// Digest returns the digest so far, to go on with as a value (Resume
// comes back).
func (h *Hasher) Digest() Digest { return h.h }

// Resume makes the hasher go on from d.
func (h *Hasher) Resume(d Digest) { h.h = d }

// Int mixes v in.
func (h *Hasher) Int(v int64) { h.h = h.h.Int(v) }

// Uint mixes v in.
func (h *Hasher) Uint(v uint64) { h.h = h.h.Uint(v) }

// Bool mixes b in.
func (h *Hasher) Bool(b bool) { h.h = h.h.Bool(b) }

// String mixes s in, with its length (so "ab","c" and "a","bc" differ).
func (h *Hasher) String(s string) { h.h = h.h.Str(s) }

// Digest is a Hasher's digest so far, as a value: d = d.Int(v) is
// h.Int(v), word for word the same digest. A Digest in a local variable
// stays in a register, where a Hasher behind a pointer stores and loads
// its digest at every word: a digest is a chain of dependent multiplies,
// and the store and load were two fifths of its time (docs/exploration.md,
// "Measured choices in the code"). The explorer's state digest,
// a state's most frequent work, is written with it.
type Digest uint64

// NewDigest returns an empty digest.
func NewDigest() Digest { return hashSeed }

// Sum returns the digest, finished.
func (d Digest) Sum() uint64 { return Finalize(uint64(d)) }

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
func (d Digest) Int(v int64) Digest {
	x := (uint64(d) ^ uint64(v)) * 0x100000001b3
	return Digest(x ^ (x >> 29))
}

// Uint mixes v in.
func (d Digest) Uint(v uint64) Digest { return d.Int(int64(v)) }

// Bool mixes b in.
func (d Digest) Bool(b bool) Digest {
	if b {
		return d.Int(1)
	}
	return d.Int(0)
}

// Str mixes s in, with its length. Its bytes go in as big-endian words of
// 8, the last word of what is left. (Eight at a time and the rest in a
// loop of its own: the same words as a byte loop that counted to 8, in
// half the instructions, and every explored state digests strings.)
func (d Digest) Str(s string) Digest {
	n := len(s)
	for ; len(s) >= 8; s = s[8:] {
		d = d.Uint(uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
			uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7]))
	}
	if len(s) > 0 {
		var w uint64
		for i := 0; i < len(s); i++ {
			w = w<<8 | uint64(s[i])
		}
		d = d.Uint(w)
	}
	return d.Int(int64(n) | 1<<62)
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
