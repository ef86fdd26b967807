package campaign

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/model"
)

// A Target is what scenarios run against: the reference implementation, a
// planted bug, or (package realrun, through verify) a real backend. The seed
// loop, the shrinker and the saver are written against it, so a third party
// plugs in its own by implementing these two methods.
type Target interface {
	// Implementation is the name a scenario records for it (the scenario's
	// "implementation" field): "reference", "mutant:NAME", "backend:SPEC".
	Implementation() string
	// Run runs one scenario. A caller mistake or an unusable scenario is an
	// error; a misbehaving implementation is not (Judge decides that).
	Run(ctx context.Context, sc *Scenario) (*Execution, error)
}

// Execution is what running one scenario produced, whatever ran it.
type Execution struct {
	Scenario *Scenario
	// History is the recorded history (format v1, with fault records where
	// the runner provides them): what the clients saw — each op's call and,
	// where its answer arrived, its return and outcome.
	History *model.History
	// Store, when the runner has it, is the stores' own log of the same
	// run: every op a store applied, in the order it applied them, each
	// with its outcome at the instant it was applied (call = return = at),
	// whatever became of the client's answer; an op's Line is its line in
	// History. A write the client gave up on (its context ended, its answer
	// was lost) is unknown in History — it may never have happened — and
	// definite here. When set, it is judged too (JudgeExecution), on the
	// properties of what the world did (StoreProperties), and a violation
	// says which of the two it comes from (Violation.View).
	Store *model.History
	// Sim is the simulator's result (trace, liveness measurements, stats)
	// when the simulator ran it; nil for a real backend. The run properties
	// (package runprop) are judged only when it is set.
	Sim *sim.Result
	// Faults counts the faults injected, by kind; Partial those applied in
	// part or not at all (a real runner's: their records say what was
	// skipped), never counted in Faults.
	Faults  map[faults.Kind]int
	Partial map[faults.Kind]int
	// Beliefs are the holders' belief intervals when the runner recorded
	// them itself (a real run); a simulated run's come from its trace.
	Beliefs []Belief
	// FirstError, when the runner can tell it, is the first request of the
	// run that failed, as the runner saw it (a virtual-time client's: the
	// request, its content type and the server's answer). A campaign that
	// exercised nothing gives it as the cause (Summary.Unexercised); ""
	// lets the history's first refused op stand for it.
	FirstError string
	// Notes, when the driver sets it, gives its account of the run in its
	// users' terms (DomainNotes), for the story of a failure: a function,
	// so that only an outcome that is told pays for it.
	Notes func(*Outcome) *DomainNotes
}

// partialWhy is the detail of r's first fault record of kind k applied in
// part or not at all: why it did not strike.
func (r *Execution) partialWhy(k faults.Kind) string {
	for _, f := range r.History.Faults {
		if f.Partial && f.Kind == string(k) {
			return f.Detail
		}
	}
	return ""
}

// firstError is r's FirstError, or else its history's first op refused
// with an error or never answered.
func (r *Execution) firstError() string {
	if r.FirstError != "" {
		return r.FirstError
	}
	for i := range r.History.Ops {
		if op := &r.History.Ops[i]; op.Error != "" || !op.Returned {
			return fmt.Sprintf("line %d: %s", op.Line, op.Describe())
		}
	}
	return ""
}

// grants counts the acquires granted in r: as the stores' log says where
// there is one, else as the answers said.
func (r *Execution) grants() int64 {
	h := r.History
	if r.Store != nil {
		h = r.Store // every op answered, when it was applied
	}
	var n int64
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == model.Acquire && op.OK && op.Returned {
			n++
		}
	}
	return n
}

// Ops is how many operations the run recorded.
func (r *Execution) Ops() int { return len(r.History.Ops) }

// writes counts the writes the run recorded (accepted, refused or never
// answered): a run whose operations are all lease traffic wrote nothing.
func (r *Execution) writes() int64 {
	var n int64
	for i := range r.History.Ops {
		if r.History.Ops[i].Kind == model.Write {
			n++
		}
	}
	return n
}

