package explore

// Sharded exploration: N processes that never talk to one another explore
// disjoint parts of one breadth-first search, and `leasecheck merge`
// combines their part files into exactly what one process reports.
//
// Every part runs the same deterministic prefix: the search from the root,
// identical in every part, down to the split depth — the first depth whose
// previous level held at least Width·N distinct states (a rule of the
// flags and the space, never of timing). The states first reached at the
// split depth (the frontier) are dealt out by digest (mix(digest) mod N);
// each part explores, below the frontier, only from the frontier states it
// owns, and remembers the others as explored elsewhere (Options.Admit: a
// later visit of one with transitions awake that were asleep explores just
// those, as a re-expansion does). Each part records the digests of the
// states it reached below the split depth.
//
// What merges exactly, and why. The prefix is identical in every part:
// until the first frontier state is queued every part's queue is the
// single search's, and the prefix's states are all found by expanding
// states above the split depth, which precede every frontier state in the
// breadth-first queue. Below it, a part's search differs from the single
// search's only in which states were seen before, which changes sleep sets
// and which path reaches a state first — so the counts of transitions,
// pruned moves and paths depend on the order (they are reported as the
// parts' work, summed, never as the single run's). The set of distinct
// states does not: sleep sets with the visited-set rule of search.go visit
// every state reachable within the bounds, at its shortest depth, whatever
// the order, and a shortest path to a state below the frontier passes
// through the frontier state its owner explores. So distinct states =
// |prefix| + |union of the parts' digests|, exactly.
//
// The counterexample rule (the same for one process and for a merge): the
// violating state revealed by the shallowest expansion (a state flagged
// when reached is revealed by its parent's expansion, a violation judged at
// a path's end by its own), then the fewest moves, then the least state
// digest. Breadth-first search therefore finishes the level in which it
// finds a violation before it stops (search.go: pastViolationLevel). A rule
// by the search's path order would not merge: which path reaches a state
// first, and which transitions are asleep on it, depend on what else was
// seen. The path reported with the state is one shortest path to it (the
// first the part that reports it found); the state, its properties and its
// steps are the verdict.

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/internal/scenario"
)

// before reports whether violation f comes before g in the counterexample
// rule's order (shard.go's header).
func (f *found) before(g *found) bool {
	if f.revealed != g.revealed {
		return f.revealed < g.revealed
	}
	if f.steps != g.steps {
		return f.steps < g.steps
	}
	return f.state < g.state
}

// pastViolationLevel: breadth-first search has found a violation revealed
// at a shallower depth than it's, so it is not expanded (the level is done).
func (x *explorer) pastViolationLevel(it *item) bool {
	return x.cex != nil && x.o.Strategy == BFS && int(it.depth) > x.cex.revealed
}

// Shard is part I of N of a sharded exploration: the campaign's shard
// (campaign.Shard converts to it), which the explorer, a driver, does not
// import.
type Shard struct{ I, N int }

// PartKind and PartVersion mark an exploration part file.
const (
	PartKind    = "leasecheck-explore-part"
	PartVersion = 1
)

// DefaultShardWidth is the split rule's default: the frontier is the first
// level after one of at least DefaultShardWidth·N distinct states.
const DefaultShardWidth = 128

// Part is what one part of a sharded exploration writes: a header that
// names the exploration (so that parts of different ones are refused) and,
// per space explored, the prefix's counts, the digests of the states the
// part reached below the split depth, its counterexample and its work.
type Part struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
	// Shard is this part, 1 <= Shard <= Shards (as run --shard I/N).
	Shard  int        `json:"shard"`
	Shards int        `json:"shards"`
	Config PartConfig `json:"config"`
	// Spaces are the spaces explored, in plan order; a part stops after a
	// space it found a violation in or ran out of a budget in.
	Spaces []PartSpace `json:"spaces"`
	// Budget is the part's own budgets (they may differ between parts:
	// they decide only whether a part finished).
	Budget string `json:"budget"`
	// Elapsed is the part's wall time in milliseconds (a measurement).
	ElapsedMs int64 `json:"elapsed_ms"`
}

