package mutants

import (
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/impl/memstore"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
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
	// Article is the sentence of the article the bug breaks
	// (shared/reference/lease-article.zh.txt), and English its rendering.
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

	// The switches on the one implementation (memstore's coordinator and
	// resource, impl/holder's protocol); exactly one is set.
	coord memstore.Bug
	res   memstore.Bug
	hold  holder.Bug
}

// Options returns the simulator options that plug the mutant in; the other
// components are the reference ones.
func (m *Mutant) Options() *sim.Options {
	o := &sim.Options{}
	switch m.Component {
	case Coordinator:
		bug := m.coord
		o.NewCoordinator = func() machine.Coordinator { return machine.ClockedCoordinator(memstore.WithBugs(bug)) }
	case Resource:
		bug := m.res
		o.NewResource = func() machine.Resource { return memstore.ResourceWithBugs(bug) }
	case Holder:
		bug := m.hold
		o.NewHolder = func(c holder.Config) machine.Holder {
			c.Bugs |= bug
			return holder.New(c)
		}
	}
	return o
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
)

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
		Story:    "A renewal is lost; the holder shrugs and writes again under the same fence, breaking the iron rule.",
	},
	{
		Name: "renew-loop-dies", Component: Holder, hold: holder.BugRenewLoopDies,
		Failure:  "the renewal loop dies quietly on its first failure while writing goes on",
		Article:  "最安静的故障是悄悄死掉的续约循环。",
		English:  "The quietest failure is a renewal loop that dies silently.",
		Property: "stop-on-renew-failure",
		Faults:   []faults.Kind{faults.DropHeartbeats},
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
}