// Simulated runs scenarios in the deterministic simulator (package sim)
// against the reference implementation or one planted bug.
type Simulated struct {
	mutant *mutants.Mutant // nil: the reference
}

// Reference is the reference coordinator, resource and holder in the
// simulator.
func Reference() *Simulated { return &Simulated{} }

// Mutant is planted bug m in the simulator (the rest is the reference).
func Mutant(m *mutants.Mutant) *Simulated { return &Simulated{mutant: m} }

// Implementation implements Target: "reference" or "mutant:NAME".
func (s *Simulated) Implementation() string {
	if s.mutant == nil {
		return ImplReference
	}
	return mutantPrefix + s.mutant.Name
}

// Mutant returns the planted bug, or nil for the reference.
func (s *Simulated) Mutant() *mutants.Mutant { return s.mutant }

// Run implements Target.
func (s *Simulated) Run(_ context.Context, sc *Scenario) (*Execution, error) {
	var opts *sim.Options
	if s.mutant != nil {
		opts = sim.Planted(s.mutant)
	}
	r, err := sim.Run(sc, opts)
	if err != nil {
		return nil, err
	}
	return &Execution{Scenario: sc, History: r.History, Sim: r, Faults: r.Stats.Faults}, nil
}

// Control returns the target a counterexample must pass for the failure to
// be the planted bug's and not the scenario's: the reference for a mutant,
// nil for the reference itself.
func (s *Simulated) Control() Target {
	if s.mutant == nil {
		return nil
	}
	return Reference()
}

// Generator returns the scenario generator of a campaign against s with
// fault kinds kinds: scenario.FromSeed, and for a mutant its generator
// options (per-kind cap, quiet network) and environment (mutants.Mutant.Adapt).
// For a mutant, nil kinds means the mutant's own fault kinds. Each scenario
// records the implementation and the fault kinds, so a saved one replays
// with no other flag.
func (s *Simulated) Generator(kinds []faults.Kind) func(seed uint64) *Scenario {
	opts := scenario.Options{Kinds: kinds}
	if m := s.mutant; m != nil {
		opts = m.ScenarioOptions()
		if kinds != nil {
			opts.Kinds = kinds
		}
	}
	impl := s.Implementation()
	return func(seed uint64) *Scenario {
		sc := scenario.FromSeed(seed, opts)
		if s.mutant != nil {
			s.mutant.Adapt(sc)
		}
		sc.Implementation = impl
		sc.FaultKinds = opts.Kinds
		return sc
	}
}

// Names of implementations in a scenario's "implementation" field.
const (
	ImplReference = "reference"
	mutantPrefix  = "mutant:"
	backendPrefix = "backend:"
)

// ErrBackend is wrapped by ParseTarget for "backend:SPEC": a real backend is
// replayed by verify (leasecheck verify --scenario FILE), not here.
var ErrBackend = errors.New("a real backend is replayed by leasecheck verify --scenario")

// ParseTarget returns the simulated target a scenario's implementation
// field names: "" or "reference", or "mutant:NAME". "backend:SPEC" is an
// error wrapping ErrBackend; anything else an error naming the known forms.
func ParseTarget(impl string) (*Simulated, error) {
	switch {
	case impl == "" || impl == ImplReference:
		return Reference(), nil
	case strings.HasPrefix(impl, mutantPrefix):
		name := strings.TrimPrefix(impl, mutantPrefix)
		m := mutants.ByName(name)
		if m == nil {
			return nil, fmt.Errorf("implementation %q: unknown mutant %q (known: %s)", impl, name, strings.Join(mutants.Names(), ", "))
		}
		return Mutant(m), nil
	case strings.HasPrefix(impl, backendPrefix):
		return nil, fmt.Errorf("implementation %q: %w", impl, ErrBackend)
	}
	return nil, fmt.Errorf("implementation %q: want \"reference\", \"mutant:NAME\" or \"backend:SPEC\"", impl)
}
