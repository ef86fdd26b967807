package explore

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/pairs"
	"github.com/leasecheck/leasecheck/internal/runrecord"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

// Strategy names a search strategy.
type Strategy string

// The strategies. They share one interface (Explore) and one notion of a
// state, a move and a judge.
const (
	BFS Strategy = "bfs" // breadth-first: counterexamples minimal in steps
	DFS Strategy = "dfs" // depth-first: memory bounded by the depth
	PCT Strategy = "pct" // probabilistic concurrency testing: randomized, never complete
	// Auto is depth-first search to decide, then, when it finds a
	// violation, breadth-first search for the shortest one: the proof of a
	// space without a violation costs what depth-first search costs (about
	// 1.8 times as many states a second on one core as breadth-first, a
	// sixth of the memory: the state expanded next is the one just made,
	// still in the cache), and a violation's counterexample and counts are
	// breadth-first search's, the same as with BFS. It is the command's
	// default.
	Auto Strategy = "auto"
)

// Bounds describe the space to explore (scenario.Bounds: the mutants'
// table states its bounds as data too).
type Bounds = scenario.Bounds

// DefaultWork is the explored holders' programs: the first holder works
// longer than a TTL (its lease lives only by its renewals) and writes once;
// the others work a third of a TTL and write once.
var DefaultWork = [][]holder.Item{{{Work: spaceTTL + spaceTTL/3, Writes: 1}}, {{Work: spaceTTL / 3, Writes: 1}}}

// The explored world's fixed parameters: small times, so that few events
// fill a lease's life, with a drift bound large enough to move a clock by
// a millisecond within one TTL.
const (
	spaceTTL     = 30
	spaceRho     = 40_000 // 4%: ±1.2ms over a TTL
	spaceHorizon = 10 * spaceTTL
)

// Space returns the scenario explored under b: version 1, the reference
// key, TTL 30ms, rho 4%, messages delayed 1 or 2ms, holders h1..hN
// starting at 0, 2, 4... with b.Work's programs, and b as its Space.
func Space(b Bounds) *scenario.Scenario {
	n := b.Holders
	if n <= 0 {
		n = 2
	}
	sem := b.Semantics
	if sem == "" {
		sem = "seed"
	}
	sc := &scenario.Scenario{
		Version: scenario.Version, Seed: 1, Semantics: sem, Key: "k", TTL: spaceTTL, RhoPPM: spaceRho,
		Horizon: spaceHorizon, Network: scenario.Network{MinDelay: 1, MaxDelay: 2},
		Space: &scenario.Space{Faults: slices.Clone(b.Faults), MaxFaults: b.MaxFaults, Adversary: b.Adversary, Deviations: b.Deviations},
	}
	if b.Loss {
		sc.Network.DropPPM = 1 // enumerated as a choice, not drawn
	}
	if b.RhoPPM > 0 {
		sc.RhoPPM = b.RhoPPM
	}
	if b.TTL > 0 {
		sc.TTL, sc.Horizon = b.TTL, 10*b.TTL
	}
	if b.NoDelay {
		sc.Network.MinDelay, sc.Network.MaxDelay = 0, 0
	}
	if b.MaxDelay > 0 {
		sc.Network.MaxDelay = max(b.MaxDelay, sc.Network.MinDelay)
	}
	sc.ReadEvery = b.ReadEvery
	if b.RhoPPM < 0 {
		sc.RhoPPM = 0
	}
	sc.CoordinatorDriftPPM = b.CoordinatorDriftPPM
	work := b.Work
	if len(work) == 0 {
		work = DefaultWork
	}
	stagger := b.Stagger
	switch {
	case stagger == 0:
		stagger = 2
	case stagger < 0:
		stagger = 0
	}
	for i := range n {
		prog := work[min(i, len(work)-1)]
		sc.Holders = append(sc.Holders, scenario.Process{Name: "h" + strconv.Itoa(i+1), Start: stagger * int64(i), Work: slices.Clone(prog),
			Margin: b.Margin, RenewEvery: b.RenewEvery, DriftPPM: b.DriftPPM})
	}
	return sc
}

