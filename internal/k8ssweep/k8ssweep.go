// Package k8ssweep is the house of vclient/k8slease's sweeps: the names of
// leasecheck's own elector's implementations, the fault profiles' draws,
// the scenario generator, the go test flags every sweep reads, the
// stores'-log check of a zombie write and the history's (FindZombieWrite),
// the in-process Kubernetes API server every sweep runs against (Server),
// the leader's work loop of leasecheck's own electors (Work, shared with
// internal/ctrlruntime's manager), and the replay of one saved file
// against a target (ReplayFile). k8slease's Sweep, and
// internal/ctrlruntime's sweeps through it, are built on it; a user
// sweeping a controller of their own comes in by k8slease's door
// (docs/kubernetes.md) and never names it.
package k8ssweep

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// The go test flags of every sweep (k8slease.Sweep), under the prefix
// "k8slease.": a test binary that imports k8slease has them, so a user's
// module runs
//
//	go test -run TestMyElection -k8slease.seeds 10000 -k8slease.profile pause -k8slease.save DIR
//	go test -run TestMyElection -k8slease.scenario DIR/seed-N.scenario.json
//
// and a test of the same binary may define -seeds, -profile, -save or
// -scenario of its own. leasecheck's own test binaries also take the short
// names (ShortFlags).
var (
	SeedsFlag    = flag.Int(FlagPrefix+"seeds", 0, "k8slease sweeps: seeds per sweep (0: each sweep's default, a fifth of it with -short)")
	ProfileFlag  = flag.String(FlagPrefix+"profile", "", "k8slease sweeps: the fault profile of a sweep whose SweepConfig names none (none, latency, pause, pause-any, partition, conflict, contention, clock, all)")
	SaveFlag     = flag.String(FlagPrefix+"save", "", "k8slease sweeps: where failures are saved, shrunk, with their stories (default: the test's temporary directory)")
	ScenarioFlag = flag.String(FlagPrefix+"scenario", "", "k8slease sweeps: replay this saved scenario file instead of sweeping")
)

// FlagPrefix prefixes the names of the sweeps' flags.
const FlagPrefix = "k8slease."

// sweepFlags are the sweeps' flags, by their short names.
var sweepFlags = []string{"seeds", "profile", "save", "scenario"}

// ShortFlags registers -seeds, -profile, -save and -scenario as second
// names of the k8slease.* flags, for leasecheck's own test binaries (their
// commands, in docs/, use them); call it from a test file's init. A user's
// binary does not, and its own -seeds is its own.
func ShortFlags() {
	for _, n := range sweepFlags {
		f := flag.Lookup(FlagPrefix + n)
		flag.Var(f.Value, n, f.Usage)
	}
}

// IsSweepFlag reports whether name is one of the sweeps' flags, by either
// name: the flags a replay command sets itself, not carried over from the
// command line.
func IsSweepFlag(name string) bool {
	return slices.Contains(sweepFlags, strings.TrimPrefix(name, FlagPrefix))
}

// SeedCount is the number of seeds a sweep whose default is n runs: -seeds
// when given, a fifth of n with -short (a race run looks for data races,
// not for rare seeds), n otherwise.
func SeedCount(n int) int {
	if *SeedsFlag > 0 {
		return *SeedsFlag
	}
	if n <= 0 {
		n = 100
	}
	if testing.Short() {
		return max(n/5, 1)
	}
	return n
}

// SaveDir is where a sweep of t saves its failures: -save, or t's
// temporary directory.
func SaveDir(t *testing.T) string {
	if *SaveFlag != "" {
		return *SaveFlag
	}
	return t.TempDir()
}

// Implementations of leasecheck's own elector (k8slease's Elector), as a
// scenario records them.
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
	// on client-go's leaderelection with tryRelease checking that the
	// Lease it just read names this elector, changed at build time by the
	// overlay vclient/k8slease/internal/overlaygen writes: k8slease's
	// tests built with it (the clientgopatched tag) run them, no other
	// build does.
	ReleasePatched       = "vclient:k8slease-release-patched"
	ReleaseFencedPatched = "vclient:k8slease-release-fenced-patched"
)

