package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// TestMutantsAreCaught shows the mutant hook (Options.NewCoordinator,
// NewResource) and that the checker sees what the simulator records: three
// planted bugs from internal/impl/mutants (the full mutation test lives there), each
// under the fault kinds of its detection search.
func TestMutantsAreCaught(t *testing.T) {
	for _, name := range []string{"greedy-grant", "wall-clock-coordinator", "write-without-fence-check"} {
		t.Run(name, func(t *testing.T) {
			m := mutants.ByName(name)
			caught := map[string]int{}
			for seed := uint64(1); seed <= mutants.DefaultBudget && len(caught) == 0; seed++ {
				sc := m.Scenario(seed)
				r, err := sim.Run(sc, sim.Planted(m))
				if err != nil {
					t.Fatal(err)
				}
				res, err := checker.Check(context.Background(), r.History, checker.Options{Workers: 1, Timeout: 5 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range res.Violations {
					caught[v.Property]++
				}
			}
			if len(caught) == 0 {
				t.Fatalf("%s: no violation in %d seeds; the simulator or checker lost its teeth", name, mutants.DefaultBudget)
			}
			t.Logf("%s caught: %v", name, caught)
		})
	}
}