// Options tune a search. The zero value is a breadth-first search with
// state hashing and sleep sets, depth 200, a budget of a million distinct
// states, the reference machines.
type Options struct {
	Strategy Strategy
	// MaxDepth bounds the moves of a path (0: 200).
	MaxDepth int
	// MaxStates bounds the distinct states (0: none).
	MaxStates int64
	// Timeout bounds the wall time (0: none); MaxMemory the Go heap's live
	// objects, in bytes (0: none): the search stops when they pass 90% of
	// it (past that a collector held to the budget would spend its time
	// collecting), and waiting states give up their worlds long before
	// (search.go). A search that runs out of any budget is not Complete,
	// and its Stopped names the budget.
	Timeout   time.Duration
	MaxMemory int64
	// Progress, when set, is called about ten times a second with the
	// search's counts (for a terminal's progress line; it never steers the
	// search).
	Progress func(Progress)
	// NoHash turns state hashing off (every path is a tree of its own);
	// NoPOR turns the partial-order reduction off. For measurements.
	NoHash, NoPOR bool
	// Workers is how many goroutines expand states in parallel (0 or 1:
	// one; breadth-first search only). The counts and the counterexample
	// are the same for any number of workers and any GOMAXPROCS.
	Workers int
	// Symmetry digests each state canonically up to a permutation of
	// holders with identical programs and start times
	// (sim.World.HolderSymmetry), when the space is symmetric in them; it
	// turns the sleep sets off there (their transitions are named in one
	// state's naming, not the class's). Off where the space is not
	// symmetric: the report's Symmetry says whether it applied.
	Symmetry bool
	// Judges judge the explored states (required: the explorer imports no
	// judge; internal/explorejudge.Judges{} is leasecheck's).
	Judges Judges
	// Sim plugs in the machines (nil: the reference ones); its Chooser,
	// NoTrace, NoRunHash, NoFaultCounts and Monitor are the explorer's.
	Sim *sim.Options
	// Implementation is recorded in a counterexample's scenario, so that
	// `leasecheck repro FILE` replays it against the same machines
	// ("mutant:NAME"; "" the reference).
	Implementation string
	// CheckBudget bounds one history's linearizability search (0: 10s).
	CheckBudget time.Duration
	// FullLeaves runs the checker on every path's last state too, beside
	// the monitors; JudgeEveryState runs every full judge on every state.
	// Both cross-check the monitors' completeness (tests).
	FullLeaves      bool
	JudgeEveryState bool
	// VerifyDigests recomputes, at every state, the machine digests the
	// worlds keep beside their machines (sim.World.VerifyDigests), and fails
	// the exploration when one is stale: the check of the copy-on-write
	// machines and their kept digests, which the tests run on every space.
	VerifyDigests bool
	// PCT: Runs random runs (0: 1000) with Depth d priority change points
	// (0: 3), drawn from Seed.
	Runs  int
	Depth int
	Seed  uint64

	// Admit, when set, is asked about every new distinct state before it is
	// queued (breadth-first search only): false leaves it to another part
	// of a sharded exploration (shard.go), which explores it instead.
	Admit func(depth int, digest uint64) bool

	// blindMonitor (tests only, export_test.go): the monitor never flags
	// linearizable, a planted incompleteness the disagreement check must
	// catch.
	blindMonitor bool
	// noSpares (tests only, export_test.go): depth-first search copies
	// every world anew instead of into the worlds it is done with.
	noSpares bool
	// noCloning (tests only, export_test.go): every state is re-run from
	// the scenario along its path, as for machines that cannot be copied —
	// the judge of the copies (sim.World.Clone, CloneInto) that uses none.
	noCloning bool
	// reuse (tests only, export_test.go), when non-zero, fixes how far a
	// waiting state may be from the world it is re-run from (reuseDistance),
	// whatever the heap.
	reuse int
}

func (o *Options) defaults() {
	if o.Judges == nil {
		o.Judges = defaultJudges
	}
	if o.Strategy == "" {
		o.Strategy = BFS
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 200
	}
	if o.CheckBudget <= 0 {
		o.CheckBudget = 10 * time.Second
	}
	if o.Runs <= 0 {
		o.Runs = 1000
	}
	if o.Depth <= 0 {
		o.Depth = 3
	}
}

