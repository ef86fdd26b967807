package explore

import (
	"errors"
	"time"

	"github.com/leasecheck/leasecheck/internal/runrecord"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// Judges are what judge the explored states: a cheap monitor every world
// carries, stepped at every state, and the full judges, run where it flags
// and at every path's end. The explorer is a driver: it imports no judge
// (docs/design.md §13), so its caller hands them in (Options.Judges;
// internal/explorejudge wires leasecheck's: the timed model, the checker
// and the run properties, judged as campaign judges a run).
type Judges interface {
	// Properties lists every property judged, in report order (the keys of
	// Report.Violations); bit i of a Monitor's Ever is Properties()[i].
	Properties() []string
	// NewMonitor returns a root world's per-state monitor; the worlds
	// copied from it carry its clones.
	NewMonitor(MonitorConfig) Monitor
	// Judge judges a run's result in full — the history checker only when
	// withChecker (elsewhere the monitor vouches for the history) — with s
	// the run's setting (nil: made from the result's own scenario) and
	// budget bounding one history's linearizability search.
	Judge(r *sim.Result, s *runrecord.Setting, withChecker bool, budget time.Duration) (Judgement, error)
	// NeedsChecker reports whether a state flagged with flags needs the
	// history checker (else the run properties alone judge it).
	NeedsChecker(flags []string) bool
	// EndOnly reports whether a violation of p may show at a path's end
	// with no flag on its path: the one the monitor leaves to the full
	// judges (a crash never recovered from), not a disagreement.
	EndOnly(p string) bool
}

// MonitorConfig is how a monitor is made.
type MonitorConfig struct {
	// Blind (tests only): the monitor never flags linearizable, a planted
	// incompleteness the disagreement check must catch.
	Blind bool
	// Verify: the monitor checks its kept digests as the worlds do
	// (Options.VerifyDigests); Err reports a stale one.
	Verify bool
}

// Monitor is a per-state monitor (a sim.Monitor). Its flags must be
// complete: a state the full judges find violated is flagged at that state
// or earlier on its path (but for Judges.EndOnly), so that judging every
// flagged state finds the shortest violating path; a violation found where
// it never flagged is reported as a disagreement, a bug in leasecheck.
type Monitor interface {
	sim.Monitor
	// Take returns the properties flagged since the last Take and clears
	// them: the explorer takes them after every move and judges a state
	// with any.
	Take(w *sim.World) []string
	// Ever is every property flagged on the path so far, bit i for
	// Judges.Properties()[i].
	Ever() uint64
	// Diverged: the monitor lost track of the specification; every later
	// state of the path is judged with the history checker.
	Diverged() bool
	// Err is a bug the monitor found in itself (a stale kept digest, with
	// MonitorConfig.Verify), nil without.
	Err() error
}

// Judgement is what the full judges say of one run.
type Judgement struct {
	Failed    []string // violated properties, in report order
	Undecided bool
	// Explain, when something failed, tells a failed property's story.
	Explain Explainer
}

// Explainer tells why a property failed: its explanation, and the history's
// and the trace's lines it names.
type Explainer interface {
	Explain(property string) (explanation string, lines, traceLines []int)
}

// ErrNoJudges: Options.Judges is required.
var ErrNoJudges = errors.New("explore: no judges (Options.Judges: internal/explorejudge.Judges{} is leasecheck's)")

// defaultJudges (tests only, export_test.go) judge a search whose Options
// name none, so that the tests' many Options need not each name them.
var defaultJudges Judges
