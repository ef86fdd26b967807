package mutants

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/machine"
)

// DefaultBudget is the seed budget of a mutant's detection search: every
// mutant must be caught within it (campaign.Detect, TestMutantsCaught).
const DefaultBudget = 500

// Components a mutant replaces.
const (
	Coordinator = "coordinator"
	Resource    = "resource"
	Holder      = "holder"
)

// Mutant is one planted bug: a small, named variant of the reference
// coordinator, resource or holder that breaks one rule of the article.
type Mutant struct {
	Name      string `json:"name"`
	Component string `json:"component"`
	// Failure is the failure mode, in a sentence.
	Failure string `json:"failure"`
	// Article is the sentence of the lease article the bug breaks (in its
	// original Chinese; docs/specification.md §1), and English its rendering.
	Article string `json:"article"`
	English string `json:"english"`
	// Property is the property expected to catch it: a checker property
	// (checker.Properties) or a run property (runprop.Properties).
	Property string `json:"property"`
	// Faults are the fault kinds the detection search injects: the ones
	// that expose this bug soonest. The reference passes the same scenarios.
	Faults []faults.Kind `json:"faults"`
	// PerKind caps each fault kind's count per scenario (0: the generator's
	// default, 2).
	PerKind int `json:"per_kind,omitempty"`
	// Semantics, when set, overrides the generated storage semantics.
	Semantics string `json:"semantics,omitempty"`
	// Clean asks for a quiet network (no loss, no duplicates): the
	// liveness properties are only judged there.
	Clean bool `json:"clean,omitempty"`
	// Environment, when set, describes how tune changes the generated
	// scenario: a mutant-specific environment for the detection search (the
	// reference runs in it too and must pass).
	Environment string `json:"environment,omitempty"`
	tune        func(*scenario.Scenario)
	// Story tells in two lines what goes wrong.
	Story string `json:"story"`
	// BlindSpot, when set, is the blind spot of the old harness (package doc)
	// this bug was planted for: 1 well-formed requests only, 2 constant
	// protocol parameters, 3 holder properties judged only for mutants,
	// 4 no exhaustive mode.
	BlindSpot int `json:"blind_spot,omitempty"`

	// explore, when set, overrides the bounds `leasecheck explore --mutant`
	// searches (ExploreBounds).
	explore *scenario.Bounds

	// The switches on the one implementation (memstore's coordinator and
	// resource, internal/impl/holder's protocol); exactly one is set.
	coord memstore.Bug
	res   memstore.Bug
	hold  holder.Bug
}

// Machines are the factories that plug a mutant in: its component's is
// set, the others are nil (the reference's). A driver builds its machines
// from them (the simulator's sim.Planted).
type Machines struct {
	NewCoordinator func() machine.Coordinator
	NewResource    func() machine.Resource
	NewHolder      func(holder.Config) machine.Holder
}

// Machines returns the factories that plug the mutant in.
func (m *Mutant) Machines() Machines {
	var p Machines
	switch m.Component {
	case Coordinator:
		bug := m.coord
		p.NewCoordinator = func() machine.Coordinator { return machine.ClockedCoordinator(memstore.WithBugs(bug)) }
	case Resource:
		bug := m.res
		p.NewResource = func() machine.Resource { return memstore.ResourceWithBugs(bug) }
	case Holder:
		bug := m.hold
		p.NewHolder = func(c holder.Config) machine.Holder {
			c.Bugs |= bug
			return holder.New(c)
		}
	}
	return p
}

// ScenarioOptions are the generator options of the mutant's detection search.
func (m *Mutant) ScenarioOptions() scenario.Options {
	return scenario.Options{Kinds: m.Faults, MaxPerKind: m.PerKind, Clean: m.Clean}
}

// Scenario generates the detection search's scenario for seed.
func (m *Mutant) Scenario(seed uint64) *scenario.Scenario {
	sc := scenario.FromSeed(seed, m.ScenarioOptions())
	m.Adapt(sc)
	return sc
}

