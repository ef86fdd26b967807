// Package statehash is the word mix of the explorer's state digests: a
// 64-bit multiply-xorshift chain, finished by an avalanche (Finalize). It
// is no cryptographic hash: it tells states apart. machine.Hasher, which a
// machine's HashState is handed, accumulates a Digest; leasecheck's
// explorer and reference machines chain a Digest in a register instead.
// Shards of one exploration merge by digest: a word's digest must never
// change with how it is computed.
package statehash

const seed = 0x9e3779b97f4a7c15

// Hasher accumulates a digest behind a pointer: machine.Hasher is this
// type, with the four methods a machine's HashState mixes words in by; the
// explorer starts (NewHasher), finishes (Sum) and reuses (Reset) it, and
// chains a Digest in a register between Digest and Resume. Its zero value
// is not empty: NewHasher and Reset start from the seed.
type Hasher struct{ d Digest }

// NewHasher returns an empty digest.
func NewHasher() *Hasher { return &Hasher{d: New()} }

// Reset empties the digest (a hasher kept for reuse).
func (h *Hasher) Reset() { h.d = New() }

// Sum returns the digest.
func (h *Hasher) Sum() uint64 { return h.d.Sum() }

// Digest returns the digest so far, to go on with as a value (Resume
// comes back): the same digest, a third faster than through the pointer.
func (h *Hasher) Digest() Digest { return h.d }

// Resume makes the hasher go on from d.
func (h *Hasher) Resume(d Digest) { h.d = d }

// Int mixes v in.
func (h *Hasher) Int(v int64) { h.d = h.d.Int(v) }

// Uint mixes v in.
func (h *Hasher) Uint(v uint64) { h.d = h.d.Uint(v) }

// Bool mixes b in.
func (h *Hasher) Bool(b bool) { h.d = h.d.Bool(b) }

// String mixes s in, with its length (so "ab","c" and "a","bc" differ).
func (h *Hasher) String(s string) { h.d = h.d.Str(s) }

// Digest is machine.Hasher's digest so far, as a value: d = d.Int(v) is
// h.Int(v), word for word the same digest. A Digest in a local variable
// stays in a register, where a Hasher behind a pointer stores and loads
// its digest at every word: a digest is a chain of dependent multiplies,
// and the store and load were two fifths of its time (docs/exploration.md,
// "Measured choices in the code"). The explorer's state digest,
// a state's most frequent work, is written with it.
type Digest uint64

// New returns an empty digest.
func New() Digest { return seed }

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
