// Package scenario is a simulated run as data (docs/design.md §5): the holders
// and their programs, the TTL, the network, the clock-drift bound, the fault
// plan and the seed, serialized as JSON so a run can be saved and replayed
// exactly (package sim runs it).
//
// Generate draws a scenario from any Chooser: a seeded PRNG
// (FromSeed) or rapid draws (sim.NewRapid), so the same code path serves
// `leasecheck run`, the property tests and the fuzz target.
//
// Generated scenarios are adversarial as well as well-behaved (docs/design.md
// §7): besides the holders, a third of them have an adversarial client
// (clients.go) sending requests no well-behaved holder sends, and the
// protocol's parameters are drawn — renew intervals up to past the TTL,
// margins down to none, a drift bound the holder is told smaller than the
// truth, drift applied at the bound, wide drift bounds, lockstep networks,
// shuffled ties, worlds of exact instants, quiet worlds where liveness is
// judged. Options.WellBehaved draws the old workload.
//
// A Space (explore.go) makes a scenario enumerable for the explorer, and a
// Schedule replays one explored path exactly.
//
// Index: scenario.go (Scenario, Load, Save, Validate), generate.go
// (Generate, FromSeed, the drawn parameters), clients.go (Client, the threat
// model), explore.go (Space, Schedule, the adversary's menu), shrink.go.
package scenario
