package explore

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
)

// ReadPart reads an exploration part file (ExploreShard's, as JSON),
// strictly: an unknown field, another kind or version, or counts that do
// not fit together are refused.
func ReadPart(r io.Reader) (*Part, error) {
	d := json.NewDecoder(r)
	d.DisallowUnknownFields()
	var p Part
	if err := d.Decode(&p); err != nil {
		return nil, err
	}
	if p.Kind != PartKind {
		return nil, fmt.Errorf("not an exploration part (kind %q, want %q)", p.Kind, PartKind)
	}
	if p.Version != PartVersion {
		return nil, fmt.Errorf("exploration part version %d (this leasecheck reads %d)", p.Version, PartVersion)
	}
	if p.Shards < 1 || p.Shard < 1 || p.Shard > p.Shards {
		return nil, fmt.Errorf("exploration part: shard %d/%d: want 1 <= I <= N", p.Shard, p.Shards)
	}
	if len(p.Spaces) == 0 || len(p.Spaces) > len(p.Config.Plan) {
		return nil, fmt.Errorf("exploration part: %d spaces explored of %d planned", len(p.Spaces), len(p.Config.Plan))
	}
	for i, s := range p.Spaces {
		if s.Prefix < 0 || s.Below < 0 || s.Owned > s.Frontier || (s.SplitDepth < 0) != (s.Frontier == 0) {
			return nil, fmt.Errorf("exploration part: space %d: inconsistent counts (prefix %d, below %d, frontier %d, owned %d, split depth %d)",
				i+1, s.Prefix, s.Below, s.Frontier, s.Owned, s.SplitDepth)
		}
	}
	return &p, nil
}

