package scenario

import (
	"math/rand/v2"
	"strconv"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/holder"
)

// Seeded is a faults.Chooser over a PCG stream (math/rand/v2): the same seed
// and stream give the same choices on every platform.
type Seeded struct{ r *rand.Rand }

// NewSeeded returns the chooser for (seed, stream).
func NewSeeded(seed, stream uint64) *Seeded { return &Seeded{rand.New(rand.NewPCG(seed, stream))} }

// Int64 returns a value in [lo, hi] (lo when hi <= lo).
func (s *Seeded) Int64(lo, hi int64, _ string) int64 {
	if hi <= lo {
		return lo
	}
	return lo + s.r.Int64N(hi-lo+1)
}

// Stream numbers: generation and the run draw from separate PCG streams of
// the same seed, so editing a scenario file does not shift the network's
// choices.
const (
	StreamGenerate uint64 = 0x6c65617365 // "lease"
	StreamRun      uint64 = 0x73696d     // "sim"
)

// Options shape generated scenarios. The zero value means the defaults.
type Options struct {
	// Kinds are the fault kinds to draw from (nil: none).
	Kinds []faults.Kind
	// MaxPerKind caps each kind's count (0: 2).
	MaxPerKind int
	// ForceAll puts every kind in Kinds in every scenario at least once.
	ForceAll bool
	// Clean draws a quiet network: no loss, no duplicates, and no
	// adversarial client (the liveness properties are judged only there).
	Clean bool
	// WellBehaved draws only well-behaved holders with the default
	// protocol parameters and no adversarial client: the workload before
	// issue 11, for measurements that compare with it.
	WellBehaved bool
}

// FromSeed generates the scenario for seed: every choice comes from the
// seed's generation stream, and the scenario's Seed is seed.
func FromSeed(seed uint64, o Options) *Scenario {
	s := Generate(NewSeeded(seed, StreamGenerate), o)
	s.Seed = seed
	return s
}

// Generate draws a scenario from c. Its Seed is drawn too (callers such as
// FromSeed may overwrite it).
func Generate(c faults.Chooser, o Options) *Scenario {
	s := &Scenario{Version: Version, Semantics: "seed", Key: "k"}
	s.Seed = uint64(c.Int64(0, 1<<53, "seed"))
	if c.Int64(0, 1, "fenced") == 1 {
		s.Semantics = "fenced-storage"
	}
	s.TTL = c.Int64(30, 200, "ttl")
	s.RhoPPM = c.Int64(0, 20_000, "rho_ppm")
	s.Network.MinDelay = c.Int64(0, 3, "min_delay")
	s.Network.MaxDelay = c.Int64(s.Network.MinDelay, s.Network.MinDelay+s.TTL/12, "max_delay")
	if c.Int64(0, 31, "slow-network?") == 0 {
		// The article's sixth failure mode: a TTL not far above the
		// round trip, so ownership flaps.
		s.Network.MaxDelay = c.Int64(s.TTL/6, s.TTL/3, "slow-max-delay")
	}
	if !o.Clean {
		s.Network.DropPPM = c.Int64(0, 30_000, "drop_ppm")
		s.Network.DupPPM = c.Int64(0, 30_000, "dup_ppm")
	}
	n := c.Int64(1, 4, "holders")
	var total int64
	for i := int64(0); i < n; i++ {
		p := Process{Name: "h" + strconv.FormatInt(i+1, 10)}
		p.Start = c.Int64(0, s.TTL, "start")
		items := c.Int64(1, 3, "items")
		for j := int64(0); j < items; j++ {
			it := holder.Item{Work: c.Int64(0, s.TTL/2, "work"), Writes: int(c.Int64(0, 3, "writes"))}
			if c.Int64(0, 7, "long?") == 0 {
				it.Work = c.Int64(s.TTL, 3*s.TTL, "long-work") // outlasts the TTL
			}
			total += it.Work + s.TTL/2
			p.Work = append(p.Work, it)
		}
		s.Holders = append(s.Holders, p)
	}
	if c.Int64(0, 2, "reader?") > 0 {
		s.ReadEvery = c.Int64(s.TTL/2, 2*s.TTL, "read_every")
	}
	// Long enough for every program to finish after a few faults.
	s.Horizon = 4*s.TTL + total + int64(len(s.Holders))*2*s.TTL
	maxPer := o.MaxPerKind
	if maxPer <= 0 {
		maxPer = 2
	}
	env := faults.Env{Horizon: s.Horizon, TTL: s.TTL, RhoPPM: s.RhoPPM, Holders: s.Names(), Fenced: s.Semantics == "fenced-storage"}
	s.Faults = faults.Generate(c, env, o.Kinds, maxPer, o.ForceAll)
	if !o.WellBehaved {
		// Drawn after everything above, so a seed's holders, programs and
		// faults are what they were before these draws existed.
		drawParameters(c, s)
		if !o.Clean {
			drawClients(c, s)
		}
	}
	return s
}

