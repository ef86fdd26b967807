// Package explorejudge is what judges the explorer's states
// (internal/explore, a driver, which imports no judge and takes its judges
// from its caller as explore.Options.Judges): the per-state monitor
// (monitor.go), which steps the checker's timed model (internal/timed) by
// the requests the servers apply and flags where a property may have just
// been violated, and the full judges, run where it flags and at every
// path's end — campaign.JudgeExecution, the one place where every property
// is judged, with the run properties (runprop.Judge) alone first where the
// monitor vouches for the history. It sits in the campaign layer
// (docs/design.md §13): it imports the judges, the campaign and the
// explorer. Judges{} is what the command, leasetest and the tests pass.
package explorejudge
