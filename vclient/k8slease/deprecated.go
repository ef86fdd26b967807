package k8slease

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/vclient"
)

// The names below leave this package in v0.16.0. Each is leasecheck's own
// (its sweeps of its own Elector), or a second way to say what another
// name says; the work is done where its replacement says.

// ResourceVersionToken reads a Lease's resourceVersion as a token: ok is
// false when it is not a positive integer.
//
// Deprecated: Tokens reads it from every Lease answer, as
// Tokens.Token(TokenAcquired) or Tokens.Token(TokenHeld).
func ResourceVersionToken(l *coordinationv1.Lease) (token int64, ok bool) {
	return resourceVersionToken(l)
}

// TransitionsToken is leaseTransitions + 1: 1 for the first holder of a
// new Lease.
//
// Deprecated: Tokens reads it from every Lease answer, as
// Tokens.Token(TokenTransitions).
func TransitionsToken(l *coordinationv1.Lease) int64 { return transitionsToken(l) }

// Observe notes a Lease the API server answered with; written says whether
// it answered a create or update.
//
// Deprecated: wrap the typed client with Leases, or the client's transport
// with TokenTransport; both observe every Lease answer.
func (t *Tokens) Observe(l *coordinationv1.Lease, written bool) { t.observe(l, written) }

// SafeAt is Safe where a candidate's clock runs ppm parts per million
// fast.
//
// Deprecated: leasecheck's own (its clock sweeps); it leaves this package
// in v0.16.0.
func (t Timing) SafeAt(ppm int64) bool { return t.safeAt(ppm) }

// Found fails t unless some seed violated a property.
//
// Deprecated: set SweepConfig.Want to WantViolation.
func (r *SweepResult) Found(t *testing.T) {
	t.Helper()
	r.found(t)
}

// ZombieWrite is a write the resource accepted from a leader after the
// Lease had moved on to another.
//
// Deprecated: leasecheck's own; it leaves this package in v0.16.0. A
// saved failure's story tells its zombie write.
type ZombieWrite = k8ssweep.ZombieWrite

// FindZombieWrite returns the first zombie write of a history, or nil.
//
// Deprecated: leasecheck's own; it leaves this package in v0.16.0. A
// saved failure's story tells its zombie write.
func FindZombieWrite(o *Outcome) *ZombieWrite { return k8ssweep.FindZombieWrite(o) }

// Server is leasecheck's in-process Kubernetes API server.
//
// Deprecated: leasecheck's own; it leaves this package in v0.16.0. A sweep
// runs against it by default (SweepConfig.Server nil, SweepConfig.Fenced).
type Server = k8ssweep.Server

// NewServer returns an empty store.
//
// Deprecated: leasecheck's own; it leaves this package in v0.16.0. A sweep
// runs against it by default (SweepConfig.Server nil, SweepConfig.Fenced).
func NewServer() *Server { return k8ssweep.NewServer() }

// WorkOptions say how the leader's work (Work) checks and fences its
// writes.
//
// Deprecated: leasecheck's own (the work of its own electors); it leaves
// this package in v0.16.0. Your controller does its own work.
type WorkOptions = k8ssweep.WorkOptions

// Work is the leader's side effect of leasecheck's own electors.
//
// Deprecated: leasecheck's own (the work of its own electors); it leaves
// this package in v0.16.0. Your controller does its own work.
func Work(ctx context.Context, c *vclient.Candidate, o WorkOptions) { k8ssweep.Work(ctx, c, o) }

// Target returns the campaign target the configuration stands for, its
// runs bubbles of t.
//
// Deprecated: ReplayScenario and Regressions take the SweepConfig itself.
func (c *SweepConfig) Target(t *testing.T) (SweepTarget, error) { return c.target(t) }

// ReplayFile runs a saved scenario file against tg and judges it; a file
// recording another implementation is an error naming both.
//
// Deprecated: use ReplayScenario, which takes your SweepConfig and
// returns what the run showed.
func ReplayFile(tg SweepTarget, file string) (*Outcome, error) { return k8ssweep.ReplayFile(tg, file) }
