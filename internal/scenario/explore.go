package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/leasecheck/leasecheck/faults"
)

// Space makes a run enumerable (docs/design.md §7): with it, every choice of the
// run is a labelled choice point over a few alternatives, alternative 0
// being the default:
//
//   - "next": which move runs at a step — one of the events due at the
//     earliest instant, a fault of Faults striking now (at most MaxFaults
//     in all), or the adversarial client's next request (at most Adversary
//     in all);
//   - "delay": a message's delay, one of MinDelay..MaxDelay;
//   - "drop" (when the network's DropPPM > 0): deliver or lose it;
//   - "dup" (when DupPPM > 0): deliver it once or twice.
//
// A run takes at most Deviations non-default network choices (a longer
// delay, a loss, a duplicate): the delay-bounded exploration of Emmi, Qadeer
// and Rakamarić (POPL 2011), which keeps long runs enumerable while every
// placement of the few deviations that expose a bug is still tried. Once
// they are spent, messages take the shortest delay and arrive once, and
// the run stops asking.
//
// The explorer (package explore) enumerates them; a Schedule records one
// path's values so that sim.Run replays it exactly.
type Space struct {
	// Faults are the kinds that may strike at any step, each with the
	// fixed parameters of faultgen.Candidates.
	Faults    []faults.Kind `json:"faults,omitempty"`
	MaxFaults int           `json:"max_faults,omitempty"`
	// Adversary bounds the adversarial client's requests (0: none); its
	// requests are the templates of AdversaryMenu.
	Adversary int `json:"adversary,omitempty"`
	// Deviations bounds the non-default network choices of a run.
	Deviations int `json:"deviations,omitempty"`
}

// AdversaryName is the process name of the explorer's adversarial client.
const AdversaryName = "x1"

// AdversaryMenu lists the requests the explorer's adversarial client may
// send at any step (Space.Adversary): the blind spots of a well-behaved
// workload. fenced drops the writes the threat model forbids
// under fenced storage (see Client).
func AdversaryMenu(fenced bool) []ClientRequest {
	m := []ClientRequest{
		{Op: "acquire"},
		{Op: "acquire", Owner: "live"},
		{Op: "renew"},
		{Op: "renew", Fence: "current"},
		{Op: "renew", Fence: "future"},
		{Op: "renew", Owner: "live", Fence: "future"},
		{Op: "release"},
		{Op: "release", Fence: "current"},
		{Op: "release", Owner: "live", Fence: "stale"},
		{Op: "release", Owner: "live", Fence: "future"},
		{Op: "release", Owner: "last", Fence: "replay"},
	}
	if fenced {
		return append(m, ClientRequest{Op: "write", Fence: "stale"},
			ClientRequest{Op: "write", Owner: "last", Fence: "replay"})
	}
	return append(m,
		ClientRequest{Op: "write", Fence: "current"},
		ClientRequest{Op: "write", Fence: "future"},
		ClientRequest{Op: "write", Owner: "live", Fence: "stale"},
		ClientRequest{Op: "write", Owner: "live", Fence: "future"},
		ClientRequest{Op: "write", Owner: "last", Fence: "replay"},
	)
}

// Schedule is one explored path: the value of every choice point, in the
// order the run met them, each written "label=value" (alternative 0 is the
// default, and a replay takes defaults once the list runs out). Steps, when
// > 0, stops the run after that many moves, so the replay ends where the
// explored path ended.
type Schedule struct {
	Choices []string `json:"choices"`
	Steps   int      `json:"steps,omitempty"`
}

// Choice is one parsed entry of a Schedule.
type Choice struct {
	Label string
	Value int
}

func (c Choice) String() string { return c.Label + "=" + strconv.Itoa(c.Value) }

// Parse returns the schedule's choices, or an error naming the bad entry.
func (s *Schedule) Parse() ([]Choice, error) {
	out := make([]Choice, 0, len(s.Choices))
	for i, e := range s.Choices {
		l, v, ok := strings.Cut(e, "=")
		n, err := strconv.Atoi(v)
		if !ok || l == "" || err != nil || n < 0 {
			return nil, fmt.Errorf("scenario: schedule choice %d %q: want label=N with N >= 0", i, e)
		}
		out = append(out, Choice{l, n})
	}
	return out, nil
}

// NewSchedule records choices (and the step count) as a Schedule.
func NewSchedule(cs []Choice, steps int) *Schedule {
	s := &Schedule{Choices: make([]string, len(cs)), Steps: steps}
	for i, c := range cs {
		s.Choices[i] = c.String()
	}
	return s
}

// Enumerable reports whether the run's choices are choice points (Space or
// Schedule set) rather than draws from the seeded PRNG.
func (s *Scenario) Enumerable() bool { return s.Space != nil || s.Schedule != nil }

func (s *Scenario) validateSpace() error {
	if sp := s.Space; sp != nil {
		if sp.MaxFaults < 0 || sp.Adversary < 0 || sp.Deviations < 0 {
			return fmt.Errorf("scenario: space: negative bound")
		}
		for _, k := range sp.Faults {
			if !slices.Contains(faults.AllKinds, k) {
				return fmt.Errorf("scenario: space: fault kind %q: not one the explorer injects (%v)", k, faults.AllKinds)
			}
		}
	}
	if sc := s.Schedule; sc != nil {
		if sc.Steps < 0 {
			return fmt.Errorf("scenario: schedule: negative steps")
		}
		if _, err := sc.Parse(); err != nil {
			return err
		}
	}
	return nil
}
