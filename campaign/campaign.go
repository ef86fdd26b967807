package campaign

import (
	"context"
	"io"

	"github.com/leasecheck/leasecheck/internal/campaign"
)

// Every name here is one a v0.12.0 user could have read in the README, in
// docs/ or in examples/: the campaign's entry (Run, Config, Summary,
// Merge, Shard), what a target is and returns (Target, Reference and
// Simulated, Execution, Scenario, Belief), the judge and its verdict (Judge,
// JudgeExecution, JudgeOptions, Outcome, Violation, Finding, WriteOutcome),
// and a saved failure replayed as a test (Replay, CheckExpect, Failure,
// SaveOptions). Functions are thin wrappers rather than variables, so that
// they cannot be reassigned.

// Config describes a campaign: which seeds, against what, how to judge and
// what to keep.
//
// Deprecated: campaign is internal from v0.13.0. Use the leasecheck
// command (leasecheck run), k8slease.Sweep (a k8slease.CampaignConfig in
// SweepConfig.Configure), leasetest.RunMachines or verify.
type Config = campaign.Config

// Run runs a campaign and returns its summary.
//
// Deprecated: campaign is internal from v0.13.0. Use the leasecheck
// command (leasecheck run), k8slease.Sweep, leasetest.RunMachines or
// verify.
func Run(ctx context.Context, cfg Config) (*Summary, error) { return campaign.Run(ctx, cfg) }

// Summary is a campaign's mergeable result: counts and latency histograms.
//
// Deprecated: campaign is internal from v0.13.0. Read a sweep's summary
// through k8slease.SweepResult.Summary, or the command's --json output
// (leasecheck run --json, leasecheck merge).
type Summary = campaign.Summary

// Merge merges the summaries of disjoint parts of one campaign.
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck merge.
func Merge(parts ...*Summary) (*Summary, error) { return campaign.Merge(parts...) }

// Shard is part I of N of a campaign's seeds.
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck run
// --shard I/N.
type Shard = campaign.Shard

// ParseShard reads a shard written "I/N".
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck run
// --shard I/N.
func ParseShard(s string) (Shard, error) { return campaign.ParseShard(s) }

// Failure is a failing seed of a campaign, with where it was saved.
//
// Deprecated: campaign is internal from v0.13.0. Read a sweep's failures
// through k8slease.SweepResult.Failures.
type Failure = campaign.Failure

// SaveOptions says where and how many failures a campaign shrinks and
// saves.
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck run --out
// and --save, or in a k8slease sweep the -save flag and a
// k8slease.CampaignConfig's Save.
type SaveOptions = campaign.SaveOptions

// Target runs one scenario.
//
// Deprecated: campaign is internal from v0.13.0. A *vclient.Target is a
// k8slease.SweepTarget, the same interface.
type Target = campaign.Target

// Simulated is a target the simulator runs: the reference, or a planted
// bug on it. Its Generator draws a seed's scenario.
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck run, which
// runs the reference (or --mutant NAME).
type Simulated = campaign.Simulated

// Reference is the simulator's reference implementation as a target.
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck run, which
// runs the reference unless --mutant names a planted bug.
func Reference() *Simulated { return campaign.Reference() }

// Execution is what running one scenario produced.
//
// Deprecated: campaign is internal from v0.13.0. Use vclient.Execution,
// the same type.
type Execution = campaign.Execution

// Scenario is one run, complete.
//
// Deprecated: campaign is internal from v0.13.0. Use vclient.Scenario,
// the same type.
type Scenario = campaign.Scenario

// Belief is one interval in which a holder believed it held the lease.
//
// Deprecated: campaign is internal from v0.13.0. A real runner's beliefs
// are an Execution's Beliefs field (vclient.Execution, the same type);
// the type is not named outside internal/.
type Belief = campaign.Belief

// JudgeOptions bounds the checker's search when a run is judged.
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck run
// --timeout, or k8slease.ReplayFile, which judges without a time budget.
type JudgeOptions = campaign.JudgeOptions

// Judge runs sc on t and judges the run on every property.
//
// Deprecated: campaign is internal from v0.13.0. Use k8slease.ReplayFile
// or leasecheck repro.
func Judge(ctx context.Context, t Target, sc *Scenario, opts JudgeOptions) (*Outcome, error) {
	return campaign.Judge(ctx, t, sc, opts)
}

// JudgeExecution judges a run on every property that applies to it.
//
// Deprecated: campaign is internal from v0.13.0. Use k8slease.ReplayFile
// or leasecheck repro.
func JudgeExecution(ctx context.Context, r *Execution, opts JudgeOptions) (*Outcome, error) {
	return campaign.JudgeExecution(ctx, r, opts)
}

// Outcome is one run judged on every property that applies to it.
//
// Deprecated: campaign is internal from v0.13.0. Use k8slease.Outcome,
// the same type.
type Outcome = campaign.Outcome

// Violation is one violation, of a history property or a run property.
//
// Deprecated: campaign is internal from v0.13.0. Read an outcome's
// violations through its Violations method.
type Violation = campaign.Violation

// Finding is one violation of a run property.
//
// Deprecated: campaign is internal from v0.13.0. Read an outcome's
// findings through its Findings and Warnings fields.
type Finding = campaign.Finding

// WriteOutcome writes an outcome's verdicts and violations as text.
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck repro,
// which prints the same text; a sweep logs it for every failing seed.
func WriteOutcome(w io.Writer, o *Outcome) { campaign.WriteOutcome(w, o) }

// Replay runs a saved scenario against the implementation it records and
// judges it.
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck repro
// FILE, or k8slease.ReplayFile for a virtual-time client's file.
func Replay(ctx context.Context, sc *Scenario, opts JudgeOptions) (*Outcome, error) {
	return campaign.Replay(ctx, sc, opts)
}

// CheckExpect is nil when an outcome violates exactly the properties its
// scenario expects.
//
// Deprecated: campaign is internal from v0.13.0. Use leasecheck repro
// FILE (its exit status), or k8slease.Regressions, which checks every
// file's expect.
func CheckExpect(o *Outcome) error { return campaign.CheckExpect(o) }