// Adapt applies the mutant's semantics to a generated scenario.
func (m *Mutant) Adapt(sc *scenario.Scenario) {
	if m.Semantics != "" {
		sc.Semantics = m.Semantics
	}
	if m.tune != nil {
		m.tune(sc)
	}
}

// Implementation is the mutant's name in a scenario's implementation field
// ("mutant:NAME"), so a saved scenario replays against it with no other
// flag.
func (m *Mutant) Implementation() string { return "mutant:" + m.Name }

// ForImplementation returns the mutant a scenario's implementation field
// names: nil for "" or "reference", the mutant for "mutant:NAME". Any
// other value (a real backend's "backend:SPEC") is an error here: the
// simulator cannot run it.
func ForImplementation(impl string) (*Mutant, error) {
	switch {
	case impl == "" || impl == "reference":
		return nil, nil
	case strings.HasPrefix(impl, "mutant:"):
		name := strings.TrimPrefix(impl, "mutant:")
		if m := ByName(name); m != nil {
			return m, nil
		}
		return nil, fmt.Errorf("unknown mutant %q in implementation %q (known: %s)", name, impl, strings.Join(Names(), ", "))
	}
	return nil, fmt.Errorf("implementation %q cannot run in the simulator (want reference or mutant:NAME)", impl)
}

// ExploreBounds returns the mutant's explore bounds: its own fault kinds
// striking at most once, one message off the shortest delay, its
// semantics; a few mutants need more (ExploreBounds' overrides in the table).
func (m *Mutant) ExploreBounds() scenario.Bounds {
	if m.explore != nil {
		b := *m.explore
		if b.Semantics == "" {
			b.Semantics = m.Semantics
		}
		return b
	}
	b := scenario.Bounds{Faults: m.Faults, Deviations: 1, Semantics: m.Semantics}
	if len(m.Faults) > 0 {
		b.MaxFaults = 1
	}
	return b
}

// AdaptSpace applies the mutant's environment to an explored scenario
// (its semantics, and the tuning its detection search uses).
func (m *Mutant) AdaptSpace(sc *scenario.Scenario) { m.Adapt(sc) }

// ByName returns the mutant called name, or nil.
func ByName(name string) *Mutant {
	for i := range all {
		if all[i].Name == name {
			return &all[i]
		}
	}
	return nil
}

// All returns every mutant, in a fixed order.
func All() []*Mutant {
	out := make([]*Mutant, len(all))
	for i := range all {
		out[i] = &all[i]
	}
	return out
}

// Names returns the mutants' names in order.
func Names() []string {
	var s []string
	for i := range all {
		s = append(s, all[i].Name)
	}
	return s
}

// The article's sentences, quoted once.
const (
	artLease     = "租约由协调者给出一个截止时间，持有者在过期前续期，一旦过期，其他写方即可接手。"
	artLeaseEn   = "The coordinator sets a deadline; the holder renews before it expires; once it has expired, another writer may take over."
	artRecheck   = "每次写入都要同时复核持有者身份、截止时间和围栏号,因为上次续约之后租约可能已经易主。"
	artRecheckEn = "Every write must re-check the holder's identity, the deadline and the fencing token, for the lease may have changed hands since the last renewal."
	artIron      = "铁律只有一条:续约失败就停写。"
	artIronEn    = "There is one iron rule: when a renewal fails, stop writing."
	artGC        = "双方同时写入,最后写入者悄悄覆盖前者。"
	artGCEn      = "Both write at once, and the last writer silently overwrites the first."
	artClock     = "对策是缩短租约并限定整个系统的时钟不确定度,而不是信任任何一方的本地时钟。"
	artClockEn   = "The remedy is short leases and a bounded clock uncertainty for the whole system, never trust in any one party's local clock."
	artRace      = "代价是一个极窄的竞态窗口——慢速或已被分区的持有者，会误以为租约还在自己手上，而另一个写方已经开始写入。"
	artRaceEn    = "The price is a narrow race: a slow or partitioned holder believes it still holds the lease while another writer has already started writing."
	artFencing   = "这正是续签与 fencing(围栏)存在的意义：租约代码在每次写入之前，都要重新核实自己是否仍然有权。"
	artFencingEn = "This is what renewal and fencing are for: before every write, the lease code checks again that it still has the right."
)

