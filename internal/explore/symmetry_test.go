package explore_test

import (
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
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
		symmetric(explore.Bounds{Holders: 2}),
		symmetric(explore.Bounds{Holders: 2, Faults: []faults.Kind{faults.Crash}, MaxFaults: 1}),
		symmetric(explore.Bounds{Holders: 3}),
		// The default programs: h1 works long, h2 and h3 alike (a class of
		// two beside a holder of its own).
		{Holders: 3, Stagger: -1},
		symmetric(explore.Bounds{Holders: 2, Faults: []faults.Kind{faults.Pause}, MaxFaults: 1, Adversary: 1}),
	} {
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
		// Workers digest in parallel: the same report for any number.
		if par := mustExplore(t, explore.Space(b), explore.Options{Symmetry: true, Workers: 4}); report(t, par) != report(t, sym) {
			t.Errorf("4 workers differ:\n%s\n%s", report(t, par), report(t, sym))
		}
		if !slices.ContainsFunc(sym.ReductionsOn(), func(s string) bool { return len(s) > 15 && s[:15] == "holder symmetry" }) {
			t.Errorf("reductions %v do not name it", sym.ReductionsOn())
		}
	}
}

// TestSymmetryFindsEveryMutant: on each built-in mutant's space with its
// holders made identical, the reduced search finds every bug the unreduced
// one finds, and its counterexample replays, from its saved file alone, to
// the violation the file expects.
func TestSymmetryFindsEveryMutant(t *testing.T) {
	found := 0
	for _, m := range mutants.All() {
		t.Run(m.Name, func(t *testing.T) {
			sc := explore.Space(symmetric(explore.MutantBounds(m)))
			m.AdaptSpace(sc)
			o := explore.Options{Sim: sim.Planted(m), Implementation: m.Implementation(), MaxStates: 200_000}
			plain := mustExplore(t, sc, o)
			o.Symmetry = true
			sym := mustExplore(t, sc, o)
			t.Logf("unreduced %d distinct states (%s), symmetry %v %d (%s)", plain.DistinctStates, plain.Stopped, sym.Symmetry, sym.DistinctStates, sym.Stopped)
			if plain.Counterexample == nil {
				if sym.Counterexample != nil {
					t.Logf("only the reduced search found it (%s): its deeper levels are within the budget", sym.Counterexample.Property)
				}
				return
			}
			cx := sym.Counterexample
			if cx == nil {
				t.Fatalf("the unreduced search finds %s, the reduced one does not (%s)", plain.Counterexample.Property, sym.Stopped)
			}
			found++
			back, err := scenario.Parse(cx.Scenario.Marshal())
			if err != nil {
				t.Fatal(err)
			}
			opts, err := sim.OptionsFor(back.Implementation)
			if err != nil {
				t.Fatal(err)
			}
			run, err := sim.Run(back, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := failed(run); !slices.Equal(got, back.Expect) || len(got) == 0 {
				t.Fatalf("replay fails %v, the file expects %v", got, back.Expect)
			}
		})
	}
	if found < 5 {
		t.Errorf("only %d mutants found on the symmetric spaces: the test shows little", found)
	}
}

// TestSymmetryOffWhereHoldersDiffer: where holders start apart, run
// different programs or a planned fault names one of them, the reduction
// does not apply and changes nothing: the same counts, byte for byte.
func TestSymmetryOffWhereHoldersDiffer(t *testing.T) {
	planned := explore.Space(symmetric(explore.Bounds{Holders: 2}))
	planned.Faults = faults.Plan{{Kind: faults.Crash, Target: "h1", At: 5, Duration: 10}}
	for name, sc := range map[string]*scenario.Scenario{
		"staggered":     explore.Space(explore.Bounds{Holders: 2, Faults: []faults.Kind{faults.Crash}, MaxFaults: 1}),
		"programs":      explore.Space(explore.Bounds{Holders: 2, Stagger: -1}),
		"planned fault": planned,
	} {
		plain := mustExplore(t, sc, explore.Options{})
		sym := mustExplore(t, sc, explore.Options{Symmetry: true})
		if len(sym.Symmetry) > 0 || sym.SymmetryOff == "" {
			t.Fatalf("%s: symmetry applied (%v)", name, sym.Symmetry)
		}
		t.Logf("%s: off because %s", name, sym.SymmetryOff)
		sym.SymmetryOff = ""
		if a, b := report(t, plain), report(t, sym); a != b {
			t.Errorf("%s: reports differ:\n%s\n%s", name, a, b)
		}
	}
}
