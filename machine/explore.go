package machine

import "github.com/leasecheck/leasecheck/internal/statehash"

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
// no cryptographic hash: it tells states apart. Two runs of leasecheck
// digest the same words the same way, whatever the machine they run on.
type Hasher struct{ h statehash.Digest }

// NewHasher returns an empty digest.
func NewHasher() *Hasher { return &Hasher{h: statehash.New()} }

// Reset empties the digest (a hasher kept for reuse).
func (h *Hasher) Reset() { h.h = statehash.New() }

// Sum returns the digest.
func (h *Hasher) Sum() uint64 { return h.h.Sum() }

// Digest returns the digest so far as a value, and Resume goes on from
// one: leasecheck's explorer and reference machines chain the words in a
// register between the two (the same digest, a third faster). A machine
// of your own needs neither.
func (h *Hasher) Digest() statehash.Digest { return h.h }

// Resume makes the hasher go on from d (Digest).
func (h *Hasher) Resume(d statehash.Digest) { h.h = d }

// Int mixes v in.
func (h *Hasher) Int(v int64) { h.h = h.h.Int(v) }

// Uint mixes v in.
func (h *Hasher) Uint(v uint64) { h.h = h.h.Uint(v) }

// Bool mixes b in.
func (h *Hasher) Bool(b bool) { h.h = h.h.Bool(b) }

// String mixes s in, with its length (so "ab","c" and "a","bc" differ).
func (h *Hasher) String(s string) { h.h = h.h.Str(s) }

// Digest is the digest so far as a value, a Hasher's own (package
// internal/statehash): leasecheck's explorer and reference machines chain
// it in a register, word for word the same digest.
//
// Deprecated: leasecheck's own; it left this package. A machine digests
// itself through the Hasher its HashState is handed.
type Digest = statehash.Digest

// NewDigest returns an empty digest.
//
// Deprecated: leasecheck's own; it left this package with Digest.
func NewDigest() Digest { return statehash.New() }

// Finalize is the avalanche step of a digest (murmur3's fmix64).
//
// Deprecated: leasecheck's own; it left this package with Digest.
func Finalize(x uint64) uint64 { return statehash.Finalize(x) }

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
