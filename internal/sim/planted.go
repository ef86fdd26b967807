package sim

import "github.com/leasecheck/leasecheck/internal/impl/mutants"

// Planted returns the options that plug mutant m in; the other components
// are the reference ones.
func Planted(m *mutants.Mutant) *Options {
	p := m.Machines()
	return &Options{NewCoordinator: p.NewCoordinator, NewResource: p.NewResource, NewHolder: p.NewHolder}
}

// OptionsFor returns the options of a scenario's implementation field: nil
// for "" or "reference", the mutant's for "mutant:NAME"; any other value
// is an error (mutants.ForImplementation).
func OptionsFor(impl string) (*Options, error) {
	m, err := mutants.ForImplementation(impl)
	if m == nil || err != nil {
		return nil, err
	}
	return Planted(m), nil
}
