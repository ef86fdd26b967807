package scenario

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/faultgen"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/liveness"
)

// Chooser is the one source of nondeterminism a scenario is drawn from (the
// simulator's Chooser has the same method): a value in [lo, hi], named by
// label so rapid can show it.
type Chooser interface {
	Int64(lo, hi int64, label string) int64
}

// Seeded is a Chooser over a PCG stream (math/rand/v2): the same seed
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
	// parameters were drawn, for measurements that compare with it.
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
func Generate(c Chooser, o Options) *Scenario {
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
	env := faultgen.Env{Horizon: s.Horizon, TTL: s.TTL, RhoPPM: s.RhoPPM, Holders: s.Names(), Fenced: s.Semantics == "fenced-storage"}
	s.Faults = faultgen.Generate(c, env, o.Kinds, maxPer, o.ForceAll)
	if !o.WellBehaved {
		// Drawn after everything above, so a seed's holders, programs and
		// faults are what they were before these draws existed.
		quiet := c.Int64(0, 7, "quiet?") == 0
		if !drawParameters(c, s) {
			drawShape(c, s)
		}
		if quiet {
			// An eighth of the scenarios keep only the faults under which
			// the liveness bounds must hold, on a network that loses
			// nothing: where recovery and handoff are judged.
			s.Faults = slices.DeleteFunc(s.Faults, func(f faults.Fault) bool { return !slices.Contains(liveness.FaultKinds, f.Kind) })
			s.Network.DropPPM = 0
		}
		if !o.Clean && !quiet {
			drawClients(c, s)
			drawEdgeClient(c, s)
		}
		kinds := o.Kinds
		if quiet {
			kinds = liveness.FaultKinds
		}
		drawAimed(c, s, o.Kinds, kinds)
	}
	return s
}

