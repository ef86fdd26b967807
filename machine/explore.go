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

// Hasher is what a machine's HashState mixes its state into, a word at a
// time (Int, Uint, Bool, String): a 64-bit multiply-xorshift digest, no
// cryptographic hash, which tells states apart. The explorer starts,
// finishes and reuses it; two runs of leasecheck digest the same words the same way, whatever
// the machine they run on.
type Hasher statehash.Hasher

func (h *Hasher) in() *statehash.Hasher { return (*statehash.Hasher)(h) }

// Int mixes v in.
func (h *Hasher) Int(v int64) { h.in().Int(v) }

// Uint mixes v in.
func (h *Hasher) Uint(v uint64) { h.in().Uint(v) }

// Bool mixes b in.
func (h *Hasher) Bool(b bool) { h.in().Bool(b) }

// String mixes s in, with its length (so "ab","c" and "a","bc" differ).
func (h *Hasher) String(s string) { h.in().String(s) }

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
