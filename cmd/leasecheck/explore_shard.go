package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/explore"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// runExploreShard explores part sh of spaces, writes the part file and
// prints what the part did. Its exit status is the part's: 0 nothing found
// in it, 1 a violation (the merge picks the counterexample and saves it),
// 2 a disagreement, 3 a budget ran out.
func runExploreShard(spaces []*scenario.Scenario, o explore.Options, sh campaign.Shard, width int, file string, stdout, stderr io.Writer) int {
	if o.Strategy != explore.BFS {
		fmt.Fprintf(stderr, "leasecheck explore: --shard explores breadth-first (not --strategy %s): only there are the distinct states the same in any order\n", o.Strategy)
		return exitUsage
	}
	if width < 1 {
		fmt.Fprintln(stderr, "leasecheck explore: --shard-width must be >= 1")
		return exitUsage
	}
	p, err := explore.ExploreShard(spaces, o, explore.Shard(sh), width)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
		return exitUsage
	}
	if err := writePart(file, p); err != nil {
		fmt.Fprintf(stderr, "leasecheck explore: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "explored part %d/%d of %d planned spaces (%s); part written to %s\n", p.Shard, p.Shards, len(p.Config.Plan), p.Budget, file)
	status := exitOK
	for i, s := range p.Spaces {
		fmt.Fprintf(stdout, "space %d: %s\n", i+1, p.Config.Plan[i].Bounds)
		if s.SplitDepth >= 0 {
			fmt.Fprintf(stdout, "  split at depth %d: %d states in the common prefix, %d of its %d frontier states this part's; %d distinct states below it\n",
				s.SplitDepth, s.Prefix, s.Owned, s.Frontier, s.Below)
		} else {
			fmt.Fprintf(stdout, "  never wide enough to split (--shard-width %d): every part explores all %d states\n", width, s.Prefix)
		}
		fmt.Fprintf(stdout, "  %s; work %d states reached, %d paths\n", s.Stopped, s.Work.States, s.Work.Paths)
		switch {
		case s.Disagreement != "":
			fmt.Fprintf(stderr, "leasecheck explore: %s\n", s.Disagreement)
			status = exitUsage
		case s.Counterexample != nil:
			cx := s.Counterexample
			fmt.Fprintf(stdout, "  violation: %s after %d moves (state %s); leasecheck merge picks the counterexample of all parts\n", cx.Property, cx.Steps, cx.State)
			status = exitViolation
		case s.Stopped != "exhausted":
			fmt.Fprintf(stderr, "leasecheck explore: part %d/%d stopped by %s in space %d: raise the budget (--timeout, --max-memory, --max-states)\n", p.Shard, p.Shards, s.Stopped, i+1)
			status = exitUnknown
		case s.Undecided > 0:
			status = exitUnknown
		}
	}
	return status
}

// writePart writes p to file whole or not at all (a retried pod rewrites
// it; a merge never reads half a part).
func writePart(file string, p *explore.Part) error {
	if dir := filepath.Dir(file); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