// The adversary's explore bounds: one request of its menu at any step.
var adversarial = &scenario.Bounds{Adversary: 1}

// driftEnv is the detection environment of the drift bugs: clocks at the
// drift bound (the holders' slow, the coordinator's fast), a bound of at
// least 5%, no margin to hide an error, and a second holder to take over.
const driftEnv = "holders' clocks at -rho and the coordinator's at +rho, rho 10%, no deadline margins, at least two holders"

func driftTune(sc *scenario.Scenario) {
	sc.RhoPPM = 100_000
	if len(sc.Holders) == 1 {
		p := sc.Holders[0]
		p.Name, p.Start = "h2", p.Start+sc.TTL/2
		p.Work = slices.Clone(p.Work)
		sc.Holders = append(sc.Holders, p)
	}
	for i := range sc.Holders {
		sc.Holders[i].DriftPPM, sc.Holders[i].Margin, sc.Holders[i].RhoPPM = -sc.RhoPPM, holder.NoMargin, nil
	}
	sc.CoordinatorDriftPPM = sc.RhoPPM
}

// lastMomentEnv is last-moment-renew-from-reply's detection environment: a
// world where a renew's answer can land on the holder's deadline tick and
// be handled first.
const lastMomentEnv = "no drift, no deadline margins, delays of 1 to 4ms, simultaneous events in a drawn order, renewals every TTL-6ms, at least two holders working two TTLs"

func lastMomentTune(sc *scenario.Scenario) {
	sc.RhoPPM, sc.CoordinatorDriftPPM = 0, 0
	sc.Faults = slices.DeleteFunc(sc.Faults, func(f faults.Fault) bool { return f.Kind == faults.ClockDrift })
	sc.Network = scenario.Network{MinDelay: 1, MaxDelay: 4, ShuffleTies: true}
	if len(sc.Holders) == 1 {
		p := sc.Holders[0]
		p.Name, p.Start = "h2", p.Start+sc.TTL/2
		sc.Holders = append(sc.Holders, p)
	}
	for i := range sc.Holders {
		p := &sc.Holders[i]
		p.Margin, p.DriftPPM, p.RhoPPM, p.RenewEvery = holder.NoMargin, 0, nil, sc.TTL-6
		p.Work = []holder.Item{{Work: 2 * sc.TTL, Writes: 1}}
	}
	sc.Horizon += 4 * sc.TTL
}

// A world where drift shows: the widest drift bound, no margin to hide it,
// the holders' clocks slow and the coordinator's fast, all at the bound.
var drifting = &scenario.Bounds{RhoPPM: 100_000, Margin: holder.NoMargin, DriftPPM: -100_000, CoordinatorDriftPPM: 100_000,
	Faults: []faults.Kind{faults.RenewDeath}, MaxFaults: 1, Deviations: 1, TTL: 60,
	Work: [][]holder.Item{{{Work: 90, Writes: 1}}, {{Work: 20, Writes: 1}}}}

