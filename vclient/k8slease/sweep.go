package k8slease

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// Implementations, as a scenario records them.
const (
	// Unfenced: client-go's LeaderElector, the writes guarded by IsLeader().
	Unfenced = "vclient:k8slease"
	// Fenced: the same, every write carrying the Lease's resourceVersion
	// as a token the resource checks.
	Fenced = "vclient:k8slease-fenced"
	// Naive: Unfenced, the writes made under the context OnStartedLeading
	// was given (Elector.WriteWithTermContext).
	Naive = "vclient:k8slease-naive"
	// AcceptStale: Unfenced against a Lease store with the planted bug of
	// client-go's fake clientset: an update with a stale resourceVersion
	// is applied.
	AcceptStale = "vclient:k8slease+accept-stale"
	// FencedHeld: Fenced, every write carrying the resourceVersion of the
	// Lease read while this candidate holds it (TokenHeld), a token of the
	// holder's own ("tokens":"ordered").
	FencedHeld = "vclient:k8slease-fenced-rv-held"
	// FencedTransitions: Fenced, every write carrying leaseTransitions + 1
	// (TokenTransitions), a token of the holder's own.
	FencedTransitions = "vclient:k8slease-fenced-transitions"
	// Release: Unfenced with ReleaseOnCancel — when its renew loop ends
	// (a graceful shutdown, a failed renewal) the elector clears the
	// Lease's holderIdentity. Its sweeps add step-downs (StepDowns).
	Release = "vclient:k8slease-release"
	// ReleaseFenced: Fenced with ReleaseOnCancel.
	ReleaseFenced = "vclient:k8slease-release-fenced"
	// ReleasePatched and ReleaseFencedPatched: Release and ReleaseFenced
	// built on a copy of client-go's leaderelection whose tryRelease
	// checks the Lease it just read names this elector. The copy is linked
	// into this package's tests only (patched_test.go): outside them these
	// names are refused.
	ReleasePatched       = "vclient:k8slease-release-patched"
	ReleaseFencedPatched = "vclient:k8slease-release-fenced-patched"
)

// patchedElector builds an elector from the patched copy of client-go's
// package; set by this package's tests.
var patchedElector func(leaderelection.LeaderElectionConfig) (LeaderElector, error)

// Releases reports whether impl releases its Lease on cancel.
//
// Deprecated: Releases names leasecheck's own sweeps' implementations, not
// a sweep of yours (SweepConfig.Shutdowns says yours releases), and leaves
// the package after v0.13.0.
func Releases(impl string) bool { return releases(impl) }

// releases reports whether impl releases its Lease on cancel.
func releases(impl string) bool {
	switch impl {
	case Release, ReleaseFenced, ReleasePatched, ReleaseFencedPatched:
		return true
	}
	return false
}

// IsFenced reports whether impl's writes carry a token the store checks.
//
// Deprecated: IsFenced names leasecheck's own sweeps' implementations, not
// a sweep of yours (SweepConfig.Fenced says yours is), and leaves the
// package after v0.13.0.
func IsFenced(impl string) bool { return isFenced(impl) }

// isFenced reports whether impl's writes carry a token the store checks.
func isFenced(impl string) bool {
	switch impl {
	case Fenced, FencedHeld, FencedTransitions, ReleaseFenced, ReleaseFencedPatched:
		return true
	}
	return false
}

// fencedToken is the token a fenced implementation's writes carry; ok is
// false for an unfenced one.
func fencedToken(impl string) (k TokenKind, ok bool) {
	switch impl {
	case Fenced, ReleaseFenced, ReleaseFencedPatched:
		return TokenAcquired, true
	case FencedHeld:
		return TokenHeld, true
	case FencedTransitions:
		return TokenTransitions, true
	}
	return 0, false
}

