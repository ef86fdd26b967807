package explorejudge

import (
	"testing"

	"github.com/leasecheck/leasecheck/machine"
)

// The monitor's kept digest is checked as the worlds' are: a
// specification state written past Applied makes VerifyDigests fail the
// digest (Err), while one written through Applied does not.
func TestVerifyDigestsCatchesAMonitorWrittenPastApplied(t *testing.T) {
	m := &monitor{verify: true}
	k := m.specOf("k")
	var h machine.Hasher
	m.HashState(&h)
	k.one[0].Fence++ // past Applied: the kept digest is not dropped
	m.HashState(&h)
	if !m.stale {
		t.Fatal("a specification state written past Applied left the kept digest unquestioned")
	}
	m = &monitor{verify: true}
	k = m.specOf("k")
	m.HashState(&h)
	m.kept = 0 // as Applied does
	k.one[0].Fence++
	m.HashState(&h)
	if m.stale {
		t.Fatal("a write that dropped the kept digest was called stale")
	}
}
