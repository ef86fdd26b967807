package realrun

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/faultsupport"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/tcpproxy"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Target is a backend to run against.
type Target struct {
	Info backend.Info
	// Addr is the server's host:port, or a cluster's members' client
	// addresses separated by commas (in Cluster.Members' order). When set,
	// every client process gets its own TCP proxy in front of each (for
	// delay, partition and the connection freeze of a paused holder), and
	// Open gets the proxies' addresses the same way; when empty, those
	// faults are not applicable.
	Addr string
	// Open connects one client to addr (the server's own or a proxy's).
	Open func(ctx context.Context, addr string) (backend.Backend, error)
	// Server, when set, is a server process the harness started and may
	// stop and resume (the coordinator-crash fault; a Restarter is also
	// crashed and restarted).
	Server Server
	// Cluster, when set, is the replicated service's servers, which the
	// harness started: the cluster faults (faults.ClusterKinds) strike
	// between them, and every run starts from a settled cluster.
	Cluster Cluster
	// Clock, when set, steps the coordinator's lease clock (clock-step and
	// clock-offset on "coordinator"): an in-process coordinator whose clock
	// the harness owns (SteppableClock). A real server's clock belongs to
	// its host; nil means those faults are reported as not applied.
	Clock ClockStepper
}

// ClockStepper is a coordinator clock the harness can step.
type ClockStepper interface {
	StepClock(d time.Duration)
}

// SteppableClock is a wall clock that faults can step: its Now is
// time.Now plus every step so far. Pass Now to backend.InProcess as the
// coordinator's clock and the clock itself as Target.Clock. Safe for
// concurrent use.
type SteppableClock struct {
	mu  sync.Mutex
	off time.Duration
}