// Report says exactly what a search covered and found.
type Report struct {
	Strategy Strategy `json:"strategy"`
	// Pairs are the pairs (package pairs) the worlds of the search met:
	// every move run, the pruned ones' too.
	Pairs pairs.Set `json:"-"`
	// PairCoverage, when set, judges Pairs against the pair model: what a
	// complete search was complete over.
	PairCoverage *pairs.Report `json:"pairs,omitempty"`
	// Complete: the bounded space was explored to its end, every state
	// judged, no budget ran out and no verdict was undecided. "No
	// violation" is a claim about that space only.
	Complete bool `json:"complete"`
	// States counts the states reached (one per move taken, the pruned
	// ones included); DistinctStates those explored further (with hashing,
	// distinct digests).
	States         int64 `json:"states"`
	DistinctStates int64 `json:"distinct_states"`
	// CollisionOdds bounds the chance that two of the distinct states
	// visited share a 64-bit digest, so that one was skipped as seen
	// (visited.go): n²/2⁶⁵ over n states reached by distinct digests.
	CollisionOdds float64 `json:"collision_odds"`
	MaxDepth      int     `json:"max_depth"`
	// Pruned counts moves not explored further: their state was seen before
	// (PrunedSeen) or the move commutes with one explored (PrunedSleep).
	Pruned      int64 `json:"pruned"`
	PrunedSeen  int64 `json:"pruned_seen"`
	PrunedSleep int64 `json:"pruned_sleep"`
	// Paths counts the paths judged to their end (a finished run or the
	// depth bound); Judged the states the full judges looked at.
	Paths     int64 `json:"paths"`
	Judged    int64 `json:"judged"`
	Undecided int64 `json:"undecided"`
	// Violations counts the violating states found, by property (the
	// search stops at the first).
	Violations     map[string]int  `json:"violations"`
	Counterexample *Counterexample `json:"counterexample"`
	// Minimized, after Minimize, says how the counterexample was shortened
	// by exploring smaller worlds.
	Minimized *Minimized `json:"minimized,omitempty"`
	// DepthFirst, with strategy auto when a violation was found, is what
	// the depth-first search that found it saw first.
	DepthFirst *DepthFirstPhase `json:"depth_first,omitempty"`
	// Stopped says why the search ended: "exhausted", "violation",
	// "max-states", "max-memory", "timeout", or for PCT "runs" (all made: a
	// randomized search claims no completeness).
	Stopped string `json:"stopped"`
	// Disagreement, when set, says the per-state monitor and the full
	// judges disagreed on a path: the full judges found a violation the
	// monitor never flagged. That is a bug in leasecheck (the monitor's
	// flags must be complete), and the command exits 2.
	Disagreement string `json:"disagreement,omitempty"`
	// Bounds describes the space, Guarantee PCT's probabilistic claim.
	// Spaces, for a plan of several spaces (ExplorePlan), lists each one
	// explored, in order.
	Bounds    string   `json:"bounds"`
	Spaces    []string `json:"spaces,omitempty"`
	Guarantee string   `json:"guarantee,omitempty"`
	// Hashing and POR say which reductions were on; Cloning whether
	// states were copied (else re-run from the root: a third party's
	// machine without machine.HolderCloner and its kin).
	Hashing bool `json:"hashing"`
	POR     bool `json:"por"`
	Cloning bool `json:"cloning"`
	// Symmetry names the classes of interchangeable holders whose
	// permutations the digest identified ("h1=h2=h3"), when
	// Options.Symmetry applied; SymmetryOff says why it did not apply.
	Symmetry    []string `json:"symmetry,omitempty"`
	SymmetryOff string   `json:"symmetry_off,omitempty"`

	// DepthCut counts the paths cut by the depth bound (MaxDepth moves)
	// before their run ended: "complete" covers paths up to that length.
	DepthCut   int64 `json:"depth_cut"`
	DepthBound int   `json:"depth_bound"`
	// Shallower counts the states depth-first search explored again
	// because it reached them in fewer moves than before (search.go's dfs):
	// work the depth bound costs, no new state.
	Shallower int64 `json:"shallower,omitempty"`

	// Elapsed is the wall time, PeakHeap the largest live Go heap (bytes,
	// as the collections marked it) seen while searching: measurements,
	// not part of the result.
	Elapsed  time.Duration `json:"-"`
	PeakHeap uint64        `json:"-"`

	// Verdict, when set (the command sets it), is the order-independent
	// result a sharded exploration's merge reproduces (shard.go); spaces
	// is each explored space's part of it.
	Verdict *Verdict `json:"verdict,omitempty"`
	spaces  []SpaceVerdict
	// Reductions names the reductions that were on (ReductionsOn), and
	// Coverage, when measured (the command's --coverage), the explored
	// machines' code the exploration ran: what a "complete" covered.
	Reductions []string  `json:"reductions,omitempty"`
	Coverage   *Coverage `json:"coverage,omitempty"`
}