// Releases reports whether impl releases its Lease on cancel.
func Releases(impl string) bool {
	switch impl {
	case Release, ReleaseFenced, ReleasePatched, ReleaseFencedPatched:
		return true
	}
	return false
}

// IsFenced reports whether impl's writes carry a token the store checks.
func IsFenced(impl string) bool {
	switch impl {
	case Fenced, FencedHeld, FencedTransitions, ReleaseFenced, ReleaseFencedPatched:
		return true
	}
	return false
}

// Timing is k8slease.Timing's fields (the one converts to the other): one
// setting of the three parameters, in milliseconds.
type Timing struct {
	Name                                      string
	LeaseDuration, RenewDeadline, RetryPeriod int64
}

// Profile is a sweep's fault class, k8slease.Profile's values (see there).
type Profile string

const (
	NoFaults      Profile = "none"
	Latency       Profile = "latency"
	Pauses        Profile = "pause"
	Contention    Profile = "contention"
	Clock         Profile = "clock"
	All           Profile = "all"
	PauseAnywhere Profile = "pause-any"
	Partitions    Profile = "partition"
	Conflicts     Profile = "conflict"
)

// FastClockPPM is how fast the Clock profile's fast clock runs: twice
// true speed, client-go's own example of a skew to configure for.
const FastClockPPM = 1_000_000

// MaxReplicas is the most candidates a sweep draws.
const MaxReplicas = 7

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
	if Releases(impl) {
		return append(p.Kinds(), faults.Shutdown)
	}
	return p.Kinds()
}