// IsPart reports whether r holds a JSON object whose "kind" is an
// exploration part's (for a merge command that reads both kinds of
// parts). It reads the object's fields only up to "kind", which a part
// file has first: never a whole part.
func IsPart(r io.Reader) bool {
	d := json.NewDecoder(r)
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return false
		}
		if k == "kind" {
			var kind string
			return d.Decode(&kind) == nil && kind == PartKind
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// Merged is the merge of every part of a sharded exploration.
type Merged struct {
	Kind   string     `json:"kind"`
	Shards int        `json:"shards"`
	Config PartConfig `json:"config"`
	// Verdict is what one process exploring the same spaces reports
	// (Report.Verdict), byte for byte.
	Verdict *Verdict `json:"verdict"`
	// Spaces says how each explored space was split and merged.
	Spaces []MergedSpace `json:"spaces"`
	// Counterexample is the violation the rule picks, with the scenario
	// of the part that found it (leasecheck repro replays it).
	Counterexample *PartViolation `json:"counterexample,omitempty"`
	// Undecided counts the histories the checker's budget left undecided:
	// the space is explored but not proved.
	Undecided int64 `json:"undecided"`
	// Disagreement is a part's: a bug in leasecheck.
	Disagreement string `json:"disagreement,omitempty"`
	// StoppedBy names the part whose budget ended an incomplete merge.
	StoppedBy string `json:"stopped_by,omitempty"`
	// Work is the parts' order-dependent counts, summed: what they did
	// (more than one process would: parts meet states below the frontier
	// that others explore too), not the single run's counts.
	Work Work `json:"work"`
}

// MergedSpace is one space's split and union.
type MergedSpace struct {
	Bounds     string `json:"bounds"`
	SplitDepth int    `json:"split_depth"`
	Frontier   int64  `json:"frontier"`
	Prefix     int64  `json:"prefix"`
	// Below is the union of the parts' digests below the split depth;
	// Overlap how many of the parts' digests were another part's too
	// (duplicated work).
	Below   int64 `json:"below"`
	Overlap int64 `json:"overlap"`
}

// Status is the command's exit status for m, as explore's: 0 no violation,
// 1 a violation, 2 a disagreement (a bug in leasecheck), 3 incomplete.
func (m *Merged) Status() int {
	switch {
	case m.Disagreement != "":
		return 2
	case m.Counterexample != nil:
		return 1
	case m.Verdict.Complete:
		return 0
	}
	return 3
}

// MergeParts combines every part of one sharded exploration, given in any
// order, into the single run's verdict. It refuses parts of different
// explorations (a different plan, implementation, bound or split rule), a
// missing or repeated part, and parts whose common prefix differs (a
// different build, or a bug in leasecheck).
func MergeParts(parts ...*Part) (*Merged, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no exploration parts")
	}
	ps := slices.Clone(parts)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Shard < ps[j].Shard })
	a := ps[0]
	n := a.Shards
	byShard := make([]*Part, n+1)
	for _, p := range ps {
		switch {
		case p.Shards != n:
			return nil, fmt.Errorf("merge: exploration parts %d/%d and %d/%d: not one exploration", a.Shard, n, p.Shard, p.Shards)
		case !reflect.DeepEqual(p.Config, a.Config):
			return nil, fmt.Errorf("merge: exploration parts %d/%d and %d/%d differ in %s: not one exploration", a.Shard, n, p.Shard, n, configDiff(a.Config, p.Config))
		case byShard[p.Shard] != nil:
			return nil, fmt.Errorf("merge: exploration part %d/%d is given twice", p.Shard, n)
		}
		byShard[p.Shard] = p
	}
	for i := 1; i <= n; i++ {
		if byShard[i] == nil {
			return nil, fmt.Errorf("merge: exploration part %d/%d is missing (a part that did not finish, or was not given)", i, n)
		}
	}
	m := &Merged{Kind: "leasecheck-explore-merged", Shards: n, Config: a.Config, Verdict: &Verdict{Result: "ok"}}
	for _, p := range ps {
		for _, s := range p.Spaces {
			m.Work.add(s.Work)
		}
	}
	for si, plan := range a.Config.Plan {
		var here []*PartSpace
		for _, p := range ps {
			if si < len(p.Spaces) {
				here = append(here, &p.Spaces[si])
			}
		}
		if len(here) == 0 {
			break // every part stopped before this space
		}
		sv := SpaceVerdict{Bounds: plan.Bounds}
		// A violation or a disagreement in this space ends the plan,
		// whatever else a part did.
		var best *PartViolation
		for _, s := range here {
			if s.Disagreement != "" && m.Disagreement == "" {
				m.Disagreement = s.Disagreement
			}
			if cx := s.Counterexample; cx != nil && (best == nil || violationBefore(cx, best)) {
				best = cx
			}
		}
		if best != nil || m.Disagreement != "" {
			sv.Stopped = "violation"
			if best == nil {
				sv.Stopped = "exhausted"
			}
			m.Verdict.Spaces = append(m.Verdict.Spaces, sv)
			m.Verdict.Stopped = sv.Stopped
			if best != nil {
				m.Verdict.Result = "violation"
				m.Counterexample = best
				m.Verdict.Counterexample = &VerdictViolation{Space: si + 1, Property: best.Property, Properties: best.Properties,
					Steps: best.Steps, Revealed: best.Revealed, State: best.State}
			}
			if m.Disagreement != "" {
				m.Verdict.Result = "disagreement"
			}
			return m, nil
		}
		if len(here) < n {
			missing := []int{}
			for _, p := range ps {
				if si >= len(p.Spaces) {
					missing = append(missing, p.Shard)
				}
			}
			return nil, fmt.Errorf("merge: exploration parts %v stopped before space %d without a violation or a budget there", missing, si+1)
		}
		// A part that ran out of a budget here (with no violation found
		// by any) leaves the space, and the plan, incomplete.
		for i, s := range here {
			if s.Stopped != "exhausted" {
				m.StoppedBy = fmt.Sprintf("exploration part %d/%d stopped by %s in space %d", ps[i].Shard, n, s.Stopped, si+1)
				sv.Stopped = s.Stopped
				m.Verdict.Spaces = append(m.Verdict.Spaces, sv)
				m.Verdict.Stopped = s.Stopped
				return m, nil
			}
		}
		// Every part exhausted the space: its prefix must be every part's.
		s0 := here[0]
		ms := MergedSpace{Bounds: plan.Bounds, SplitDepth: s0.SplitDepth, Frontier: s0.Frontier, Prefix: s0.Prefix}
		var owned, undecided int64
		for i, s := range here {
			if s.SplitDepth != s0.SplitDepth || s.Frontier != s0.Frontier || s.Prefix != s0.Prefix {
				return nil, fmt.Errorf("merge: space %d: exploration parts %d/%d and %d/%d explored different prefixes "+
					"(split depth %d and %d, frontier %d and %d, prefix %d and %d): a different build, or a bug in leasecheck",
					si+1, ps[0].Shard, n, ps[i].Shard, n, s0.SplitDepth, s.SplitDepth, s0.Frontier, s.Frontier, s0.Prefix, s.Prefix)
			}
			owned += s.Owned
			undecided += s.Undecided
		}
		if s0.SplitDepth >= 0 && owned != s0.Frontier {
			return nil, fmt.Errorf("merge: space %d: the parts own %d of the %d frontier states: not a partition (a bug in leasecheck)", si+1, owned, s0.Frontier)
		}
		union, total, err := unionDigests(here)
		if err != nil {
			return nil, fmt.Errorf("merge: space %d: %w", si+1, err)
		}
		ms.Below, ms.Overlap = union, total-union
		m.Spaces = append(m.Spaces, ms)
		sv.Stopped, sv.DistinctStates = "exhausted", ms.Prefix+union
		m.Verdict.Spaces = append(m.Verdict.Spaces, sv)
		m.Verdict.Stopped = "exhausted"
		if undecided > 0 {
			m.Undecided += undecided
			m.StoppedBy = fmt.Sprintf("%d histories undecided by the checker's budget", m.Undecided)
		}
		if si == len(a.Config.Plan)-1 && m.Undecided == 0 {
			m.Verdict.Complete = true
		}
	}
	return m, nil
}

