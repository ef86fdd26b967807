// Package campaign runs many scenarios and judges them: the one place where
// seeds are drawn, runs are judged on every property, failures are shrunk,
// explained and saved, and outcomes are summed into a mergeable summary
// (docs/design.md §5 Campaign, §9 Reports). `leasecheck run`, `repro` and
// `merge` are its flags and printing; verify, explore and the tests build on
// it, and so can a third party.
//
//   - A Target runs one scenario: Reference() and Mutant(m) in the
//     simulator, a real backend elsewhere (it records itself in the
//     scenario's "implementation" field; ParseTarget reads it back).
//   - Judge (JudgeExecution) judges a run on every property that applies:
//     the checker's six history properties on its history, and the run
//     properties (package runprop) on the simulator's result. An Outcome
//     answers Failed, Violated, Undecided and Status, the exit status
//     computed one way (0 hold, 1 violated, 2 usage, 3 undecided).
//   - Violation is the one shape of a violation, history or run property;
//     WriteViolation and WriteOutcome render it as text, Report as JSON.
//   - Run is a campaign: seeds First.. (a Shard of them), on Workers
//     goroutines, consumed in seed order so the result never depends on the
//     workers; FailFast stops at the first failing seed; failing seeds are
//     shrunk and saved (SaveOptions). Memory is constant in the number of
//     seeds. Sequential runs one seed at a time, the next only after the
//     last was told: a real backend's rounds (package verify).
//   - Summary is the mergeable value: counts, and exact histograms
//     (Latency) for the percentiles; Merge of disjoint parts equals the
//     whole, byte for byte in JSON (WriteJSON, ReadSummary).
//   - Shrink minimizes a failing scenario, keeping the same violation (and,
//     for a planted bug, the reference passing); ShrinkWithStats says what
//     it did, within a time budget (ShrinkOptions.For) for targets whose
//     candidates are real runs, whose own outcomes it then keeps
//     (KeepOutcomes: a real run does not repeat exactly); SaveFailure and
//     WriteFailure save the scenario (with Expect), the history, the page
//     (WritePage), the story (WriteStory) and the trace; Replay and
//     CheckExpect turn a saved scenario into a regression test
//     (testdata/regressions/, TestRegressions).
//   - Detect and Counterexample are the mutation test's search for each
//     planted bug (internal/impl/mutants) and its shrunk counterexample
//     (testdata/scenarios/mutants/).
//
// Index: target.go (Target, Simulated, ParseTarget), judge.go (Judge,
// Outcome, Status), render.go (Violation, text and JSON), campaign.go (Run,
// Config), shard.go, summary.go (Summary, Merge), histogram.go (Latency),
// shrink.go, save.go (SaveFailure, Replay, CheckExpect, WritePage),
// story.go (WriteStory), detect.go (Detect, Counterexample).
package campaign
