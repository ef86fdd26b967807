// Package scenario is a simulated run as data (DESIGN.md §5): the holders
// and their programs, the TTL, the network, the clock-drift bound, the fault
// plan and the seed, serialized as JSON so a run can be saved and replayed
// exactly (package sim runs it).
//
// Generate draws a scenario from any faults.Chooser: a seeded PRNG
// (FromSeed) or rapid draws (sim.NewRapid), so the same code path serves
// `leasecheck run`, the property tests and the fuzz target.
//
// Index: scenario.go (Scenario, Load, Save, Validate), generate.go.
package scenario