// violationBefore is found.before on parts' counterexamples.
func violationBefore(a, b *PartViolation) bool {
	if a.Revealed != b.Revealed {
		return a.Revealed < b.Revealed
	}
	if a.Steps != b.Steps {
		return a.Steps < b.Steps
	}
	return a.State < b.State // fixed-width hex: ordered as the digests
}

// unionDigests counts the distinct digests of the spaces' parts, and all
// of them.
func unionDigests(spaces []*PartSpace) (union, total int64, err error) {
	var all []uint64
	for _, s := range spaces {
		ds, err := decodeDigests(s.Fingerprints, s.Below)
		if err != nil {
			return 0, 0, err
		}
		all = append(all, ds...)
	}
	slices.Sort(all)
	return int64(len(slices.Compact(all))), int64(len(all)), nil
}

func configDiff(a, b PartConfig) string {
	switch {
	case a.Strategy != b.Strategy:
		return fmt.Sprintf("strategy (%s, %s)", a.Strategy, b.Strategy)
	case a.Implementation != b.Implementation:
		return fmt.Sprintf("implementation (%q, %q)", a.Implementation, b.Implementation)
	case a.DepthBound != b.DepthBound:
		return fmt.Sprintf("the depth bound (%d, %d)", a.DepthBound, b.DepthBound)
	case a.Width != b.Width:
		return fmt.Sprintf("the split rule (--shard-width %d, %d)", a.Width, b.Width)
	case len(a.Plan) != len(b.Plan):
		return fmt.Sprintf("the plan (%d spaces, %d)", len(a.Plan), len(b.Plan))
	}
	for i := range a.Plan {
		if a.Plan[i] != b.Plan[i] {
			return fmt.Sprintf("space %d (%s; %s)", i+1, a.Plan[i].Bounds, b.Plan[i].Bounds)
		}
	}
	return "their configuration"
}