var all = []Mutant{
	{
		Name: "greedy-grant", Component: Coordinator, coord: memstore.BugGreedyGrant,
		Failure:  "every acquire is granted, even while another holder's lease is live",
		Article:  artLease,
		English:  artLeaseEn,
		Property: "linearizable",
		Faults:   []faults.Kind{faults.Crash},
		Story:    "A second acquire is granted while the lease is live: to another holder, or to the holder itself after a renewal's reply was lost.",
	},
	{
		Name: "fence-not-bumped", Component: Coordinator, coord: memstore.BugFenceNotBumped,
		Failure:  "taking over an expired lease keeps the old fencing token",
		Article:  artRecheck,
		English:  artRecheckEn,
		Property: "fence-monotonic",
		Faults:   []faults.Kind{faults.Crash, faults.Pause},
		Story:    "A holder crashes or stalls, its lease expires and another takes it over with the same fence number: a later grant does not get a larger fence, so storage cannot tell the old writer from the new.",
	},
	{
		Name: "renew-after-expiry", Component: Coordinator, coord: memstore.BugRenewAfterExpiry,
		Failure:  "a renew is accepted after the lease expired (owner checked, deadline not)",
		Article:  "持有者必须在到期前续约",
		English:  "The holder must renew before the lease expires (after it, the lease is gone and a renew must fail).",
		Property: "linearizable",
		Faults:   []faults.Kind{faults.Pause, faults.Freeze},
		Story:    "A holder stalls past its expiry (a pause, or a frozen clock), then its renew is accepted: the coordinator revives a lease that was already over.",
	},
	{
		Name: "expiry-off-by-one", Component: Coordinator, coord: memstore.BugExpiryOffByOne,
		// A lease in the explored world never expires unless a holder stops
		// renewing: a crash lets one run out, exactly on its expiry tick.
		explore:  &scenario.Bounds{Faults: []faults.Kind{faults.Crash}, MaxFaults: 1, Deviations: 1},
		Failure:  "the expiry comparison is off by one (now <= expiry counts as live)",
		Article:  "持有者在过期前续期，一旦过期，其他写方即可接手。",
		English:  "The holder renews before the lease expires; once it has expired, another writer may take over.",
		Property: "linearizable",
		Story:    "An operation lands exactly on the expiry tick: an acquire is refused (or a renew/write accepted) although the lease ran out at that very instant.",
	},
	{
		Name: "no-expiry", Component: Coordinator, coord: memstore.BugNoExpiry,
		Failure:  "a lock, not a lease: no expiry, so a crashed holder blocks everyone",
		Article:  "到期不续就会被回收，崩溃的持有者因此无法永远堵住别人。",
		English:  "Not renewed by its deadline, it is taken back, so a crashed holder cannot block others forever.",
		Property: "liveness-recovery",
		Faults:   []faults.Kind{faults.Crash},
		Clean:    true,
		Story:    "The holder crashes without releasing; the others retry forever because the lease never expires.",
	},
	{
		Name: "forget-on-restart", Component: Coordinator, coord: memstore.BugForgetOnRestart,
		Failure:  "the coordinator forgets its leases on restart and grants at once",
		Article:  "代价是一个极窄的竞态窗口——慢速或已被分区的持有者，会误以为租约还在自己手上，而另一个写方已经开始写入。",
		English:  "The price is a narrow race: a slow or partitioned holder believes it still holds the lease while another writer has already started writing.",
		Property: "linearizable",
		Faults:   []faults.Kind{faults.CoordinatorCrash},
		Story:    "The coordinator restarts with an empty lease table: the live holder's renew or release is refused as not-holder, and any other holder would be granted the lease at once.",
	},
	{
		Name: "release-twice-frees-next", Component: Coordinator, coord: memstore.BugReleaseAnyone,
		Failure:  "release does not check the releaser, so a second release frees the next holder's lease",
		Article:  "释放两次则可能把已经不属于自己的租约放掉。",
		English:  "Releasing twice may free a lease that is no longer yours.",
		Property: "linearizable",
		Faults:   []faults.Kind{faults.DoubleRelease},
		Story:    "A holder releases, another acquires, then the first holder's second (late) release is accepted and frees the other's lease.",
	},
	{
		Name: "write-skips-expiry", Component: Coordinator, coord: memstore.BugWriteSkipsExpiry,
		Failure:   "a write is accepted from the holder after its lease expired",
		Article:   artRecheck,
		English:   artRecheckEn,
		Property:  "linearizable",
		Faults:    []faults.Kind{faults.Pause, faults.Freeze},
		Semantics: "seed",
		PerKind:   4,
		Story:     "A holder stalls (a pause, or a frozen container) past its expiry, and its write is then accepted: the store wrote for a lease that was already over.",
	},
	{
		Name: "wall-clock-coordinator", Component: Coordinator, coord: memstore.BugWallClock,
		Failure:  "the coordinator measures leases on its wall clock, which clock steps move",
		Article:  artClock,
		English:  artClockEn,
		Property: "linearizable",
		Faults:   []faults.Kind{faults.ClockStep},
		Story:    "The coordinator's wall clock steps forward (or back): a lease expires early (or lives far too long) in true time.",
	},
	{
		Name: "write-without-fence-check", Component: Resource, res: memstore.BugNoFenceCheck,
		// The successor must write between the frozen holder's check and
		// its write: a successor that writes at once.
		explore: &scenario.Bounds{Faults: []faults.Kind{faults.Freeze}, MaxFaults: 1, Deviations: 1,
			Work: [][]holder.Item{{{Work: 30, Writes: 2}}, {{Work: 0, Writes: 1}}}},
		Failure:   "the fenced resource accepts writes without comparing fences",
		Article:   artGC,
		English:   artGCEn,
		Property:  "fence-monotonic",
		Faults:    []faults.Kind{faults.Freeze},
		Semantics: "fenced-storage",
		PerKind:   6,
		Story:     "A holder's container is frozen, clock and all; the lease passes to a successor, which writes under a newer fence; the holder resumes, its clock says its lease is still good, and its write under the old fence is accepted, silently overwriting the newer data.",
	},
	{
		Name: "write-after-failed-renew", Component: Holder, hold: holder.BugWriteAfterFailedRenew,
		Failure:  "the holder keeps writing after a failed or unanswered renew",
		Article:  artIron,
		English:  artIronEn,
		Property: "stop-on-renew-failure",
		Faults:   []faults.Kind{faults.DropHeartbeats},
		Clean:    true, // its own faults, not a lossy network: a counterexample that shrinks
		Story:    "A renewal is lost; the holder shrugs and writes again under the same fence, breaking the iron rule.",
	},
	{
		Name: "renew-loop-dies", Component: Holder, hold: holder.BugRenewLoopDies,
		Failure:  "the renewal loop dies quietly on its first failure while writing goes on",
		Article:  "最安静的故障是悄悄死掉的续约循环。",
		English:  "The quietest failure is a renewal loop that dies silently.",
		Property: "stop-on-renew-failure",
		Faults:   []faults.Kind{faults.DropHeartbeats},
		Clean:    true, // its own faults, not a lossy network: a counterexample that shrinks
		Story:    "A renewal fails and the renewal loop stops; the main loop, not told, keeps writing under the lost lease.",
	},
	{
		Name: "no-local-deadline", Component: Holder, hold: holder.BugNoLocalDeadline,
		Failure:  "the main loop keeps no deadline of its own: when the renewal loop dies, writing goes on past the expiry",
		Article:  "日志看起来一切健康,但过期之后每一次写入都落在了别人的任期里。",
		English:  "The logs look healthy, but after the expiry every write lands in someone else's term.",
		Property: "exclusive-belief",
		Faults:   []faults.Kind{faults.RenewDeath},
		PerKind:  4,
		Clean:    true, // its own faults, not a lossy network: a counterexample that shrinks
		Story:    "The renewal loop dies; the holder never notices its lease expired and believes (and writes) on while another holder has taken the lease.",
	},
	{
		Name: "trust-local-clock", Component: Holder, hold: holder.BugTrustWallClock,
		Failure:  "the holder trusts its own wall clock for its deadline and re-checks writes against it",
		Article:  "时钟偏斜会在没有任何卡顿的情况下制造同一个双持有。",
		English:  "Clock skew creates the same double holder without any pause at all.",
		Property: "exclusive-belief",
		Faults:   []faults.Kind{faults.ClockStep},
		PerKind:  4,
		Story:    "The holder's wall clock steps back; by its clock the lease still runs, so it neither renews nor stops, and a second holder is granted the lease while the first still believes it holds it.",
	},
	{
		Name: "deadline-from-reply", Component: Holder, hold: holder.BugDeadlineFromReply,
		// No margin: one slow reply is enough to carry the belief past the
		// lease.
		explore:     &scenario.Bounds{Faults: []faults.Kind{faults.RenewDeath}, MaxFaults: 1, Deviations: 1, Margin: holder.NoMargin},
		Failure:     "the local deadline is computed from the response time instead of the send time",
		Article:     "代价是一个极窄的竞态窗口——慢速或已被分区的持有者，会误以为租约还在自己手上，而另一个写方已经开始写入。",
		English:     "The price is a narrow race: a slow or partitioned holder believes it still holds the lease while another writer has already started writing.",
		Property:    "exclusive-belief",
		Faults:      []faults.Kind{faults.DropHeartbeats},
		PerKind:     3,
		Environment: "network delays spread from 0 to TTL/4, a request timeout of 2/3 TTL and retries every TTL/10",
		tune: func(sc *scenario.Scenario) {
			sc.Network.MinDelay, sc.Network.MaxDelay = 0, sc.TTL/4
			for i := range sc.Holders {
				sc.Holders[i].Timeout, sc.Holders[i].RetryMax = 2*sc.TTL/3, sc.TTL/10
			}
		},
		Story: "A grant's or renewal's reply is slow; the holder counts its lease from the reply, so when its next renewals are lost it believes past the coordinator's expiry while the next holder is already granted.",
	},
	{
		Name: "renew-every-ttl", Component: Holder, hold: holder.BugRenewEveryTTL,
		Failure:  "the renew interval equals the TTL: the lease is lost every term",
		Article:  "持有者必须在到期前续约,通常以三分之一存活时间为周期,丢一次心跳也还有重试机会。",
		English:  "The holder must renew before expiry, usually every third of the TTL, so that one lost heartbeat still leaves a retry.",
		Property: "liveness-renewal",
		Clean:    true,
		Story:    "With no fault at all the holder's deadline comes before its first renewal: it loses the lease mid-work and must re-acquire.",
	},

	// Blind spot 1: the checks behind the fence check, which a
	// well-behaved holder presenting its own fence never reaches. The
	// adversarial client's requests do.
	{
		Name: "renew-trusts-fence", Component: Coordinator, coord: memstore.BugRenewTrustsFence, explore: adversarial,
		BlindSpot: 1,
		Failure:   "a renew presenting the current fence is accepted without comparing the owner",
		Article:   artLease,
		English:   artLeaseEn,
		Property:  "linearizable",
		Story:     "A client that is not the holder renews with the current fence and the coordinator extends the lease for it: only the holder may keep a lease alive.",
	},
	{
		Name: "release-trusts-fence", Component: Coordinator, coord: memstore.BugReleaseTrustsFence, explore: adversarial,
		BlindSpot: 1,
		Failure:   "a release presenting the current fence frees the lease without comparing the owner",
		Article:   "释放两次则可能把已经不属于自己的租约放掉。",
		English:   "Releasing twice may free a lease that is no longer yours.",
		Property:  "linearizable",
		Story:     "A client that is not the holder releases with the current fence; the coordinator frees the live lease, and the next acquire is granted while the holder still writes.",
	},
	{
		Name: "fenceless-renew-anyone", Component: Coordinator, coord: memstore.BugFencelessRenew, explore: adversarial,
		BlindSpot: 1,
		Failure:   "a renew without a fence extends the lease for whoever sends it",
		Article:   artLease,
		English:   artLeaseEn,
		Property:  "linearizable",
		Story:     "A client renews without presenting a fence, as no holder of ours ever does, and the coordinator extends the lease although the client does not hold it.",
	},
	{
		Name: "reentrant-acquire", Component: Coordinator, coord: memstore.BugReentrantAcquire, explore: adversarial,

		Failure:  "an acquire by the live holder is granted again, with a new fence",
		Article:  artLease,
		English:  artLeaseEn,
		Property: "linearizable",
		Story:    "Someone acquires as the live holder (a client reusing its name) and is granted a second time, with a new fence: the lease changed hands, in a way, while it was live.",
	},
	{
		Name: "write-after-release", Component: Coordinator, coord: memstore.BugWriteAfterRelease, explore: adversarial,
		BlindSpot: 1,
		Failure:   "release keeps the holder's name and write checks only the name: a write after the release is accepted",
		Article:   artRecheck,
		English:   artRecheckEn,
		Property:  "linearizable",
		Semantics: "seed",
		Story:     "A holder releases; a late duplicate of its last write arrives and the coordinator, which kept the name, accepts it for a lease nobody holds.",
	},
	{
		Name: "future-fence-accepted", Component: Coordinator, coord: memstore.BugFutureFence, explore: adversarial,
		BlindSpot: 1,
		Failure:   "fences are compared for being stale only, so a fence never granted is accepted",
		Article:   artFencing,
		English:   artFencingEn,
		Property:  "linearizable",
		Semantics: "seed",
		Story:     "A request presents a fence from the future, never granted; the coordinator only rejects older fences and accepts it.",
	},

	// Blind spot 2: bugs a fixed margin of TTL/10, a renew interval of TTL/3
	// and drift within 2% hide. Drawn parameters (no margin, drift at the
	// bound, slow renew intervals) show them.
	{
		Name: "drift-counted-once", Component: Holder, hold: holder.BugDriftOnce, explore: drifting,
		Environment: driftEnv, tune: driftTune,
		Faults:    []faults.Kind{faults.RenewDeath},
		BlindSpot: 2,
		Failure:   "the holder subtracts only its own drift from its deadline, not the coordinator's too",
		Article:   "当甲的时钟偏快,甲会在协调者已经过期并转授给乙之后,仍然认为自己的租约有效。",
		English:   "When A's clock is off, A still believes its lease valid after the coordinator has expired it and granted it to B.",
		Property:  "exclusive-belief",
		Story:     "With no margin and the coordinator's clock fast while the holder's is slow, the holder's deadline, short of one drift, outlives the coordinator's expiry: a second holder is granted while the first still believes.",
	},
	{
		Name: "drift-ignored", Component: Holder, hold: holder.BugDriftIgnored, explore: drifting,
		Environment: driftEnv, tune: driftTune,
		Faults:    []faults.Kind{faults.RenewDeath},
		BlindSpot: 2,
		Failure:   "the holder's deadline ignores clock drift (the margin alone absorbs it)",
		Article:   artClock,
		English:   artClockEn,
		Property:  "exclusive-belief",
		Story:     "The holder takes the whole TTL less its margin; with a small margin and clocks at the drift bound, its belief outlives the lease.",
	},
	{
		Name: "deadline-at-next-renewal", Component: Holder, hold: holder.BugDeadlineAtNextRenewal,
		BlindSpot: 2,
		explore:   &scenario.Bounds{RenewEvery: 36, Margin: holder.NoMargin},
		Failure:   "the holder believes until its next renewal is due, which with a slow renew interval is past the lease",
		Article:   "持有者必须在到期前续约,通常以三分之一存活时间为周期,丢一次心跳也还有重试机会。",
		English:   "The holder must renew before expiry, usually every third of the TTL, so that one lost heartbeat still leaves a retry.",
		Property:  "exclusive-belief",
		Story:     "With a renew interval near the TTL, the holder keeps believing until it is time to renew, after the coordinator has expired the lease and granted it to the next holder.",
	},

	// Blind spot 3: bugs whose only trace is in the run properties, judged
	// on every run now (before, only under --mutant).
	{
		Name: "belief-until-release-ack", Component: Holder, hold: holder.BugBeliefUntilReleaseAck,
		BlindSpot: 3,
		// A third holder, so that one is asking just when another releases.
		explore:  &scenario.Bounds{Holders: 3, Deviations: 1},
		Failure:  "the holder believes it holds the lease until its release is answered",
		Article:  artRace,
		English:  artRaceEn,
		Property: "exclusive-belief",
		Story:    "The coordinator frees the lease when the release arrives and grants it at once to a waiter, while the releasing holder, its answer still on the way, believes on.",
	},
	{
		Name: "forgets-to-release", Component: Holder, hold: holder.BugNoRelease,
		BlindSpot: 3,
		Failure:   "the holder stops when its work is done without releasing the lease",
		Article:   "不释放会把每次优雅交接拖成完整存活时间的等待",
		English:   "Not releasing turns every graceful handoff into a wait of a whole TTL.",
		Property:  "liveness-handoff",
		Clean:     true,
		Story:     "The holder finishes and walks away with the lease; the next holder waits for it to expire instead of taking it over at once.",
	},
	{
		Name: "backoff-uncapped", Component: Holder, hold: holder.BugBackoffUncapped,
		BlindSpot: 3,
		explore:   &scenario.Bounds{Work: [][]holder.Item{{{Work: 120, Writes: 1}}, {{Work: 10, Writes: 1}}}},
		Failure:   "the acquire backoff doubles without its cap",
		Article:   "存活时间决定恢复上限",
		English:   "The TTL decides the bound on recovery.",
		Property:  "liveness-handoff",
		Clean:     true,
		Story:     "A waiter refused a few times sleeps twice as long each time, far past the release: the handoff waits on the waiter's backoff, not on the lease.",
	},

	// Exact instants — two requests in one tick of the lease clock, a renew
	// on the very tick a lease expires — that exploration enumerates (random
	// timings hit them too, now and then: no blind spot).
	{
		Name: "same-tick-double-grant", Component: Coordinator, coord: memstore.BugSameTickGrant,
		explore:  &scenario.Bounds{Stagger: -1},
		Failure:  "two acquires in one tick of the lease clock are both granted",
		Article:  "租约授予同样的写权",
		English:  "A lease grants the same (exclusive) right to write.",
		Property: "linearizable",
		Story:    "Two holders ask for a free lease in the same millisecond of the coordinator's clock; the coordinator answered \"free\" once for that tick and grants both.",
	},
	{
		Name: "renew-off-by-one", Component: Coordinator, coord: memstore.BugRenewOffByOne,

		// A renew delayed onto the expiry tick: a slow path (a delay fault)
		// and a renew interval that lines the two up.
		explore:  &scenario.Bounds{Faults: []faults.Kind{faults.Delay}, MaxFaults: 1, Deviations: 1, RenewEvery: 14},
		Failure:  "a renew arriving on the expiry tick is accepted (now <= expiry, for renew only)",
		Article:  "持有者必须在到期前续约",
		English:  "The holder must renew before the lease expires.",
		Property: "linearizable",
		Faults:   []faults.Kind{faults.Freeze, faults.Delay},
		Story:    "A renew arrives exactly when the lease expires; the coordinator, comparing with <=, revives it.",
	},
	// Blind spot 4: an order of simultaneous events that scheduling order
	// never gives — a reply handled before the holder's own wake-up at one
	// instant — in a world of exact instants. Only exploration meets it.
	{
		Name: "last-moment-renew-from-reply", Component: Holder, hold: holder.BugLastMomentRenew,
		BlindSpot: 4,
		// No drift, no margin, a renew interval whose answer can land on the
		// deadline's tick, a slow answer and a lost renewal after it.
		explore: &scenario.Bounds{RhoPPM: -1, Margin: holder.NoMargin, RenewEvery: 24, MaxDelay: 4, Deviations: 2,
			Faults: []faults.Kind{faults.DropHeartbeats}, MaxFaults: 1,
			Work: [][]holder.Item{{{Work: 100, Writes: 1}}, {{Work: 10, Writes: 1}}}},
		Failure:     "a renew answered on the tick its deadline falls is counted from the answer instead of the send",
		Article:     artRace,
		English:     artRaceEn,
		Property:    "exclusive-belief",
		Faults:      []faults.Kind{faults.DropHeartbeats},
		PerKind:     3,
		Environment: lastMomentEnv,
		tune:        lastMomentTune,
		Story:       "A renew's answer and the holder's deadline fall on the same millisecond, and the answer is handled first: the holder counts its new lease from the answer, a round trip later than the coordinator does, and believes past the expiry while the next holder is granted.",
	},
}
