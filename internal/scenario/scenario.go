package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/model"
)

// Version is the scenario format version this package reads and writes.
const Version = 1

// Scenario is one simulated run, complete: replaying it gives the same
// history byte for byte. Times are simulated milliseconds.
type Scenario struct {
	Version int `json:"version"`
	// Seed seeds the run's PRNG (network delays, drops, duplicates).
	Seed      uint64 `json:"seed"`
	Semantics string `json:"semantics"` // "seed" or "fenced-storage"
	Key       string `json:"key"`
	TTL       int64  `json:"ttl"`
	// RhoPPM bounds every clock's drift, in parts per million.
	RhoPPM  int64 `json:"rho_ppm"`
	Horizon int64 `json:"horizon"` // the run stops here at the latest
	// MaxEvents bounds the run (0: DefaultMaxEvents).
	MaxEvents int64     `json:"max_events,omitempty"`
	Network   Network   `json:"network"`
	Holders   []Process `json:"holders"`
	// ReadEvery makes a reader process "r1" read the key this often (0: no reader).
	ReadEvery int64       `json:"read_every,omitempty"`
	Faults    faults.Plan `json:"faults"`

	// Implementation names what the scenario runs against, so that a saved
	// scenario replays with no other flag: "" or "reference" (the reference
	// coordinator, resource and holder), "mutant:NAME" (a planted bug of
	// internal/impl/mutants), "backend:SPEC" (a real backend, for verify --scenario).
	Implementation string `json:"implementation,omitempty"`
	// FaultKinds are the fault kinds the scenario was generated with (the
	// plan above is what it holds); informative, and what a re-generation
	// from Seed needs.
	FaultKinds []faults.Kind `json:"fault_kinds,omitempty"`
	// Expect lists the properties a replay must find violated (a saved
	// failure, a shrunk counterexample); empty means every property holds.
	// A scenario dropped into a regression folder is judged against it.
	Expect []string `json:"expect,omitempty"`

	// CoordinatorDriftPPM is the drift actually applied to the coordinator's
	// clock from the start (|value| <= RhoPPM); a clock-drift fault changes
	// it later. Holders' drifts are Process.DriftPPM.
	CoordinatorDriftPPM int64 `json:"coordinator_drift_ppm,omitempty"`
	// Clients are adversarial clients (clients.go): any operation with any
	// owner and fence, beside the well-behaved holders.
	Clients []Client `json:"clients,omitempty"`
	// Space, when set, makes the run enumerable (explore.go): every choice
	// is a small labelled choice point, and faults of Space.Faults and
	// adversarial requests may strike at any step.
	Space *Space `json:"space,omitempty"`
	// Schedule, when set, replays one explored path exactly: the recorded
	// value of each choice point, in order (explore.go).
	Schedule *Schedule `json:"schedule,omitempty"`
}

// DefaultMaxEvents bounds a run whose scenario does not say.
const DefaultMaxEvents = 2_000_000

// Network is the ambient network: every message is delayed uniformly in
// [MinDelay, MaxDelay], lost with probability DropPPM/1e6 and duplicated with
// probability DupPPM/1e6. Random delays reorder messages.
type Network struct {
	MinDelay int64 `json:"min_delay"`
	MaxDelay int64 `json:"max_delay"`
	DropPPM  int64 `json:"drop_ppm,omitempty"`
	DupPPM   int64 `json:"dup_ppm,omitempty"`
	// ShuffleTies draws which of several events due at the same instant
	// runs first (a labelled "order" choice); without it they run in the
	// order they were scheduled.
	ShuffleTies bool `json:"shuffle_ties,omitempty"`
}

// Process is one holder: its name (also its first owner identity), when it
// starts and its work program. Protocol timings default from the TTL
// (holder.Config.WithDefaults) unless set.
type Process struct {
	Name     string        `json:"name"`
	Start    int64         `json:"start,omitempty"`
	Work     []holder.Item `json:"work"`
	Timeout  int64         `json:"timeout,omitempty"`
	RetryMax int64         `json:"retry_max,omitempty"`
	// RenewEvery is the renew interval (0: TTL/3); it may be set close to
	// or above the TTL, a misconfiguration the article warns of.
	RenewEvery int64 `json:"renew_every,omitempty"`
	// Margin is the deadline safety margin (0: TTL/10; holder.NoMargin, -1,
	// for none).
	Margin int64 `json:"margin,omitempty"`
	// RhoPPM, when set, is the clock-drift bound the holder is told, which
	// may be smaller than the scenario's true bound RhoPPM (nil: the truth).
	RhoPPM *int64 `json:"rho_ppm,omitempty"`
	// DriftPPM is the drift actually applied to the holder's clock from the
	// start (|value| <= the scenario's RhoPPM).
	DriftPPM int64 `json:"drift_ppm,omitempty"`
}

// ToldRho returns the clock-drift bound holder p is configured with.
func (s *Scenario) ToldRho(p *Process) int64 {
	if p.RhoPPM != nil {
		return *p.RhoPPM
	}
	return s.RhoPPM
}

