// Package explore is leasecheck's model checker (docs/design.md §7): bounded
// exhaustive exploration of the same machines the simulator runs, not a
// separate model.
//
// A scenario with a Space (scenario.Space; Space builds the standard one)
// makes every nondeterministic choice of a run a labelled choice point:
// which move runs next (one of the events due at the earliest instant —
// ties in every order —, a fault striking now, the adversarial client's
// next request), a message's delay from a small set, its loss. Explore
// searches those choices breadth-first (counterexamples minimal in steps),
// depth-first, or with PCT's random priorities and its probabilistic
// guarantee, skipping states seen before (a digest of the whole world,
// sim.World.StateHash) and orders of steps of different holders that
// commute (sleep sets, search.go, where their soundness with state caching
// is argued).
//
// Every state is watched by cheap monitors (internal/explorejudge's
// monitor.go: the servers' answers stepped through the specification — the
// checker's timed model, internal/timed, never the machines explored, so a
// bug in their source is not a bug in their judge —, the fencing and iron
// rules, beliefs, liveness measurements); the full judges (checker.Check,
// runprop.Judge) confirm every violation before it is reported, and judge
// every path's end. The explorer, a driver, imports none of them: its
// caller hands them in (Options.Judges, judges.go; docs/design.md §13). A violation the full judges find that the monitor never flagged on
// its path is a disagreement, a bug in leasecheck: Report.Disagreement
// says so (the command exits 2). The monitor's completeness is tested by
// bugs edited into the source of the coordinator, the resource and the
// holder (sourcebugs_test.go), not through their bug switches.
//
// DefaultPlan is the spaces the command explores by default (plan.go):
// every fault once, the adversarial client under both semantics, and the
// adversary after an owner reuse; ExplorePlan sums their reports. A violation stops the search (breadth-first: once the level
// it was found in is done, the counterexample being the rule's, shard.go); its path is a
// scenario with a Schedule, which `leasecheck repro FILE` replays with no
// other flag. Report says exactly what was covered; Complete is true only
// when the bounded space was exhausted with every verdict decided.
//
// A third party's machines run here as they are. With machine.HolderCloner
// (and its kin) a state is copied; without, it is re-run from the root.
// With machine.StateHasher a machine is digested by its own method;
// without, by reflection (sim.HashValue). Both fallbacks are slower and
// give the same answers.
//
// Memory: the visited set is 64-bit digests in an open-addressing table,
// 16 bytes a slot (visited.go, where the odds of a collision are argued;
// the report states them). A waiting state keeps its own world while the
// heap is under a quarter of MaxMemory; past that it keeps its path and
// shares an ancestor's world, and past half only the root's, re-running its
// path when its turn comes (budget.go). Re-running is exact, so how states
// wait changes the memory and the time, never the counts.
//
// Budgets: Options.Timeout, MaxMemory (the Go heap, read every 256
// expansions) and MaxStates end a search early, never steer it; Stopped
// names the one that did.
//
// Sharding: ExploreShard explores one of N parts of a breadth-first
// search (a common prefix, the frontier dealt out by digest) into a Part;
// MergeParts combines all N into the single run's Verdict (VerdictOf),
// exactly — shard.go argues why, and which counts are order-dependent.
//
// Index: explore.go (Bounds, Space, Options, Report, Explore), plan.go
// (DefaultPlan, ExplorePlan), search.go (transitions, sleep sets,
// expanding a state: what every strategy shares), bfs.go and dfs.go (the
// two exhaustive strategies), pct.go, paths.go (a state's path, re-running
// it, the chooser that enumerates choice values), budget.go (waiting
// states' worlds and the budgets), visited.go (the visited set),
// judges.go (what the caller's judges provide), judge.go, minimize.go,
// shard.go (ExploreShard, Part, Verdict, the counterexample rule), merge.go
// (ReadPart, MergeParts), coverage.go (Coverage of the explored machines' code, the reductions a
// report names).
package explore