// Now reads the clock.
func (c *SteppableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

// StepClock moves the clock by d (forward or back).
func (c *SteppableClock) StepClock(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// Config is one run of the generated workload (Workload): three holders and
// a reader, each fault kind injected once. The zero value means the
// defaults. It is a scenario like any other (RunScenario); Config only
// chooses its size.
type Config struct {
	Seed     uint64
	Duration time.Duration // workload time; default 10s (the horizon is 3 TTLs later, for faulted holders to finish)
	TTL      time.Duration // default 2s; raised to the backend's minimum (and rounded to its granularity), every time scaled alike
	Holders  int           // default 3
	Readers  int           // default 1; negative: none (one reader at most)
	Key      string        // the lease name; default "k"
	Faults   []faults.Kind // injected; must be Applicable
	// OpTimeout, when set, bounds every request; past it the outcome is
	// unknown. Default: a request lasts until the holder gives up on it
	// (its timeout, TTL/3).
	OpTimeout time.Duration
	// NewHolder builds the holders' machines; nil is the reference
	// (holder.New). A planted holder bug plugs in here, as in sim.Options.
	NewHolder func(holder.Config) machine.Holder
	// Log, when set, receives a line per injected fault. Calls are
	// serialized: Log is never called from two goroutines at once.
	Log func(format string, args ...any)
	// Extra, when set, runs beside the holders and readers on a client of
	// its own until the workload ends (end, on rec's timeline), recording
	// its requests into the run's history through rec; Run waits for it.
	// leasetest's adversarial clients use it.
	Extra func(ctx context.Context, rec *Recorder, b backend.Backend, end time.Duration)
}

func (c *Config) defaults() {
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.TTL <= 0 {
		c.TTL = 2 * time.Second
	}
	if c.Holders <= 0 {
		c.Holders = 3
	}
	if c.Readers < 0 {
		c.Readers = 0
	} else if c.Readers == 0 {
		c.Readers = 1
	}
	if c.Key == "" {
		c.Key = "k"
	}
}

// Result is a recorded run.
type Result struct {
	// History is the run's history, in µs since the run started; its Faults
	// are the fault records (model.FaultRecord) on the same timeline.
	History *model.History
	Ops     int
	// Faults counts the faults injected in full, by kind; Partial those
	// applied in part or not at all (their records say what was skipped).
	Faults  map[faults.Kind]int
	Partial map[faults.Kind]int
	// Beliefs are the intervals in which a holder's machine believed it held
	// the lease (machine.Ready.Believes), in µs on the history's timeline.
	Beliefs []Belief
	// Scenario is the scenario as run: the input with every retargeted
	// fault's target set to the holder it struck, and Implementation naming
	// the backend. Saved, it replays with RunScenario (verify --scenario).
	Scenario *scenario.Scenario
	// TTL is the real lease TTL; Scale the real µs per scenario time unit.
	TTL   time.Duration
	Scale float64
	// Calibration of the server clock (exact mode): the bound on the error of
	// the mapping onto the client's timeline, and how much the offset moved
	// over the run.
	CalibrationError, Drift time.Duration
	// Traffic is what each client's connections carried through its
	// proxies over the run, by the scenario's process name (h1, r1; a
	// restarted holder's incarnations share theirs): bytes, and the
	// requests and replies the proxy could frame, per leg — what a client
	// sent, measured at the socket. Empty without Target.Addr.
	Traffic map[string]tcpproxy.Counts
	// Losses are loss-signal's verdicts on every hold of a library that
	// holds while it says so (backend.Holding), whatever the round's
	// faults: its signal against the loss on the server's record.
	Losses []LossVerdict
}

// Belief is one interval in which a holder believed it held the lease
// under Fence: [From, To) in the history's µs. Open says the run ended
// while it still believed.
type Belief struct {
	Process, Owner string
	Fence          int64
	From, To       int64
	Open           bool
}

// Run runs the generated workload of cfg (Workload) against t and records
// the history. Errors are about the run itself (no server, no clock); what
// the backend did wrong is in the history, for the checker.
func Run(ctx context.Context, t Target, cfg Config) (*Result, error) {
	cfg.defaults()
	for _, k := range cfg.Faults {
		if !Applicable(t, k) {
			return nil, fmt.Errorf("fault %q is not applicable to %s: %s", k, t.Info.Name, NotApplicable(t, k))
		}
	}
	sc := Workload(t, cfg)
	return RunScenario(ctx, t, sc, Options{TTL: cfg.TTL, Retarget: true, OpTimeout: cfg.OpTimeout, NewHolder: cfg.NewHolder, Log: cfg.Log, Extra: cfg.Extra})
}

// Applicable reports whether fault kind k can be injected into t for real:
// what the kind needs of a real backend (internal/faultsupport's one table)
// against what t offers (a proxy needs Target.Addr, coordinator-crash a
// server the harness controls, a cluster fault a cluster it started).
func Applicable(t Target, k faults.Kind) bool { return NotApplicable(t, k) == "" }

// NotApplicable says why fault kind k cannot be injected into t for real,
// or "" when it can.
func NotApplicable(t Target, k faults.Kind) string {
	switch faultsupport.Needs(k, faultsupport.RealBackend) {
	case faultsupport.Always:
		return ""
	case faultsupport.NeedsProxy:
		if t.Addr == "" {
			return "it needs the server's address, to put a proxy between the clients and the server (Target.Addr), and the target gives none"
		}
		return ""
	case faultsupport.NeedsOwnServer:
		if t.Server == nil {
			return "it needs a server the harness starts, kills and restarts itself (Target.Server); a server of your own is not one leasecheck may crash"
		}
		return ""
	case faultsupport.NeedsCluster:
		if t.Cluster == nil {
			return "it strikes between the servers of a cluster, and the target is not one leasecheck started (a cluster backend such as etcd-cluster or zookeeper-ensemble)"
		}
		return ""
	}
	return "leasecheck cannot inject it into a real backend"
}

// ApplicableKinds filters kinds down to those applicable to t.
func ApplicableKinds(t Target, kinds []faults.Kind) []faults.Kind {
	var out []faults.Kind
	for _, k := range kinds {
		if Applicable(t, k) {
			out = append(out, k)
		}
	}
	return out
}