// Misinformed reports whether some holder is told a smaller drift bound
// than the truth (its deadline may then outlive the lease; docs/design.md §7).
func (s *Scenario) Misinformed() bool {
	for i := range s.Holders {
		if s.ToldRho(&s.Holders[i]) < s.RhoPPM {
			return true
		}
	}
	return false
}

// Names returns the holders' names in order.
func (s *Scenario) Names() []string {
	n := make([]string, len(s.Holders))
	for i, p := range s.Holders {
		n[i] = p.Name
	}
	return n
}

// Sem returns the scenario's storage semantics.
func (s *Scenario) Sem() model.Semantics {
	sem, _ := model.ParseSemantics(s.Semantics)
	return sem
}

// Validate reports the first reason s cannot be run.
func (s *Scenario) Validate() error {
	if s.Version != Version {
		return fmt.Errorf("scenario: version %d not supported (want %d)", s.Version, Version)
	}
	if _, ok := model.ParseSemantics(s.Semantics); !ok {
		return fmt.Errorf("scenario: unknown semantics %q", s.Semantics)
	}
	if s.TTL <= 0 || s.Horizon <= 0 {
		return fmt.Errorf("scenario: ttl and horizon must be > 0")
	}
	// Up to a clock twice as fast as true time: client-go's leader election
	// documents its tolerance as a ratio of clock rates, 2 in its example.
	if s.RhoPPM < 0 || s.RhoPPM > 1_000_000 {
		return fmt.Errorf("scenario: rho_ppm %d outside [0, 1000000]", s.RhoPPM)
	}
	if s.MaxEvents < 0 {
		return fmt.Errorf("scenario: negative max_events")
	}
	n := s.Network
	if n.MinDelay < 0 || n.MaxDelay < n.MinDelay || n.DropPPM < 0 || n.DropPPM > 1_000_000 || n.DupPPM < 0 || n.DupPPM > 1_000_000 {
		return fmt.Errorf("scenario: bad network %+v", n)
	}
	if len(s.Holders) == 0 {
		return fmt.Errorf("scenario: no holders")
	}
	seen := map[string]bool{"r1": true}
	for _, p := range s.Holders {
		if p.Name == "" || seen[p.Name] || p.Name == faults.Coordinator || p.Name == faults.Resource {
			return fmt.Errorf("scenario: holder name %q empty, reserved or repeated", p.Name)
		}
		seen[p.Name] = true
		if p.Start < 0 || p.Timeout < 0 || p.RetryMax < 0 || p.RenewEvery < 0 || p.Margin < holder.NoMargin {
			return fmt.Errorf("scenario: holder %s: negative time", p.Name)
		}
		if p.RhoPPM != nil && (*p.RhoPPM < 0 || *p.RhoPPM > 100_000) {
			return fmt.Errorf("scenario: holder %s: rho_ppm %d outside [0, 100000]", p.Name, *p.RhoPPM)
		}
		if p.DriftPPM > s.RhoPPM || p.DriftPPM < -s.RhoPPM || p.DriftPPM <= -1_000_000 {
			return fmt.Errorf("scenario: holder %s: drift_ppm %d beyond rho_ppm %d", p.Name, p.DriftPPM, s.RhoPPM)
		}
		for _, it := range p.Work {
			if it.Work < 0 || it.Writes < 0 {
				return fmt.Errorf("scenario: holder %s: negative work", p.Name)
			}
		}
	}
	if s.ReadEvery < 0 {
		return fmt.Errorf("scenario: negative read_every")
	}
	if s.CoordinatorDriftPPM > s.RhoPPM || s.CoordinatorDriftPPM < -s.RhoPPM || s.CoordinatorDriftPPM <= -1_000_000 {
		return fmt.Errorf("scenario: coordinator_drift_ppm %d beyond rho_ppm %d", s.CoordinatorDriftPPM, s.RhoPPM)
	}
	if err := s.validateClients(seen); err != nil {
		return err
	}
	if err := s.validateSpace(); err != nil {
		return err
	}
	for i, f := range s.Faults {
		if f.Kind == faults.ClockDrift && f.Amount <= -1_000_000 {
			return fmt.Errorf("scenario: fault %d: a drift of %d ppm stops or reverses the clock", i, f.Amount)
		}
		if f.Kind == faults.ClockOffset && f.At != 0 {
			return fmt.Errorf("scenario: fault %d: clock-offset applies from the start (at must be 0); use clock-step", i)
		}
	}
	return s.Faults.Validate(s.Names(), s.RhoPPM)
}

// Marshal renders s as indented JSON with a trailing newline.
func (s *Scenario) Marshal() []byte {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return append(b, '\n')
}

// Save writes s to path.
func (s *Scenario) Save(path string) error { return os.WriteFile(path, s.Marshal(), 0o644) }

// Read parses and validates a scenario; unknown fields are errors.
func Read(r io.Reader) (*Scenario, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse parses and validates a scenario from JSON.
func Parse(b []byte) (*Scenario, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var s Scenario
	if err := d.Decode(&s); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Load reads a scenario file.
func Load(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