// Target returns the campaign target an implementation name stands for,
// its runs bubbles of t; an unknown name is an error naming the known ones.
// Every one declares client-go's belief advisory (vclient.Options): its
// documentation promises no end of IsLeader before the Lease can move, so
// where the writes are fenced an overlap the fence kept harmless is a
// warning; unfenced, it is a violation.
func Target(t *testing.T, impl string) (*vclient.Target, error) {
	tg := &vclient.Target{T: t, Name: impl}
	switch impl {
	case Unfenced, AcceptStale:
		stale := impl == AcceptStale
		tg.Client = &Elector{}
		tg.Options = vclient.Options{Fences: model.NoFences, AdvisoryBelief: true,
			Server: func() vclient.Server { s := NewServer(); s.AcceptStale = stale; return s }}
	case Naive:
		tg.Client = &Elector{WriteWithTermContext: true}
		tg.Options = vclient.Options{Fences: model.NoFences, AdvisoryBelief: true, Server: func() vclient.Server { return NewServer() }}
	case Fenced, FencedHeld, FencedTransitions, Release, ReleaseFenced, ReleasePatched, ReleaseFencedPatched:
		e := &Elector{Fenced: isFenced(impl), ReleaseOnCancel: releases(impl)}
		if impl == ReleasePatched || impl == ReleaseFencedPatched {
			if patchedElector == nil {
				return nil, fmt.Errorf("implementation %q: the patched copy of client-go's leaderelection is built into this package's tests only", impl)
			}
			e.New = patchedElector
		}
		tg.Client = e
		if e.Fenced {
			k, _ := fencedToken(impl)
			e.Token = k
			tokens := model.OrderedTokens // the holder's own, not the grant's number
			if k == TokenAcquired {
				tokens = model.GrantTokens
			}
			tg.Options = vclient.Options{Fenced: true, Fences: model.Increasing, Tokens: tokens, AdvisoryBelief: true,
				Server: func() vclient.Server { s := NewServer(); s.Fenced = true; return s }}
		} else {
			tg.Options = vclient.Options{Fences: model.NoFences, AdvisoryBelief: true,
				Server: func() vclient.Server { return NewServer() }}
		}
	default:
		return nil, fmt.Errorf("implementation %q: want %s", impl, strings.Join([]string{Unfenced, Naive, Fenced, FencedHeld, FencedTransitions, AcceptStale, Release, ReleaseFenced, ReleasePatched, ReleaseFencedPatched}, ", "))
	}
	return tg, nil
}

// Timing is one setting of the three parameters, in milliseconds.
type Timing struct {
	Name                                      string
	LeaseDuration, RenewDeadline, RetryPeriod int64
}

// Timings are the settings a sweep draws from: client-go's defaults (as
// kube-controller-manager and kube-scheduler ship them), OpenShift's
// (137 s / 107 s / 26 s, chosen to ride out an API server's restart), a
// relaxed one, and tight ones that client-go's validation accepts; the
// last is not Safe.
var Timings = []Timing{
	{"default", 15000, 10000, 2000},
	{"openshift", 137000, 107000, 26000},
	{"relaxed", 60000, 15000, 5000},
	{"tight", 4000, 2500, 1000},
	{"tight-edge", 5000, 4000, 1000},
	{"tight-2s", 2000, 1500, 1000},
}

// Safe reports whether the timing keeps a leader inside its lease under
// any API latency within RenewDeadline: the leader's renewals are applied
// a round trip + RetryPeriod apart (the Latency profile slows both legs
// alike), and the others may take over LeaseDuration after the last one;
// so RetryPeriod + RenewDeadline must not exceed LeaseDuration. client-go
// checks only LeaseDuration > RenewDeadline > 1.2·RetryPeriod: tight-2s
// (2 s / 1.5 s / 1 s) passes its check and is not safe.
func (t Timing) Safe() bool { return t.SafeAt(0) }

// SafeAt is Safe where a candidate's clock runs ppm parts per million
// fast: a follower's LeaseDuration then passes in LeaseDuration/(1+ppm/10⁶)
// of true time, while a holder that cannot renew believes for up to
// RetryPeriod + RenewDeadline of true time (client-go's renew deadline is
// a context timeout, not its clock). client-go's doc comment puts the
// tolerated ratio of clock rates at about LeaseDuration/RenewDeadline;
// this is that bound with the holder's RetryPeriod counted.
func (t Timing) SafeAt(ppm int64) bool {
	return (t.RetryPeriod+t.RenewDeadline)*(1_000_000+ppm) <= t.LeaseDuration*1_000_000
}