// drawAimed adds, to half the scenarios, one fault aimed at the end of
// the first holder's program, when its last write is answered and its
// release sent: a fault timed to a step in flight that the plan's
// uniform instants rarely meet (a delay, a freeze or an owner reuse
// while a release or the last write is on its way). The pair model
// (package pairs) counts what the first 2,000 seeds reach with it. It is
// drawn last, so a seed's scenario is what it was before but for this
// fault.
func drawAimed(c Chooser, s *Scenario, kinds, allowed []faults.Kind) {
	var ks []faults.Kind
	for _, k := range kinds {
		// Drifts are left out: a boundary or tick-handoff world keeps its
		// clocks at their bounds; an offset holds from the start.
		if k != faults.ClockOffset && k != faults.ClockDrift && slices.Contains(allowed, k) {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 || c.Int64(0, 1, "aimed?") != 0 {
		return
	}
	k := ks[c.Int64(0, int64(len(ks)-1), "aimed-kind")]
	// The first holder: the one least likely to wait for the lease, so
	// that its program's end is nearest the instant aimed at.
	p := &s.Holders[0]
	end := p.Start
	for _, it := range p.Work {
		end += it.Work
	}
	env := faultgen.Env{Horizon: s.Horizon, TTL: s.TTL, RhoPPM: s.RhoPPM, Holders: []string{p.Name}, Fenced: s.Semantics == "fenced-storage"}
	f := faultgen.One(c, env, k)
	f.At = min(end+c.Int64(0, s.TTL/2, "aimed-at"), s.Horizon-1)
	s.Faults = append(s.Faults, f).Sorted()
}

// drawParameters draws the protocol's parameters instead of fixing them
// (docs/design.md §7): each holder's renew interval (sometimes close to the TTL
// or past it), deadline margin (sometimes none), the drift bound it is told
// (sometimes less than the truth), and the drift actually applied to every
// clock, often at the very bound, where a wrong accounting shows. Networks
// sometimes have one delay only, and simultaneous events sometimes run in a
// drawn order, so that ties are common and every order of them is met.
func drawParameters(c Chooser, s *Scenario) (exact bool) {
	ttl := s.TTL
	if c.Int64(0, 3, "wide-rho?") == 0 {
		// A wide drift bound, where a wrong account of drift costs
		// milliseconds, not fractions of one. (The fault plan's drifts,
		// drawn within the narrower bound, stay within it.)
		s.RhoPPM = c.Int64(s.RhoPPM, 100_000, "wide-rho")
	}
	// A quarter of the scenarios are the adversarial extreme as a whole:
	// every holder's clock slow at the bound and the coordinator's fast,
	// and no deadline margin anywhere, where any error in the deadline's
	// arithmetic shows; the others draw each clock and margin on its own.
	extreme := c.Int64(0, 3, "extreme?") == 0
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
		if extreme {
			p.DriftPPM, p.Margin = -s.RhoPPM, holder.NoMargin
		}
	}
	s.CoordinatorDriftPPM = edge("coordinator-drift")
	if extreme {
		s.CoordinatorDriftPPM = s.RhoPPM
	}
	if c.Int64(0, 7, "fixed-delay?") == 0 {
		s.Network.MaxDelay = s.Network.MinDelay // lockstep: ties everywhere
	}
	s.Network.ShuffleTies = c.Int64(0, 1, "shuffle-ties?") == 1
	if c.Int64(0, 7, "boundary?") == 0 {
		boundary(c, s)
		return true
	}
	return false
}

// drawShape gives two thirds of the scenarios one workload shape at its
// extreme, each shape as often as the others: the shapes where lease bugs
// live and a uniform draw of every dimension at once rarely lines up.
// Together with one fault of the plan, a bug that needs one of them shows
// within a couple of thousand seeds.
//
//   - writes per grant: every item two or three writes in quick succession
//     (a re-check skipped between writes under one grant shows), or a
//     reader reading several times per lease term beside a holder
//     writing three times;
//   - renew interval: short (below a quarter of the TTL and the request
//     timeout: renewals overlap their own answers) or long (half to two
//     thirds of the TTL, past the request timeout), on a holder whose work
//     outlasts the TTL so that it renews at all;
//   - message delay: none at all, or longer than the request timeout (a
//     request still in flight past its sender's giving up, an answer that
//     lands after the deadline it extends);
//   - clocks at their bounds: a wide drift bound, every clock drifting at
//     it in a drawn direction, messages with no delay (nothing but the
//     drift between a deadline and an expiry);
//   - three holders at least: a handoff that skips or repeats a holder;
//   - a handoff on the exact tick (tickHandoff): no delay, no margin,
//     clocks at opposite bounds, the lease changing hands at every
//     expiry.
func drawShape(c Chooser, s *Scenario) {
	ttl := s.TTL
	timeout := holder.Config{TTL: ttl}.WithDefaults().Timeout
	long := func() { // a first holder whose work outlasts the TTL: it must renew
		w := &s.Holders[0].Work[0]
		if w.Work < ttl {
			extra := c.Int64(ttl, 2*ttl, "shape-long-work")
			s.Horizon += extra - w.Work
			w.Work = extra
		}
	}
	switch c.Int64(0, 11, "shape") {
	case 0:
		for i := range s.Holders {
			for j := range s.Holders[i].Work {
				w := &s.Holders[i].Work[j]
				w.Writes = int(c.Int64(2, 3, "shape-writes"))
				w.Work = c.Int64(0, max(ttl/10, 1), "shape-write-work")
			}
		}
	case 1:
		s.ReadEvery = c.Int64(max(ttl/10, 1), max(ttl/4, 1), "shape-read-every")
		s.Holders[0].Work[0].Writes = 3
	case 2:
		long()
		every := c.Int64(max(ttl/8, 1), max(ttl/5, 1), "shape-short-renew")
		for i := range s.Holders {
			s.Holders[i].RenewEvery = every
		}
	case 3:
		long()
		every := c.Int64(ttl/2, 2*ttl/3, "shape-long-renew")
		for i := range s.Holders {
			s.Holders[i].RenewEvery = every
		}
	case 4:
		s.Network.MinDelay, s.Network.MaxDelay = 0, 0
	case 5:
		long()
		s.Network.MaxDelay = timeout + c.Int64(1, max(ttl/6, 1), "shape-slow-delay")
	case 6:
		s.RhoPPM = c.Int64(20_000, 100_000, "shape-rho")
		s.Network.MinDelay, s.Network.MaxDelay = 0, 0
		sign := func(label string) int64 {
			if c.Int64(0, 1, label) == 0 {
				return -s.RhoPPM
			}
			return s.RhoPPM
		}
		for i := range s.Holders {
			s.Holders[i].DriftPPM = sign("shape-drift")
		}
		s.CoordinatorDriftPPM = sign("shape-coordinator-drift")
		long()
	case 8:
		tickHandoff(c, s)
	case 7:
		for len(s.Holders) < 3 {
			p := Process{Name: "h" + strconv.Itoa(len(s.Holders)+1), Start: c.Int64(0, ttl, "shape-start")}
			p.Work = []holder.Item{{Work: c.Int64(0, ttl/2, "shape-work"), Writes: int(c.Int64(1, 2, "shape-writes"))}}
			s.Holders = append(s.Holders, p)
			s.Horizon += 3 * ttl
		}
	}
}

// tickHandoff makes the world where a holder's deadline arithmetic has no
// slack left, so that an error of one tick in it (a deadline met with >
// instead of >=, the drift's share rounded down, the coordinator's clock
// resolution left out) is an overlap of two beliefs: no margin anywhere, no
// message delay, every holder's clock slow at the drift bound and the
// coordinator's fast at it, and a drift bound whose share of the TTL,
// 2ρ·TTL, is just under a whole number of ticks (rounding it up then
// leaves the least slack). Every holder renews later than its deadline,
// so each term ends at a deadline and the lease changes hands at an
// expiry, again and again with the clocks' fractions of a tick drifting
// through their phases; the second and third holders start on the first
// expiry, give or take a tick, and keep asking.
func tickHandoff(c Chooser, s *Scenario) {
	ttl := s.TTL
	// 2ρ·TTL = k + f ticks with f in [0.7, 1), within the 10% bound.
	share := c.Int64(0, 2, "tick-share")*1_000_000 + c.Int64(700_000, 999_999, "tick-fraction")
	if share/(2*ttl) > 100_000 {
		share %= 1_000_000
	}
	rho := share / (2 * ttl)
	s.RhoPPM, s.CoordinatorDriftPPM = rho, rho
	s.Network.MinDelay, s.Network.MaxDelay = 0, 0
	expiry := ttl * 1_000_000 / (1_000_000 + rho) // the first lease's end in true time
	for len(s.Holders) < 2 {
		s.Holders = append(s.Holders, Process{Name: "h" + strconv.Itoa(len(s.Holders)+1)})
	}
	for i := range s.Holders {
		p := &s.Holders[i]
		p.Margin, p.DriftPPM, p.RhoPPM = holder.NoMargin, -rho, nil
		p.RenewEvery = c.Int64(ttl, ttl+ttl/4, "tick-renew-every")
		p.Work = []holder.Item{{Work: c.Int64(ttl, 3*ttl, "tick-work"), Writes: 1}}
		if i > 0 {
			p.Start = max(s.Holders[0].Start+expiry+c.Int64(-2, 1, "tick-start"), 0)
		}
	}
	s.Horizon = max(s.Horizon, int64(4+4*len(s.Holders))*ttl+s.Holders[0].Start)
	// A drift fault would take the clocks off their bounds.
	s.Faults = slices.DeleteFunc(s.Faults, func(f faults.Fault) bool { return f.Kind == faults.ClockDrift })
}

// boundary makes an eighth of the scenarios a world of exact instants: a
// lockstep network, clocks that do not drift, no margins, and renew
// intervals whose answer lands on the very tick of the holder's deadline,
// where the order of two simultaneous events decides (which order runs
// first is drawn). Random timings almost never meet such an instant; the
// explorer meets every one within its bounds.
func boundary(c Chooser, s *Scenario) {
	d := c.Int64(2, max(2, s.TTL/12), "boundary-delay")
	s.Network.MinDelay, s.Network.MaxDelay = d, d
	s.Network.ShuffleTies = true
	s.CoordinatorDriftPPM, s.RhoPPM = 0, 0
	s.Faults = slices.DeleteFunc(s.Faults, func(f faults.Fault) bool { return f.Kind == faults.ClockDrift })
	span := s.TTL - 1 // holder.Config's deadline with no drift and no margin
	for i := range s.Holders {
		p := &s.Holders[i]
		p.Margin, p.DriftPPM, p.RhoPPM = holder.NoMargin, 0, nil
		if span-2*d >= 1 {
			p.RenewEvery = span - 2*d
		}
		// Hold long enough to renew, while the others wait.
		p.Work[len(p.Work)-1].Work += 2 * s.TTL
		s.Horizon += 2 * s.TTL
	}
}

// drawClients adds, to a third of the scenarios, an adversarial client
// (scenario.Client) that sends a few requests of the adversary's menu at
// drawn times: the requests a well-behaved holder never sends.
func drawClients(c Chooser, s *Scenario) {
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
		switch c.Int64(0, 3, "after?") { // half react to what they see
		case 0:
			r.After = "release"
		case 1:
			r.After = "grant"
		}
		if r.Op == "write" && r.Fence == "replay" && c.Int64(0, 1, "replay-after-release?") == 0 {
			r.After = "release" // a duplicate of the releaser's last write, just after its release
		}
		cl.Requests = append(cl.Requests, r)
	}
	s.Clients = []Client{cl}
}

