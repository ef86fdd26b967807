package k8slease

import "github.com/leasecheck/leasecheck/internal/campaign"

// A sweep is run, judged and saved by internal/campaign, which a module
// outside leasecheck cannot import. What a sweep returns is read through
// SweepResult's fields (its Summary and Failures) and Replay's.

// CampaignConfig is the campaign a sweep runs, handed to
// SweepConfig.Configure before it starts.
//
// Deprecated: set SweepConfig.FailFast and MaxSaved, and the seeds with
// Seeds or -seeds; the name leaves this package in v0.16.0.
type CampaignConfig = campaign.Config

// Outcome is one seed's run judged on every property.
//
// Deprecated: read a failing seed through SweepResult.Failures, a replayed
// file through ReplayScenario's Replay; the name leaves this package in
// v0.16.0.
type Outcome = campaign.Outcome

// SweepTarget runs one scenario for a sweep.
//
// Deprecated: ReplayScenario and Regressions take your SweepConfig; the
// name leaves this package in v0.16.0.
type SweepTarget = campaign.Target