// Profile is a sweep's fault class.
type Profile string

const (
	// NoFaults: no fault; a quiet network (0-5 ms a leg).
	NoFaults Profile = "none"
	// Latency: API calls slowed, every round trip still inside
	// RenewDeadline (a delay fault per candidate, up to RenewDeadline
	// minus the network's own).
	Latency Profile = "latency"
	// Pauses: candidates paused (a GC pause, a throttled container)
	// between a leadership check and a write, for up to two
	// LeaseDurations.
	Pauses Profile = "pause"
	// Contention: latency within RenewDeadline on every candidate and one
	// candidate crashed (and restarted): the followers race for a Lease
	// whose holder died, with reads and writes far apart — where a store
	// without resourceVersion checks lets two of them win.
	Contention Profile = "contention"
	// Clock: one candidate's clock runs fast from the start (FastClockPPM)
	// while another is cut off from the API server (a partition) for up to
	// two LeaseDurations: the one whose renewals stop landing still
	// believes for RenewDeadline, the fast one's LeaseDuration runs out
	// early (Timing.SafeAt).
	Clock Profile = "clock"
	// All: pauses, latency beyond RenewDeadline, partitions from the API
	// server, the API server down, crashes with and without a restart
	// under the same identity.
	All Profile = "all"
	// PauseAnywhere: pauses that strike at any request a candidate sends,
	// not only at a write: one in two at its next request to the API
	// server after the pause's time (faults.Fault.Peer "coordinator": in
	// its renew loop, between a Get and an Update, in its informer), the
	// others at its next write.
	PauseAnywhere Profile = "pause-any"
	// Partitions: one or two candidates cut off from the API server (each
	// request lost, or applied with its answer lost) for up to two
	// LeaseDurations.
	Partitions Profile = "partition"
	// Conflicts: the API server answers 409 Conflict, applying nothing, to
	// every update of one or two candidates for a while — the answer a
	// stale resourceVersion gets — and a pause strikes at a write.
	Conflicts Profile = "conflict"
)

// Profiles lists them.
var Profiles = []Profile{NoFaults, Latency, Pauses, Contention, Clock, All, PauseAnywhere, Partitions, Conflicts}

// FastClockPPM is how fast the Clock profile's fast clock runs: twice
// true speed, client-go's own example of a skew to configure for.
const FastClockPPM = 1_000_000

// ParseProfile reads a profile name.
func ParseProfile(s string) (Profile, error) {
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(Profiles))
	for i, p := range Profiles {
		names[i] = string(p)
	}
	return "", fmt.Errorf("unknown fault profile %q (known: %s)", s, strings.Join(names, ", "))
}

// Kinds returns the fault kinds a profile draws.
func (p Profile) Kinds() []faults.Kind {
	switch p {
	case Latency:
		return []faults.Kind{faults.Delay}
	case Pauses:
		return []faults.Kind{faults.Pause}
	case Contention:
		return []faults.Kind{faults.Delay, faults.Crash}
	case Clock:
		return []faults.Kind{faults.ClockDrift, faults.Partition}
	case All:
		return []faults.Kind{faults.Pause, faults.Delay, faults.Partition, faults.CoordinatorCrash, faults.Crash, faults.OwnerReuse}
	case PauseAnywhere:
		return []faults.Kind{faults.Pause}
	case Partitions:
		return []faults.Kind{faults.Partition}
	case Conflicts:
		return []faults.Kind{faults.Conflict, faults.Pause}
	}
	return []faults.Kind{}
}

// KindsFor returns the fault kinds a sweep of impl under p draws: the
// profile's, and a shutdown where impl releases on cancel (Generator).
func (p Profile) KindsFor(impl string) []faults.Kind {
	if releases(impl) {
		return append(p.Kinds(), faults.Shutdown)
	}
	return p.Kinds()
}

// MaxReplicas is the most candidates a sweep draws (SweepConfig).
const MaxReplicas = 7