// Generator returns the scenario of each seed of a sweep against impl
// under profile p: two to four candidates with the timing drawn from
// timings (at least one), each with a work program of one or two items,
// and the profile's faults, all drawn from the seed alone. Where impl
// releases on cancel, every profile adds a step-down (StepDowns).
func Generator(impl string, p Profile, timings []Timing) func(seed uint64) *scenario.Scenario {
	g := NewGenerator(GenOptions{Impl: impl, Fenced: IsFenced(impl), Profile: p, Timings: timings})
	if Releases(impl) {
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
func StepDowns(gen func(seed uint64) *scenario.Scenario) func(seed uint64) *scenario.Scenario {
	return func(seed uint64) *scenario.Scenario {
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

// GenOptions say what a sweep's scenarios are of: the implementation
// recorded, whether its resource is fenced, the profile, the timings drawn
// from (at least one) and the bounds of the candidates drawn (0: 2 and 4).
// Kinds, when set, replaces the profile: each seed draws one to four
// faults, each of a kind drawn from Kinds, as All draws its own (MixKinds
// lists the kinds it can draw).
type GenOptions struct {
	Impl     string
	Fenced   bool
	Profile  Profile
	Timings  []Timing
	Min, Max int
	Kinds    []faults.Kind
}

// MixKinds are the kinds a mix of faults draws from (GenOptions.Kinds;
// All draws all of them, in this order).
func MixKinds() []faults.Kind { return All.Kinds() }

// CheckKinds refuses a mix (GenOptions.Kinds) with a kind it cannot draw.
func CheckKinds(kinds []faults.Kind) error {
	for _, k := range kinds {
		if !slices.Contains(MixKinds(), k) {
			return fmt.Errorf("fault kind %q: a sweep's mix draws %v", k, MixKinds())
		}
	}
	return nil
}

// NewGenerator returns the scenario of each seed of the sweep o says.
func NewGenerator(o GenOptions) func(seed uint64) *scenario.Scenario {
	impl, p, timings := o.Impl, o.Profile, o.Timings
	if len(timings) == 0 {
		panic("k8ssweep: a generator with no timing to draw")
	}
	lo, hi := o.Min, o.Max
	if lo <= 0 {
		lo = 2
	}
	if hi <= 0 {
		hi = max(lo, 4)
	}
	hi = min(max(hi, lo), MaxReplicas)
	lo = min(lo, hi)
	kinds := p.Kinds()
	if len(o.Kinds) > 0 {
		kinds, p = slices.Clone(o.Kinds), All
	}
	return func(seed uint64) *scenario.Scenario {
		r := rand.New(rand.NewPCG(seed, 0x6b38736c65617365))
		tm := timings[r.IntN(len(timings))]
		ld := tm.LeaseDuration
		sc := &scenario.Scenario{Version: scenario.Version, Seed: seed, Semantics: "seed", Key: "lease", TTL: ld,
			Network: scenario.Network{MinDelay: 0, MaxDelay: 1 + r.Int64N(5)}, Implementation: impl, FaultKinds: slices.Clone(kinds)}
		if o.Fenced {
			sc.Semantics = "fenced-storage"
		}
		n := lo + r.IntN(hi-lo+1)
		for i := range n {
			proc := vclient.Process{Name: fmt.Sprintf("h%d", i+1), Timeout: tm.RenewDeadline, RenewEvery: tm.RetryPeriod,
				RetryMax: RetryBound(tm.RetryPeriod, sc.Network.MaxDelay)}
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
				k := kinds[r.IntN(len(kinds))] // All's kinds in MixKinds' order: the draws of v0.15.0
				switch k {
				case faults.Pause:
					f.Kind, f.Duration = faults.Pause, ld/4+r.Int64N(2*ld)
				case faults.Delay:
					f.Kind, f.Duration, f.Amount = faults.Delay, 1+r.Int64N(2*ld), r.Int64N(2*tm.RenewDeadline)
				case faults.Partition:
					f.Kind, f.Duration, f.Peer = faults.Partition, 1+r.Int64N(2*ld), faults.Coordinator
				case faults.CoordinatorCrash:
					f.Kind, f.Target, f.Duration = faults.CoordinatorCrash, faults.Coordinator, 1+r.Int64N(2*ld)
				case faults.Crash:
					f.Kind = faults.Crash
					if r.IntN(2) == 0 {
						f.Duration = 1 + r.Int64N(ld)
					}
				case faults.OwnerReuse:
					f.Kind, f.Duration = faults.OwnerReuse, 1+r.Int64N(ld)
				default:
					panic(fmt.Sprintf("k8ssweep: a mix of faults cannot draw %q (CheckKinds)", k))
				}
				sc.Faults = append(sc.Faults, f)
			}
		}
		sc.Faults = sc.Faults.Sorted()
		return sc
	}
}

// RetryBound is the scenario's retry interval for the liveness bound: a
// follower notices a silent leader's last renewal within one jittered
// retry (RetryPeriod·(1+JitterFactor)) and a round trip, and tries again
// within another after LeaseDuration ran out from then.
func RetryBound(rp, maxDelay int64) int64 {
	return (rp*44+9)/10 + 4*maxDelay + 4
}

// StoreZombieWrite returns the first write a stores' log
// (campaign.Execution.Store) shows accepted from an owner after the Lease
// was granted to another (a later grant than the writer's own, and no
// release in between), or nil: what the world did, whatever the client
// saw of it.
func StoreZombieWrite(h *model.History) *model.Op {
	if h == nil {
		return nil
	}
	holder := map[string]string{} // by key: each Lease's writes are judged against it alone
	for i := range h.Ops {
		op := &h.Ops[i]
		if !op.OK {
			continue
		}
		switch op.Kind {
		case model.Acquire:
			holder[op.Key] = op.Owner
		case model.Release:
			holder[op.Key] = ""
		case model.Write:
			if hd := holder[op.Key]; hd != "" && op.Owner != hd {
				return op
			}
		}
	}
	return nil
}
