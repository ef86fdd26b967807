package explore_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

func verdictJSON(t *testing.T, v *explore.Verdict) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shards explores every part of spaces and round-trips each through its
// file format, as the parts of a real sharded run do.
func shards(t *testing.T, spaces []*scenario.Scenario, o explore.Options, n, width int) []*explore.Part {
	t.Helper()
	o.VerifyDigests = true // as mustExplore does
	var parts []*explore.Part
	for i := 1; i <= n; i++ {
		p, err := explore.ExploreShard(spaces, o, explore.Shard{I: i, N: n}, width)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := explore.ReadPart(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("part %d/%d does not read back: %v", i, n, err)
		}
		parts = append(parts, q)
	}
	return parts
}

// TestShardsMergeToTheSingleRun: four parts of a sharded exploration,
// merged, give the single process's verdict byte for byte — its distinct
// states per space on the reference (where nothing is found) and on a
// two-space plan and a clock-drift space, and the same violating state,
// properties and steps on two switch-planted bugs. The split really happened (every part owned some of
// a frontier below which most states lie, and the parts met states others
// explored too), so the equality is not the prefix's alone.
func TestShardsMergeToTheSingleRun(t *testing.T) {
	msc, mo := explore.MutantSpace(mutants.ByName("fence-not-bumped"))
	gsc, gop := explore.MutantSpace(mutants.ByName("greedy-grant"))
	plan := []explore.Bounds{small, {Adversary: 1, Semantics: "fenced-storage"}}
	for _, c := range []struct {
		name      string
		spaces    []*scenario.Scenario
		o         explore.Options
		violation bool
	}{
		{"reference", []*scenario.Scenario{explore.Space(small)}, explore.Options{}, false},
		// The case that found the clock's digest incomplete (internal/sim/state.go:
		// the drift's fraction of a tick): the parts kept other
		// representatives of one digest and reached 37,120 states where
		// one process reached 33,380.
		{"clock-drift", []*scenario.Scenario{explore.Space(explore.Bounds{Faults: []faults.Kind{faults.ClockDrift}, MaxFaults: 1, Deviations: 1})}, explore.Options{}, false},
		{"plan", []*scenario.Scenario{explore.Space(plan[0]), explore.Space(plan[1])}, explore.Options{MaxDepth: 30}, false},
		{"mutant", []*scenario.Scenario{msc}, mo, true},
		{"greedy-grant", []*scenario.Scenario{gsc}, gop, true},
		// Parts split by the canonical digest (the symmetry reduction's).
		{"symmetry", []*scenario.Scenario{explore.Space(symmetric(explore.Bounds{Faults: []faults.Kind{faults.Pause}, MaxFaults: 1, Deviations: 1}))}, explore.Options{Symmetry: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			var single *explore.Report
			if len(c.spaces) == 1 {
				single = mustExplore(t, c.spaces[0], c.o)
			} else {
				var err error
				if single, _, err = explore.ExplorePlan(plan, c.o); err != nil {
					t.Fatal(err)
				}
			}
			if (single.Counterexample != nil) != c.violation {
				t.Fatalf("single run: counterexample %v, want %v", single.Counterexample != nil, c.violation)
			}
			want := verdictJSON(t, explore.VerdictOf(single))
			parts := shards(t, c.spaces, c.o, 4, 8)
			m, err := explore.MergeParts(parts[2], parts[0], parts[3], parts[1]) // any order
			if err != nil {
				t.Fatal(err)
			}
			if got := verdictJSON(t, m.Verdict); got != want {
				t.Fatalf("merged verdict differs from the single run's:\n%s\n%s", got, want)
			}
			if c.violation {
				if m.Status() != 1 || m.Counterexample == nil || m.Counterexample.Scenario == nil {
					t.Fatalf("merged: status %d, counterexample %+v", m.Status(), m.Counterexample)
				}
				// The parts found different violating states (each the
				// least of its own part): the rule chose among them.
				states := map[string]bool{}
				for _, p := range parts {
					if cx := p.Spaces[0].Counterexample; cx != nil {
						states[cx.State] = true
					}
				}
				if len(states) < 2 {
					t.Errorf("every part found the same violating state %v: the merge chose nothing", states)
				}
				t.Logf("%s: %d parts' violating states, merged %s after %d moves, revealed at depth %d", c.name, len(states),
					m.Counterexample.State, m.Counterexample.Steps, m.Counterexample.Revealed)
			} else {
				if m.Status() != 0 || !m.Verdict.Complete {
					t.Fatalf("merged: status %d, complete %v", m.Status(), m.Verdict.Complete)
				}
				sp := m.Spaces[0]
				var partDistinct int64
				for _, p := range parts {
					s := p.Spaces[0]
					if s.Owned == 0 {
						t.Errorf("part %d owns none of the %d frontier states", p.Shard, s.Frontier)
					}
					partDistinct = max(partDistinct, s.Prefix+s.Below)
				}
				total := sp.Prefix + sp.Below
				if sp.SplitDepth < 1 || sp.Below < sp.Prefix || partDistinct >= total {
					t.Errorf("no real split: split depth %d, prefix %d, below %d, largest part %d of %d", sp.SplitDepth, sp.Prefix, sp.Below, partDistinct, total)
				}
				t.Logf("%s: %d distinct = prefix %d (split at depth %d, frontier %d) + %d below; the parts' overlap %d; %s",
					c.name, total, sp.Prefix, sp.SplitDepth, sp.Frontier, sp.Below, sp.Overlap, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

// TestMergeRefusesPartsThatDoNotFit: a missing part, a repeated one, and
// parts of different explorations (another depth bound, another split
// rule, another space) are refused with a message naming what is wrong;
// so is a part whose prefix differs from the others'.
func TestMergeRefusesPartsThatDoNotFit(t *testing.T) {
	sc := []*scenario.Scenario{explore.Space(explore.Bounds{Faults: []faults.Kind{faults.Crash}, MaxFaults: 1})}
	parts := shards(t, sc, explore.Options{}, 3, 4)
	if _, err := explore.MergeParts(parts...); err != nil {
		t.Fatalf("the parts themselves: %v", err)
	}
	other := func(o explore.Options, width int, s []*scenario.Scenario) *explore.Part {
		return shards(t, s, o, 3, width)[1]
	}
	tampered := *parts[1]
	tampered.Spaces = append([]explore.PartSpace(nil), parts[1].Spaces...)
	tampered.Spaces[0].Prefix++
	for _, c := range []struct {
		name  string
		parts []*explore.Part
		want  string
	}{
		{"missing", []*explore.Part{parts[0], parts[2]}, "part 2/3 is missing"},
		{"twice", []*explore.Part{parts[0], parts[1], parts[1], parts[2]}, "part 2/3 is given twice"},
		{"depth", []*explore.Part{parts[0], other(explore.Options{MaxDepth: 50}, 4, sc), parts[2]}, "the depth bound"},
		{"width", []*explore.Part{parts[0], other(explore.Options{}, 5, sc), parts[2]}, "the split rule"},
		{"space", []*explore.Part{parts[0], other(explore.Options{}, 4, []*scenario.Scenario{explore.Space(explore.Bounds{Faults: []faults.Kind{faults.Pause}, MaxFaults: 1})}), parts[2]}, "space 1"},
		{"prefix", []*explore.Part{parts[0], &tampered, parts[2]}, "different prefixes"},
	} {
		if _, err := explore.MergeParts(c.parts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one saying %q", c.name, err, c.want)
		}
	}
	// A part that ran out of its budget leaves the merge incomplete (exit
	// 3), naming the part; it is not a refusal, and no count is claimed.
	starved := other(explore.Options{MaxStates: 50}, 4, sc)
	m, err := explore.MergeParts(parts[0], starved, parts[2])
	if err != nil || m.Status() != 3 || m.Verdict.Complete || !strings.Contains(m.StoppedBy, "part 2/3 stopped by max-states") || m.Verdict.Spaces[0].DistinctStates != 0 {
		t.Errorf("a starved part: err %v, merged %+v", err, m)
	}
	// A violation any part found stands, whatever budget another ran out
	// of (the least one may be in the starved part: Verdict says violation,
	// the state is the least of those found).
	gsc, gop := explore.MutantSpace(mutants.ByName("greedy-grant"))
	gparts := shards(t, []*scenario.Scenario{gsc}, gop, 3, 4)
	gop.MaxStates = 3
	gparts[1] = shards(t, []*scenario.Scenario{gsc}, gop, 3, 4)[1]
	if gparts[1].Spaces[0].Stopped != "max-states" {
		t.Fatalf("the starved part stopped by %s", gparts[1].Spaces[0].Stopped)
	}
	if m, err := explore.MergeParts(gparts...); err != nil || m.Status() != 1 || m.Verdict.Result != "violation" {
		t.Errorf("a violation beside a starved part: err %v, merged %+v", err, m)
	}
	// A part's file with its fingerprints cut is refused when read or merged.
	cut := *parts[0]
	cut.Spaces = append([]explore.PartSpace(nil), parts[0].Spaces...)
	cut.Spaces[0].Below++
	if _, err := explore.MergeParts(&cut, parts[1], parts[2]); err == nil || !strings.Contains(err.Error(), "fingerprints") {
		t.Errorf("a part with a wrong fingerprint count: %v", err)
	}
}