// Generator returns the scenario of each seed of a sweep against impl
// under profile p: two to four candidates with the timing drawn from
// timings (nil: all of Timings), each with a work program of one or two
// items, and the profile's faults, all drawn from the seed alone. Where
// impl releases on cancel, every profile adds a step-down (StepDowns).
func Generator(impl string, p Profile, timings []Timing) func(seed uint64) *vclient.Scenario {
	g := generator(genOptions{impl: impl, fenced: isFenced(impl), profile: p, timings: timings})
	if releases(impl) {
		return StepDowns(g)
	}
	return g
}

// StepDowns adds to each scenario of gen one graceful shutdown
// (faults.Shutdown) of a candidate drawn from the seed, at a time in
// [LeaseDuration/2, 4·LeaseDuration), left down or (one seed in two)
// restarted under its identity up to two LeaseDurations later. Its draws
// come from a source of their own, so the rest of the scenario is gen's,
// seed for seed.
func StepDowns(gen func(seed uint64) *vclient.Scenario) func(seed uint64) *vclient.Scenario {
	return func(seed uint64) *vclient.Scenario {
		sc := gen(seed)
		r := rand.New(rand.NewPCG(seed, 0x73746570646f776e))
		ld := sc.TTL
		names := sc.Names()
		f := faults.Fault{Kind: faults.Shutdown, Target: names[r.IntN(len(names))], At: ld/2 + r.Int64N(4*ld-ld/2)}
		if r.IntN(2) == 0 {
			f.Duration = 1 + r.Int64N(2*ld)
		}
		sc.Faults = append(sc.Faults, f).Sorted()
		if !slices.Contains(sc.FaultKinds, faults.Shutdown) {
			sc.FaultKinds = append(slices.Clone(sc.FaultKinds), faults.Shutdown)
		}
		return sc
	}
}

// genOptions say what a sweep's scenarios are of: the implementation
// recorded, whether its resource is fenced, the profile, the timings drawn
// from (nil: Timings) and the bounds of the candidates drawn (0: 2 and 4).
type genOptions struct {
	impl     string
	fenced   bool
	profile  Profile
	timings  []Timing
	min, max int
}

