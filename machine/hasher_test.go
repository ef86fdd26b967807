package machine

import (
	"testing"

	"github.com/leasecheck/leasecheck/internal/statehash"
	"pgregory.net/rapid"
)

// newHasher is an empty Hasher, as the explorer starts one.
func newHasher() *Hasher { return (*Hasher)(statehash.NewHasher()) }

// sum is the digest h holds.
func sum(h *Hasher) uint64 { return h.in().Sum() }

// stringByBytes is Hasher.String as it was first written, a byte at a time:
// the digest a string gets must not change with how it is computed (shards
// of one exploration merge by digest).
func stringByBytes(h *Hasher, s string) {
	var w uint64
	n := 0
	for i := 0; i < len(s); i++ {
		w = w<<8 | uint64(s[i])
		if n++; n == 8 {
			h.Uint(w)
			w, n = 0, 0
		}
	}
	if n > 0 {
		h.Uint(w)
	}
	h.Int(int64(len(s)) | 1<<62)
}

// TestPropertyHasherStringIsTheByteLoop: String digests any sequence of
// strings as the byte loop does, and tells apart strings that differ.
func TestPropertyHasherStringIsTheByteLoop(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ss := rapid.SliceOfN(rapid.String(), 0, 5).Draw(t, "strings")
		fast, slow := newHasher(), newHasher()
		for _, s := range ss {
			fast.String(s)
			stringByBytes(slow, s)
		}
		if sum(fast) != sum(slow) {
			t.Fatalf("String digests %q as %x, the byte loop as %x", ss, sum(fast), sum(slow))
		}
		a, b := rapid.String().Draw(t, "a"), rapid.String().Draw(t, "b")
		ha, hb := newHasher(), newHasher()
		ha.String(a)
		hb.String(b)
		if a != b && sum(ha) == sum(hb) {
			t.Fatalf("%q and %q share digest %x", a, b, sum(ha))
		}
	})
}

// The check above must be able to fail: words of 8 taken little-endian (a
// fast String gone wrong) digest differently from the byte loop.
func TestHasherStringCheckCatchesTheWrongByteOrder(t *testing.T) {
	s := "owner-of-the-lease-1"
	wrong, right := newHasher(), newHasher()
	for i := 0; i+8 <= len(s); i += 8 {
		var w uint64
		for j := 7; j >= 0; j-- {
			w = w<<8 | uint64(s[i+j])
		}
		wrong.Uint(w)
	}
	var w uint64
	for i := len(s) / 8 * 8; i < len(s); i++ {
		w = w<<8 | uint64(s[i])
	}
	wrong.Uint(w)
	wrong.Int(int64(len(s)) | 1<<62)
	stringByBytes(right, s)
	if sum(wrong) == sum(right) {
		t.Fatal("little-endian words digest as big-endian ones: the property could not tell")
	}
}
