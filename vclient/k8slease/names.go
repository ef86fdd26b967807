package k8slease

import "github.com/leasecheck/leasecheck/internal/campaign"

// A sweep is run, judged and saved by internal/campaign, which a module
// outside leasecheck cannot import. The three of its types a user writes
// down in a sweep of their own are named here, each an alias (the same
// type, not a copy): an Outcome in a SweepConfig.Story or an OnOutcome,
// and in what FindZombieWrite and ReplayFile take and return; a
// SweepTarget in what SweepConfig.Target returns and ReplayFile takes; a
// CampaignConfig in a SweepConfig.Configure. The rest of what a sweep
// returns (SweepResult's Summary and Failures) is read through its fields
// and methods, without naming its type.

// Outcome is one seed's run judged on every property: the execution (its
// Scenario, History, Store) and the verdicts (Failed, Violated, Warned;
// Check, StoreCheck, Findings, Warnings).
type Outcome = campaign.Outcome

// CampaignConfig is the campaign a sweep runs, handed to
// SweepConfig.Configure before it starts: its save limits (Save.Max),
// FailFast, an OnOutcome or OnFailure of your own (the sweep's own run
// first).
type CampaignConfig = campaign.Config

// SweepTarget runs one scenario for a sweep: what SweepConfig.Target
// returns and ReplayFile replays against. A *vclient.Target is one; so is
// a type of your own whose Run wraps one (returning a *vclient.Execution).
type SweepTarget = campaign.Target