// PartConfig is everything that must be equal in the parts of one
// exploration.
type PartConfig struct {
	Strategy       Strategy `json:"strategy"`
	Implementation string   `json:"implementation"`
	DepthBound     int      `json:"depth_bound"`
	Width          int      `json:"width"`
	// Plan lists each planned space: its description and the SHA-256 of
	// its scenario (which fixes the space exactly).
	Plan []PlanSpace `json:"plan"`
}

// PlanSpace names one space of a plan.
type PlanSpace struct {
	Bounds   string `json:"bounds"`
	Scenario string `json:"scenario_sha256"`
}

// PartSpace is one part's exploration of one space.
type PartSpace struct {
	// SplitDepth is the frontier's depth (-1: the space never got wide
	// enough; every part explored all of it, and Prefix is all of it).
	SplitDepth int   `json:"split_depth"`
	Frontier   int64 `json:"frontier"`
	Owned      int64 `json:"owned"`
	// Prefix counts the distinct states at depth <= SplitDepth (the
	// frontier's included): every part's.
	Prefix int64 `json:"prefix"`
	// Below counts the digests in Fingerprints: the distinct states this
	// part reached below the split depth. Fingerprints is them sorted,
	// each as the uvarint of its difference from the previous one,
	// deflated, in base64.
	Below        int64  `json:"below"`
	Fingerprints string `json:"fingerprints"`
	// Stopped is as Report.Stopped; Undecided and Disagreement as there.
	Stopped        string         `json:"stopped"`
	Undecided      int64          `json:"undecided"`
	Disagreement   string         `json:"disagreement,omitempty"`
	Counterexample *PartViolation `json:"counterexample,omitempty"`
	Work           Work           `json:"work"`
}

// PartViolation is a part's counterexample: its place in the rule's order,
// and the scenario that replays it.
type PartViolation struct {
	Property    string             `json:"property"`
	Properties  []string           `json:"properties"`
	Steps       int                `json:"steps"`
	Revealed    int                `json:"revealed"`
	State       string             `json:"state"`
	Ops         int                `json:"ops"`
	Explanation string             `json:"explanation"`
	Scenario    *scenario.Scenario `json:"scenario"`
}

// Work is a search's order-dependent counts (Report's): what one process
// or the parts did, not a property of the space.
type Work struct {
	States      int64 `json:"states"`
	PrunedSeen  int64 `json:"pruned_seen"`
	PrunedSleep int64 `json:"pruned_sleep"`
	Paths       int64 `json:"paths"`
	Judged      int64 `json:"judged"`
	DepthCut    int64 `json:"depth_cut"`
	MaxDepth    int   `json:"max_depth"`
}

func (w *Work) add(o Work) {
	w.States += o.States
	w.PrunedSeen += o.PrunedSeen
	w.PrunedSleep += o.PrunedSleep
	w.Paths += o.Paths
	w.Judged += o.Judged
	w.DepthCut += o.DepthCut
	w.MaxDepth = max(w.MaxDepth, o.MaxDepth)
}

func workOf(r *Report) Work {
	return Work{States: r.States, PrunedSeen: r.PrunedSeen, PrunedSleep: r.PrunedSleep, Paths: r.Paths, Judged: r.Judged,
		DepthCut: r.DepthCut, MaxDepth: r.MaxDepth}
}

// PlanOf names the spaces of a plan for a part's header.
func PlanOf(spaces []*scenario.Scenario, o Options) []PlanSpace {
	o.defaults()
	out := make([]PlanSpace, len(spaces))
	for i, sc := range spaces {
		sum := sha256.Sum256(sc.Marshal())
		out[i] = PlanSpace{Bounds: describe(sc, o), Scenario: hex.EncodeToString(sum[:])}
	}
	return out
}

