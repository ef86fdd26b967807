// Package pairs is leasecheck's coverage model of pairs: most failures of
// a lease protocol need two factors at once (a fault and the step it
// strikes in, two faults, a fault and a shape of the workload), so a run
// of seeds or an exploration counts which pairs it reached, and the
// default plan and the generator's first 2,000 seeds are held to reaching
// every pair of the model (docs/design.md §7, "Pairs").
//
// The simulator records the pairs a run meets into a Set (package sim:
// Result.Pairs, Options.Pairs for a Sink shared by many worlds); Judge
// judges a Set against Required and Report prints the table `leasecheck
// run --pairs` and `leasecheck explore --pairs` show, unreached pairs
// first.
package pairs