// drawParameters draws the protocol's parameters instead of fixing them
// (DESIGN.md §7): each holder's renew interval (sometimes close to the TTL
// or past it), deadline margin (sometimes none), the drift bound it is told
// (sometimes less than the truth), and the drift actually applied to every
// clock, often at the very bound, where a wrong accounting shows. Networks
// sometimes have one delay only, and simultaneous events sometimes run in a
// drawn order, so that ties are common and every order of them is met.
func drawParameters(c faults.Chooser, s *Scenario) {
	ttl := s.TTL
	edge := func(label string) int64 { // a drift within rho, at its ends half the time
		switch c.Int64(0, 3, label+"?") {
		case 0:
			return s.RhoPPM
		case 1:
			return -s.RhoPPM
		case 2:
			return c.Int64(-s.RhoPPM, s.RhoPPM, label)
		}
		return 0
	}
	for i := range s.Holders {
		p := &s.Holders[i]
		switch c.Int64(0, 7, "renew-every?") {
		case 0:
			p.RenewEvery = c.Int64(max(ttl/6, 1), ttl/2, "renew-every")
		case 1:
			p.RenewEvery = c.Int64(ttl/2, ttl+ttl/4, "slow-renew-every") // near or past the deadline
		}
		switch c.Int64(0, 5, "margin?") {
		case 0:
			p.Margin = holder.NoMargin
		case 1:
			p.Margin = c.Int64(1, max(ttl/5, 1), "margin")
		}
		if s.RhoPPM > 0 && c.Int64(0, 7, "told-rho?") == 0 {
			told := c.Int64(0, s.RhoPPM/2, "told-rho") // a holder told less than the truth
			p.RhoPPM = &told
		}
		p.DriftPPM = edge("drift")
	}
	s.CoordinatorDriftPPM = edge("coordinator-drift")
	if c.Int64(0, 7, "fixed-delay?") == 0 {
		s.Network.MaxDelay = s.Network.MinDelay // lockstep: ties everywhere
	}
	s.Network.ShuffleTies = c.Int64(0, 1, "shuffle-ties?") == 1
}

// drawClients adds, to a third of the scenarios, an adversarial client
// (scenario.Client) that sends a few requests of the adversary's menu at
// drawn times: the requests a well-behaved holder never sends.
func drawClients(c faults.Chooser, s *Scenario) {
	if c.Int64(0, 2, "adversary?") != 0 {
		return
	}
	menu := AdversaryMenu(s.Semantics == "fenced-storage")
	n := c.Int64(1, 6, "requests")
	cl := Client{Name: AdversaryName}
	var at int64
	for range n {
		at = c.Int64(at, max(s.Horizon*3/4, at), "request-at")
		r := menu[c.Int64(0, int64(len(menu)-1), "request")]
		r.At = at
		cl.Requests = append(cl.Requests, r)
	}
	s.Clients = []Client{cl}
}