// ExploreShard explores part sh.I of sh.N (1 <= I <= N) of the spaces, one
// after another as ExplorePlan does (o.Timeout and o.MaxStates bound them
// as a whole), breadth-first, and returns the part file's contents. width
// is the split rule's (0: DefaultShardWidth).
func ExploreShard(spaces []*scenario.Scenario, o Options, sh Shard, width int) (*Part, error) {
	if sh.N < 1 || sh.I < 1 || sh.I > sh.N {
		return nil, fmt.Errorf("explore: shard %d/%d: want I/N with 1 <= I <= N", sh.I, sh.N)
	}
	o.defaults()
	if o.Strategy != BFS {
		return nil, fmt.Errorf("explore: a sharded exploration is breadth-first (the strategy is %s): its distinct states are the same in any order only breadth-first, with the depth bound", o.Strategy)
	}
	if o.NoHash {
		return nil, errors.New("explore: a sharded exploration deals states out by digest: it needs state hashing (no --no-hash)")
	}
	if width <= 0 {
		width = DefaultShardWidth
	}
	start := time.Now()
	p := &Part{Kind: PartKind, Version: PartVersion, Shard: sh.I, Shards: sh.N,
		Config: PartConfig{Strategy: o.Strategy, Implementation: o.Implementation, DepthBound: o.MaxDepth, Width: width, Plan: PlanOf(spaces, o)},
		Budget: fmt.Sprintf("timeout %s, max-memory %d, max-states %d", o.Timeout, o.MaxMemory, o.MaxStates)}
	var distinct int64
	for i, sc := range spaces {
		so := o
		if o.Timeout > 0 {
			if so.Timeout = o.Timeout - time.Since(start); so.Timeout <= 0 {
				p.Spaces = append(p.Spaces, PartSpace{SplitDepth: -1, Stopped: "timeout"})
				break
			}
		}
		if o.MaxStates > 0 {
			if so.MaxStates = o.MaxStates - distinct; so.MaxStates <= 0 {
				p.Spaces = append(p.Spaces, PartSpace{SplitDepth: -1, Stopped: "max-states"})
				break
			}
		}
		sp, rep, err := exploreShardSpace(sc, so, sh, width)
		if err != nil {
			return nil, fmt.Errorf("space %d of %d: %w", i+1, len(spaces), err)
		}
		distinct += rep.DistinctStates
		p.Spaces = append(p.Spaces, *sp)
		if sp.Stopped != "exhausted" || sp.Disagreement != "" {
			break
		}
	}
	p.ElapsedMs = time.Since(start).Milliseconds()
	return p, nil
}

// exploreShardSpace explores one space's part.
func exploreShardSpace(sc *scenario.Scenario, o Options, sh Shard, width int) (*PartSpace, *Report, error) {
	sp := &PartSpace{SplitDepth: -1, Prefix: 1} // the root
	var level []int64                           // distinct states first reached at each depth
	var below []uint64
	threshold := int64(width) * int64(sh.N)
	o.Admit = func(depth int, h uint64) bool {
		// Admissions come in breadth-first order, so when the first state
		// of a depth comes, the level above it is complete.
		if sp.SplitDepth < 0 {
			if depth >= len(level) {
				if depth >= 1 && depth-1 < len(level) && level[depth-1] >= threshold {
					sp.SplitDepth = depth
				}
				for len(level) <= depth {
					level = append(level, 0)
				}
			}
			level[depth]++
		}
		switch {
		case sp.SplitDepth < 0 || depth < sp.SplitDepth:
			sp.Prefix++
			return true
		case depth == sp.SplitDepth:
			sp.Prefix++
			sp.Frontier++
			if owner(h, sh.N) == sh.I {
				sp.Owned++
				return true
			}
			return false
		}
		below = append(below, h)
		return true
	}
	if len(level) == 0 {
		level = append(level, 1)
	}
	rep, err := Explore(sc, o)
	if err != nil {
		return nil, nil, err
	}
	if sp.Prefix+int64(len(below)) != rep.DistinctStates {
		return nil, nil, fmt.Errorf("explore: shard bookkeeping: %d prefix + %d below the frontier, but %d distinct states (a bug in leasecheck)",
			sp.Prefix, len(below), rep.DistinctStates)
	}
	sp.Below = int64(len(below))
	sp.Fingerprints = encodeDigests(below)
	sp.Stopped, sp.Undecided, sp.Disagreement = rep.Stopped, rep.Undecided, rep.Disagreement
	sp.Work = workOf(rep)
	if cx := rep.Counterexample; cx != nil {
		sp.Counterexample = &PartViolation{Property: cx.Property, Properties: cx.Properties, Steps: cx.Steps, Revealed: cx.Revealed,
			State: cx.State, Ops: cx.Ops, Explanation: cx.Explanation, Scenario: cx.Scenario}
	}
	return sp, rep, nil
}