// Progress is a running search's counts, for Options.Progress.
type Progress struct {
	States, Distinct int64
	Depth            int
	Elapsed          time.Duration
	HeapBytes        uint64
}

// Counterexample is the shortest violating path found: a scenario whose
// Schedule replays it with `leasecheck repro FILE` and no other flag.
type Counterexample struct {
	Property string `json:"property"`
	// Properties lists every property the path's last state violates.
	Properties []string `json:"properties"`
	Steps      int      `json:"steps"`
	// State is the violating state's digest (hex), Revealed the depth of
	// the state whose expansion revealed it: with Steps, the
	// counterexample's place in the order that picks it (shard.go).
	State       string             `json:"state,omitempty"`
	Revealed    int                `json:"revealed"`
	Ops         int                `json:"ops"`
	Explanation string             `json:"explanation"`
	Lines       []int              `json:"lines,omitempty"`
	TraceLines  []int              `json:"trace_lines,omitempty"`
	File        string             `json:"file,omitempty"`
	Scenario    *scenario.Scenario `json:"-"`
	Run         *sim.Result        `json:"-"`
}

// ErrNoChooserRoom: the scenario must be enumerable.
var ErrNoChooserRoom = errors.New("explore: the scenario has no Space")

// DepthFirstPhase is the depth-first part of an auto search that found a
// violation (Report.DepthFirst).
type DepthFirstPhase struct {
	Steps          int    `json:"steps"` // the violating path it found
	DistinctStates int64  `json:"distinct_states"`
	Property       string `json:"property"`
	// Shortened: breadth-first search found the shortest violation, whose
	// report this is. When it did not (a budget ran out first: Stopped),
	// the report is the depth-first search's, its counterexample not
	// shown to be the shortest.
	Shortened bool          `json:"shortened"`
	Stopped   string        `json:"stopped,omitempty"`
	Elapsed   time.Duration `json:"-"`
}

// Explore searches sc's bounded space (sc.Space) with strategy o.Strategy
// and judges every path with o.Judges: the monitors at every state, the
// full judges wherever a monitor flags and at the end of every path. It is deterministic: the same scenario, machines and options
// give the same report, whatever GOMAXPROCS (it runs on one goroutine).
func Explore(sc *scenario.Scenario, o Options) (*Report, error) {
	if o.Strategy == Auto {
		return exploreAuto(sc, o)
	}
	return exploreWith(sc, o)
}

// exploreAuto is strategy Auto: depth-first search, and breadth-first
// search when it finds a violation. Breadth-first search runs with the
// same bounds and stops at the level of the shortest violation, as it
// would have alone; the depth-first path only tells that there is one.
func exploreAuto(sc *scenario.Scenario, o Options) (*Report, error) {
	start := time.Now()
	d := o
	d.Strategy = DFS
	r, err := exploreWith(sc, d)
	if err != nil {
		return nil, err
	}
	r.Strategy = Auto
	if r.Counterexample == nil || r.Disagreement != "" {
		return r, nil // no violation (or a bug in leasecheck, said as found)
	}
	b := o
	b.Strategy = BFS
	if o.Timeout > 0 {
		if b.Timeout = o.Timeout - time.Since(start); b.Timeout <= 0 {
			b.Timeout = time.Nanosecond // out of time: the depth-first counterexample stands
		}
	}
	phase := &DepthFirstPhase{Steps: r.Counterexample.Steps, DistinctStates: r.DistinctStates, Property: r.Counterexample.Property, Elapsed: r.Elapsed}
	s, err := exploreWith(sc, b)
	if err != nil {
		return nil, err
	}
	if s.Counterexample == nil && s.Disagreement == "" {
		phase.Stopped = s.Stopped
		r.DepthFirst = phase
		r.Elapsed = time.Since(start)
		return r, nil
	}
	phase.Shortened = s.Counterexample != nil
	s.Strategy, s.DepthFirst = Auto, phase
	s.Elapsed = time.Since(start)
	return s, nil
}

