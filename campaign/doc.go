// Package campaign is the old path of leasecheck's campaign: the seed loop,
// the judge, the shrinker and the saver, which moved to internal/campaign
// in v0.13.0. They are the house the command and the doors are built on,
// not a door: their API changes as the command needs.
//
// This package keeps, for v0.13.0 only, aliases of the names its docs and
// examples showed (Run and Config, Summary and Merge, Target, Execution and
// Outcome, Judge, Replay and CheckExpect, ...), so that a build against
// v0.12.0 still compiles; every name is the internal one (the same type,
// not a copy). It is deleted in the next release.
//
// Deprecated: campaign is internal from v0.13.0. Run campaigns with the
// leasecheck command (run, repro, merge, explore); sweep your own client in
// virtual time with vclient/k8slease (Sweep, Regressions, ReplayFile),
// your own machines with leasetest (RunMachines), your own backend with
// verify. vclient.Execution, k8slease.Outcome, k8slease.SweepTarget and
// k8slease.CampaignConfig name the campaign's types those doors hand out.
package campaign