// owner is the part (1..n) that owns a frontier state: its digest mixed
// (splitmix64's finalizer, so that digests differing in few bits spread)
// modulo n.
func owner(h uint64, n int) int {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return int(h%uint64(n)) + 1
}

// encodeDigests sorts ds and encodes them as PartSpace.Fingerprints says.
func encodeDigests(ds []uint64) string {
	slices.Sort(ds)
	var raw bytes.Buffer
	var buf [binary.MaxVarintLen64]byte
	var prev uint64
	for _, d := range ds {
		raw.Write(buf[:binary.PutUvarint(buf[:], d-prev)])
		prev = d
	}
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, flate.BestSpeed)
	fw.Write(raw.Bytes())
	fw.Close()
	return base64.StdEncoding.EncodeToString(z.Bytes())
}

// decodeDigests reverses encodeDigests, checking that there are n strictly
// increasing digests.
func decodeDigests(s string, n int64) ([]uint64, error) {
	z, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("fingerprints: %v", err)
	}
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(z)))
	if err != nil {
		return nil, fmt.Errorf("fingerprints: %v", err)
	}
	out := make([]uint64, 0, n)
	r := bytes.NewReader(raw)
	var prev uint64
	for r.Len() > 0 {
		d, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("fingerprints: %v", err)
		}
		if len(out) > 0 && d == 0 {
			return nil, errors.New("fingerprints: a digest repeats")
		}
		prev += d
		out = append(out, prev)
	}
	if int64(len(out)) != n {
		return nil, fmt.Errorf("fingerprints: %d digests, the header says %d", len(out), n)
	}
	return out, nil
}

// Verdict is what an exploration established, in terms that do not depend
// on the order its search took: one process's report and the merge of the
// parts of a sharded one give the same Verdict, byte for byte in JSON.
type Verdict struct {
	// Result: "ok" (no violation; Complete says whether the bounded space
	// was exhausted), "violation", or "disagreement" (a bug in leasecheck).
	Result   string `json:"result"`
	Complete bool   `json:"complete"`
	// Stopped is the last space's Report.Stopped.
	Stopped string         `json:"stopped"`
	Spaces  []SpaceVerdict `json:"spaces"`
	// Counterexample is the violating state the rule picks (shard.go).
	Counterexample *VerdictViolation `json:"counterexample,omitempty"`
}

// SpaceVerdict is one explored space's result: its distinct states when
// it was exhausted (a violation or a budget leaves them order-dependent).
type SpaceVerdict struct {
	Bounds         string `json:"bounds"`
	Stopped        string `json:"stopped"`
	DistinctStates int64  `json:"distinct_states,omitempty"`
}

// VerdictViolation is a counterexample's order-independent part.
type VerdictViolation struct {
	Space      int      `json:"space"`
	Property   string   `json:"property"`
	Properties []string `json:"properties"`
	Steps      int      `json:"steps"`
	Revealed   int      `json:"revealed"`
	State      string   `json:"state"`
}

func spaceVerdictOf(r *Report) SpaceVerdict {
	v := SpaceVerdict{Bounds: r.Bounds, Stopped: r.Stopped}
	if r.Stopped == "exhausted" {
		v.DistinctStates = r.DistinctStates
	}
	return v
}

// VerdictOf returns rep's verdict (before Minimize, which replaces the
// counterexample by one of a smaller world).
func VerdictOf(rep *Report) *Verdict {
	v := &Verdict{Result: "ok", Complete: rep.Complete, Stopped: rep.Stopped, Spaces: slices.Clone(rep.spaces)}
	if cx := rep.Counterexample; cx != nil {
		v.Result = "violation"
		v.Counterexample = &VerdictViolation{Space: len(v.Spaces), Property: cx.Property, Properties: cx.Properties, Steps: cx.Steps,
			Revealed: cx.Revealed, State: cx.State}
	}
	if rep.Disagreement != "" {
		v.Result = "disagreement"
	}
	return v
}
