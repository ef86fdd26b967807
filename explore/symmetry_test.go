package explore_test

import (
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/explore"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/holder"
)

// symmetric makes b's holders interchangeable: one program, one start.
func symmetric(b explore.Bounds) explore.Bounds {
	b.Stagger = -1
	b.Work = [][]holder.Item{{{Work: 10, Writes: 1}}}
	return b
}

// TestSymmetryOnReference: on spaces of identical holders the reduction
// applies, keeps the reference clean and complete, and reaches fewer
// distinct states than the same search without it (sleep sets off in
// both: the reduction turns them off).
func TestSymmetryOnReference(t *testing.T) {
	for _, b := range []explore.Bounds{
		{Holders: 2},
		{Holders: 2, Faults: []faults.Kind{faults.Crash}, MaxFaults: 1},
		{Holders: 3},
	} {
		b = symmetric(b)
		plain := mustExplore(t, explore.Space(b), explore.Options{NoPOR: true})
		por := mustExplore(t, explore.Space(b), explore.Options{})
		sym := mustExplore(t, explore.Space(b), explore.Options{Symmetry: true})
		t.Logf("%d holders %v: no reduction %d, sleep sets %d, symmetry %d distinct states", b.Holders, b.Faults, plain.DistinctStates, por.DistinctStates, sym.DistinctStates)
		if len(sym.Symmetry) == 0 {
			t.Fatalf("symmetry did not apply: %s", sym.SymmetryOff)
		}
		if !sym.Complete || sym.Counterexample != nil || !plain.Complete || plain.Counterexample != nil {
			t.Fatalf("verdicts: symmetry complete=%v cex=%v, plain complete=%v cex=%v", sym.Complete, sym.Counterexample != nil, plain.Complete, plain.Counterexample != nil)
		}
		if sym.DistinctStates >= plain.DistinctStates {
			t.Errorf("symmetry saved nothing: %d >= %d", sym.DistinctStates, plain.DistinctStates)
		}
		if !slices.ContainsFunc(sym.ReductionsOn(), func(s string) bool { return len(s) > 15 && s[:15] == "holder symmetry" }) {
			t.Errorf("reductions %v do not name it", sym.ReductionsOn())
		}
	}
}
