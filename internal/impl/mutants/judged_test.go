package mutants_test

import (
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/runprop"
)

// TestMutantsJudged: the property each mutant must be caught by is one the
// harness judges, a history property or a run property. (An external test:
// the run properties import the simulator, which imports this package.)
func TestMutantsJudged(t *testing.T) {
	props := append(checker.Properties(), runprop.Properties()...)
	for _, m := range mutants.All() {
		if !slices.Contains(props, m.Property) {
			t.Errorf("%s: property %q is not judged", m.Name, m.Property)
		}
	}
}
