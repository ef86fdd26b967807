package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/leasecheck/leasecheck/internal/explore"
)

// explorePartFiles reports whether files are exploration parts; a mix of
// parts and sweep summaries is refused, naming one of each.
func explorePartFiles(files []string) (bool, error) {
	var part, other string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return false, err
		}
		isPart := explore.IsPart(f)
		f.Close()
		if isPart {
			part = name
		} else {
			other = name
		}
	}
	if part != "" && other != "" {
		return false, fmt.Errorf("%s is an exploration part (explore --shard) and %s is not: not one campaign", part, other)
	}
	return part != "", nil
}

func mergeExplore(files []string, out string, text bool, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "leasecheck merge: %v\n", err)
		return exitUsage
	}
	parts := make([]*explore.Part, len(files))
	for i, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return fail(err)
		}
		p, err := explore.ReadPart(r)
		r.Close()
		if err != nil {
			return fail(fmt.Errorf("%s: %w", f, err))
		}
		parts[i] = p
	}
	m, err := explore.MergeParts(parts...)
	if err != nil {
		return fail(err)
	}
	file := ""
	if cx := m.Counterexample; cx != nil && out != "" {
		name := counterexampleName(m.Config.Strategy, strings.TrimPrefix(m.Config.Implementation, "mutant:"), cx.Property)
		if file, err = saveCounterexample(out, name, cx.Scenario, cx.Property); err != nil {
			return fail(err)
		}
	}
	if text {
		printMerged(stdout, m, file)
	} else {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			return fail(err)
		}
	}
	switch {
	case m.Disagreement != "":
		fmt.Fprintf(stderr, "leasecheck merge: %s\n", m.Disagreement)
	case m.StoppedBy != "" && m.Counterexample == nil:
		fmt.Fprintf(stderr, "leasecheck merge: incomplete: %s\n", m.StoppedBy)
	}
	return m.Status()
}

// printMerged renders a merged exploration for people.
func printMerged(w io.Writer, m *explore.Merged, saved string) {
	c := m.Config
	fmt.Fprintf(w, "merged %d exploration parts (strategy %s, paths of at most %d moves, split after a level of %d states per part)\n",
		m.Shards, c.Strategy, c.DepthBound, c.Width)
	for i, sv := range m.Verdict.Spaces {
		fmt.Fprintf(w, "space %d: %s\n", i+1, sv.Bounds)
		if i < len(m.Spaces) {
			s := m.Spaces[i]
			if s.SplitDepth >= 0 {
				fmt.Fprintf(w, "  split at depth %d (%d frontier states): %d states in the common prefix + %d below it (the parts met %d states another part also explored)\n",
					s.SplitDepth, s.Frontier, s.Prefix, s.Below, s.Overlap)
			} else {
				fmt.Fprintf(w, "  never wide enough to split: every part explored all %d states\n", s.Prefix)
			}
		}
		if sv.DistinctStates > 0 {
			fmt.Fprintf(w, "  %s: %s distinct states\n", sv.Stopped, thousands(sv.DistinctStates))
		} else {
			fmt.Fprintf(w, "  %s\n", sv.Stopped)
		}
	}
	fmt.Fprintf(w, "work of the parts (not a single run's counts): %s states reached, %s seen before, %s commuting orders pruned, %s paths judged\n",
		thousands(m.Work.States), thousands(m.Work.PrunedSeen), thousands(m.Work.PrunedSleep), thousands(m.Work.Paths))
	switch v := m.Verdict; {
	case m.Disagreement != "":
		fmt.Fprintf(w, "\nBUG IN LEASECHECK: %s\n", m.Disagreement)
	case v.Counterexample != nil:
		cx := m.Counterexample
		fmt.Fprintf(w, "\nFAIL: %s after %d moves in space %d (state %s, revealed at depth %d)\n  %s\n", cx.Property, cx.Steps, v.Counterexample.Space, cx.State, cx.Revealed, cx.Explanation)
		if saved != "" {
			fmt.Fprintf(w, "  saved: %s (replay: leasecheck repro %s)\n", saved, saved)
		}
	case v.Complete:
		fmt.Fprintln(w, "\nOK: the whole bounded space was explored; no violation in it")
	default:
		fmt.Fprintf(w, "\nINCOMPLETE: %s; no violation in the part explored\n", m.StoppedBy)
	}
}