// EdgeClientName is the process name of drawEdgeClient's client.
const EdgeClientName = "e1"

// drawEdgeClient adds, to a third of the scenarios it is drawn for, a
// client that aims requests at the exact instants where a coordinator's
// decisions flip: it acquires the lease for itself and then, on a network
// of one fixed delay, sends a
// renew, a write or an acquire that reaches the coordinator on its own
// lease's expiry tick, one tick before or one after; or releases its lease
// and writes under the released fence. Random timings almost
// never line an operation up with the tick (a freeze had to, before); an
// off-by-one in any single operation's expiry comparison is met in a few
// dozen seeds.
func drawEdgeClient(c Chooser, s *Scenario) {
	if c.Int64(0, 2, "edge?") != 0 {
		return
	}
	d := s.Network.MinDelay
	s.Network.MaxDelay = d
	// The coordinator's lease clock runs CoordinatorDriftPPM fast: its TTL
	// lasts ttl·10^6/(10^6+ppm) of true time (the client's timers), to
	// within the tick the three aims around it cover. (A fault that steps
	// or stops the coordinator's clock moves the aim: those stay, for what
	// they test themselves.)
	ttl := s.TTL * 1_000_000 / (1_000_000 + s.CoordinatorDriftPPM)
	probes := []ClientRequest{{Op: "renew"}, {Op: "acquire"}, {Op: "acquire", Owner: s.Holders[0].Name}}
	if s.Semantics == "seed" { // writes are checked against the expiry only here: twice as often
		probes = append(probes, ClientRequest{Op: "write", Fence: "current"}, ClientRequest{Op: "write", Fence: "current"})
	}
	cl := Client{Name: EdgeClientName}
	var at int64
	for range c.Int64(1, 3, "edge-probes") {
		at = c.Int64(at, max(s.Horizon*3/4, at), "edge-at")
		// Half ask right after a release, when the lease is most likely free.
		acq := ClientRequest{At: at, Op: "acquire"}
		if c.Int64(0, 1, "edge-after-release?") == 0 {
			acq.After = "release"
		}
		cl.Requests = append(cl.Requests, acq)
		// Granted at the coordinator at t, answered at t+d: sent at
		// t+TTL-d+k it arrives at the expiry plus k.
		tick := max(ttl-2*d+c.Int64(-1, 1, "edge-tick"), 0)
		if s.Semantics == "seed" && c.Int64(0, 3, "edge-release?") == 0 {
			// The other edge of a lease's life: its own release, then a
			// write under the fence it released, before the expiry.
			rel := min(tick/2, max(tick-2*d-1, 0))
			cl.Requests = append(cl.Requests, ClientRequest{At: at, Op: "release", After: "acquired", Delay: rel},
				ClientRequest{At: at, Op: "write", Fence: "current", After: "acquired", Delay: rel + 2*d + 1})
			continue
		}
		r := probes[c.Int64(0, int64(len(probes)-1), "edge-probe")]
		r.At, r.After, r.Delay = at, "acquired", tick
		cl.Requests = append(cl.Requests, r)
	}
	s.Clients = append(s.Clients, cl)
	s.Horizon += 2 * s.TTL
}