// exploreWith is Explore with one of the strategies that search alone.
func exploreWith(sc *scenario.Scenario, o Options) (*Report, error) {
	if sc.Space == nil {
		return nil, ErrNoChooserRoom
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	o.defaults()
	if o.Judges == nil {
		return nil, ErrNoJudges
	}
	x := &explorer{sc: sc, setting: sim.Setting(sc), o: o, rep: &Report{Strategy: o.Strategy, Violations: map[string]int{}, Hashing: !o.NoHash, POR: !o.NoPOR},
		visited: newVisitedSet(), props: o.Judges.Properties()}
	for _, p := range x.props {
		x.rep.Violations[p] = 0
	}
	x.rep.Bounds = describe(sc, o)
	x.rep.DepthBound = o.MaxDepth
	start := time.Now()
	x.start, x.lastProg = start, start
	if o.Timeout > 0 {
		x.deadline = start.Add(o.Timeout)
	}
	root, err := x.newWorld(nil, 0)
	if err != nil {
		return nil, err
	}
	x.rep.Cloning = root.CanClone() && !o.noCloning
	if o.Strategy == DFS {
		x.visited.trackDepths()
	}
	if o.Symmetry && !o.NoHash && o.Strategy != PCT {
		x.symmetry(root)
	}
	switch o.Strategy {
	case BFS:
		x.bfs(root)
	case DFS:
		x.dfs(root)
	case PCT:
		x.o.NoPOR = true
		x.rep.POR = false
		x.pct()
	default:
		return nil, fmt.Errorf("explore: unknown strategy %q (bfs, dfs, pct, auto)", o.Strategy)
	}
	if x.err != nil {
		return nil, x.err
	}
	r := x.rep
	if r.Stopped == "" {
		r.Stopped = "exhausted"
	}
	r.Pruned = r.PrunedSeen + r.PrunedSleep
	if !o.NoHash && o.Strategy != PCT {
		n := float64(x.visited.n)
		r.CollisionOdds = n * n / 0x1p65
	}
	r.Complete = r.Stopped == "exhausted" && r.Undecided == 0 && o.Strategy != PCT
	r.Pairs = x.pairs.Set()
	r.Elapsed = time.Since(start)
	defer func() { r.spaces = []SpaceVerdict{spaceVerdictOf(r)} }()
	if x.cex != nil {
		// The violation stands whatever budget ran out while its level
		// was being finished; Violations counts the counterexample's
		// properties (the search's rule picks one violating state).
		r.Stopped, r.Complete = "violation", false
		if err := x.finishCounterexample(); err != nil {
			return nil, err
		}
		// Counted from the replayed counterexample, the one record every
		// other field (the verdict, the saved scenario, its story) reads.
		for _, p := range r.Counterexample.Properties {
			r.Violations[p] = 1
		}
	}
	return r, nil
}

func describe(sc *scenario.Scenario, o Options) string {
	sp := sc.Space
	var b strings.Builder
	fmt.Fprintf(&b, "%d holders (%s semantics, TTL %dms, rho %dppm", len(sc.Holders), sc.Semantics, sc.TTL, sc.RhoPPM)
	if sc.CoordinatorDriftPPM != 0 || sc.Holders[0].DriftPPM != 0 {
		fmt.Fprintf(&b, ", clocks drifting %+dppm, coordinator's %+dppm", sc.Holders[0].DriftPPM, sc.CoordinatorDriftPPM)
	}
	if m := sc.Holders[0].Margin; m != 0 {
		fmt.Fprintf(&b, ", margin %d", max(m, 0))
	}
	if r := sc.Holders[0].RenewEvery; r != 0 {
		fmt.Fprintf(&b, ", renew every %dms", r)
	}
	if n := len(sc.Holders); n > 1 && sc.Holders[1].Start != 2 {
		fmt.Fprintf(&b, ", starting %dms apart", sc.Holders[1].Start)
	}
	if w := sc.Holders[0].Work; len(w) > 0 && (len(w) > 1 || w[0].Writes != 1) {
		fmt.Fprintf(&b, ", h1's work %s", workString(w))
	}
	if sc.ReadEvery > 0 {
		fmt.Fprintf(&b, ", a reader every %dms", sc.ReadEvery)
	}
	fmt.Fprintf(&b, "), paths of at most %d moves", o.MaxDepth)
	if o.Strategy != PCT {
		b.WriteString(", every order of the events due at one instant")
	}
	fmt.Fprintf(&b, "; message delays %d..%dms", sc.Network.MinDelay, sc.Network.MaxDelay)
	if sc.Network.DropPPM > 0 {
		b.WriteString(" or lost")
	}
	fmt.Fprintf(&b, ", at most %d messages off the shortest delay", sp.Deviations)
	if sp.MaxFaults > 0 && len(sp.Faults) > 0 {
		ks := make([]string, len(sp.Faults))
		for i, k := range sp.Faults {
			ks[i] = string(k)
		}
		fmt.Fprintf(&b, "; at most %d faults of %s striking at any step", sp.MaxFaults, strings.Join(ks, ","))
	} else {
		b.WriteString("; no faults")
	}
	if sp.Adversary > 0 {
		fmt.Fprintf(&b, "; at most %d adversarial requests (%d kinds) at any step", sp.Adversary, len(scenario.AdversaryMenu(sc.Semantics == "fenced-storage")))
	} else {
		b.WriteString("; no adversarial client")
	}
	return b.String()
}

// workString is a program as "work+writes" items, e.g. "20ms+2w,30ms+1w".
func workString(w []holder.Item) string {
	parts := make([]string, len(w))
	for i, it := range w {
		parts[i] = fmt.Sprintf("%dms+%dw", it.Work, it.Writes)
	}
	return strings.Join(parts, ",")
}

// explorer is one search in progress.
type explorer struct {
	sc       *scenario.Scenario
	pairs    pairs.Sink         // every world's pairs (the union does not depend on the workers' order)
	setting  *runrecord.Setting // sc's, made once: the run properties judge state after state of sc
	o        Options
	props    []string // o.Judges.Properties(), asked once
	rep      *Report
	visited  *visitedSet
	reuse    int   // reuseDistance now
	root     *snap // the root's world, pristine (nil: states are not copied)
	deadline time.Time
	start    time.Time
	polls    int
	lastProg time.Time
	stop     bool
	err      error
	cex      *found
	sym      *sim.Symmetry // non-nil: states are digested canonically
	// spare are worlds depth-first search is done with, whose buffers
	// its next copies reuse (sim.World.CloneInto); nil for the other
	// strategies, whose expansions run on several goroutines.
	spare *spares
	paths *pathSlab // the states' paths (apply); nil: each its own
}

// symmetry turns the symmetry reduction on when the root world is
// symmetric in some holders. Sleep sets go off with it: a sleeping
// transition is named in its state's own naming (sim.World.MoveKey), and
// a visited entry's sleep set compared against another visit's would
// compare two namings when the two visits are permuted images.
func (x *explorer) symmetry(root *sim.World) {
	s, why := root.HolderSymmetry()
	if s == nil {
		x.rep.SymmetryOff = why
		return
	}
	x.sym = s
	for _, c := range s.Classes {
		x.rep.Symmetry = append(x.rep.Symmetry, strings.Join(c, "="))
	}
	x.o.NoPOR, x.rep.POR = true, false
}

// digest is a state's visited-set digest: canonical under the symmetry
// reduction, else its own.
func (x *explorer) digest(w *sim.World) uint64 {
	if x.sym != nil {
		return w.CanonicalHash(x.sym)
	}
	return w.StateHash()
}

// found is the counterexample: the path that reaches it, and its place in
// the counterexample rule's order (found.before, shard.go).
type found struct {
	path     []scenario.Choice // labelled from at when the search ends
	at       *path
	steps    int
	props    []string
	state    uint64 // the violating state's digest
	revealed int    // the depth of the state whose expansion revealed it
}

// MutantSpace returns the space `leasecheck explore --mutant` searches for
// planted bug m by default (mutants.Mutant.ExploreBounds), with the
// mutant's environment applied, and the options that plug it in.
func MutantSpace(m *mutants.Mutant) (*scenario.Scenario, Options) {
	sc := Space(MutantBounds(m))
	m.AdaptSpace(sc)
	return sc, Options{Sim: sim.Planted(m), Implementation: m.Implementation()}
}

// MutantBounds converts a mutant's explore bounds.
func MutantBounds(m *mutants.Mutant) Bounds {
	return m.ExploreBounds()
}