func generator(o genOptions) func(seed uint64) *vclient.Scenario {
	impl, p, timings := o.impl, o.profile, o.timings
	if len(timings) == 0 {
		timings = Timings
	}
	lo, hi := o.min, o.max
	if lo <= 0 {
		lo = 2
	}
	if hi <= 0 {
		hi = max(lo, 4)
	}
	hi = min(max(hi, lo), MaxReplicas)
	lo = min(lo, hi)
	return func(seed uint64) *vclient.Scenario {
		r := rand.New(rand.NewPCG(seed, 0x6b38736c65617365))
		tm := timings[r.IntN(len(timings))]
		ld := tm.LeaseDuration
		sc := &vclient.Scenario{Version: scenario.Version, Seed: seed, Semantics: "seed", Key: "lease", TTL: ld,
			Network: vclient.Network{MinDelay: 0, MaxDelay: 1 + r.Int64N(5)}, Implementation: impl, FaultKinds: p.Kinds()}
		if o.fenced {
			sc.Semantics = "fenced-storage"
		}
		n := lo + r.IntN(hi-lo+1)
		for i := range n {
			proc := vclient.Process{Name: fmt.Sprintf("h%d", i+1), Timeout: tm.RenewDeadline, RenewEvery: tm.RetryPeriod,
				RetryMax: retryBound(tm.RetryPeriod, sc.Network.MaxDelay)}
			if r.IntN(3) == 0 {
				proc.Start = r.Int64N(ld)
			}
			for range 1 + r.IntN(2) {
				proc.Work = append(proc.Work, vclient.WorkItem{Work: 1 + r.Int64N(max(tm.RetryPeriod, 1000)), Writes: 1 + r.IntN(2)})
			}
			sc.Holders = append(sc.Holders, proc)
		}
		span := 4 * ld // faults strike in [LeaseDuration/2, 4·LeaseDuration)
		sc.Horizon = span + 3*ld
		names := sc.Names()
		pick := func() string { return names[r.IntN(len(names))] }
		at := func() int64 { return ld/2 + r.Int64N(span-ld/2) }
		rtt := 2 * sc.Network.MaxDelay
		switch p {
		case Latency, Contention:
			for _, h := range names {
				budget := tm.RenewDeadline - rtt - 2 // the round trip stays inside RenewDeadline
				sc.Faults = append(sc.Faults, faults.Fault{Kind: faults.Delay, Target: h, At: at(), Duration: 1 + r.Int64N(2*ld), Amount: r.Int64N(budget + 1)})
			}
		}
		switch p {
		case Contention:
			sc.Faults = append(sc.Faults, faults.Fault{Kind: faults.Crash, Target: pick(), At: at(), Duration: 1 + r.Int64N(ld)})
		case Clock:
			fast := r.IntN(len(names))
			cut := (fast + 1 + r.IntN(len(names)-1)) % len(names)
			sc.RhoPPM = FastClockPPM
			sc.Faults = append(sc.Faults, faults.Fault{Kind: faults.ClockDrift, Target: names[fast], Amount: FastClockPPM},
				faults.Fault{Kind: faults.Partition, Target: names[cut], Peer: faults.Coordinator, At: at(), Duration: ld/2 + r.Int64N(3*ld/2)})
		case Pauses:
			for range 1 + r.IntN(2) {
				sc.Faults = append(sc.Faults, faults.Fault{Kind: faults.Pause, Target: pick(), At: at(), Duration: ld/4 + r.Int64N(2*ld)})
			}
		case PauseAnywhere:
			for range 1 + r.IntN(2) {
				f := faults.Fault{Kind: faults.Pause, Target: pick(), At: at(), Duration: ld/4 + r.Int64N(2*ld)}
				if r.IntN(2) == 0 {
					f.Peer = faults.Coordinator
				}
				sc.Faults = append(sc.Faults, f)
			}
		case Partitions:
			for range 1 + r.IntN(2) {
				sc.Faults = append(sc.Faults, faults.Fault{Kind: faults.Partition, Target: pick(), Peer: faults.Coordinator, At: at(), Duration: 1 + r.Int64N(2*ld)})
			}
		case Conflicts:
			for range 1 + r.IntN(2) {
				sc.Faults = append(sc.Faults, faults.Fault{Kind: faults.Conflict, Target: pick(), At: at(), Duration: 1 + r.Int64N(2*ld)})
			}
			sc.Faults = append(sc.Faults, faults.Fault{Kind: faults.Pause, Target: pick(), At: at(), Duration: ld/4 + r.Int64N(2*ld)})
		case All:
			for range 1 + r.IntN(4) {
				f := faults.Fault{Target: pick(), At: at()}
				switch r.IntN(6) {
				case 0:
					f.Kind, f.Duration = faults.Pause, ld/4+r.Int64N(2*ld)
				case 1:
					f.Kind, f.Duration, f.Amount = faults.Delay, 1+r.Int64N(2*ld), r.Int64N(2*tm.RenewDeadline)
				case 2:
					f.Kind, f.Duration, f.Peer = faults.Partition, 1+r.Int64N(2*ld), faults.Coordinator
				case 3:
					f.Kind, f.Target, f.Duration = faults.CoordinatorCrash, faults.Coordinator, 1+r.Int64N(2*ld)
				case 4:
					f.Kind = faults.Crash
					if r.IntN(2) == 0 {
						f.Duration = 1 + r.Int64N(ld)
					}
				case 5:
					f.Kind, f.Duration = faults.OwnerReuse, 1+r.Int64N(ld)
				}
				sc.Faults = append(sc.Faults, f)
			}
		}
		sc.Faults = sc.Faults.Sorted()
		return sc
	}
}

// retryBound is the scenario's retry interval for the liveness bound: a
// follower notices a silent leader's last renewal within one jittered
// retry (RetryPeriod·(1+JitterFactor)) and a round trip, and tries again
// within another after LeaseDuration ran out from then.
func retryBound(rp, maxDelay int64) int64 {
	return (rp*44+9)/10 + 4*maxDelay + 4
}
