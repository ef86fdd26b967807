package explore_test

import (
	"encoding/json"
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shapeBugs are planted in the reference's source (go build -overlay, as
// sourceBugs), none through its Bug switches, each needing one workload
// shape at an extreme (and at most one fault) to show: two writes under
// one grant, a reader, a short or long renew interval, a message delay
// past the request timeout, clocks at their drift bounds with no delay and
// no margin, three holders.
var shapeBugs = []sourceBug{
	// Writes per grant.
	{name: "expiry-checked-on-first-write", class: "two writes under one grant, the second late", file: "internal/impl/memstore/store.go",
		edits: [][2]string{
			{"\tfreeAt int64\n}", "\tfreeAt int64\n\twrote  int64\n}"},
			{"\tif !s.live(now, e.expiry) && s.bugs&BugWriteSkipsExpiry == 0 {", "\tif !s.live(now, e.expiry) && s.bugs&BugWriteSkipsExpiry == 0 && e.wrote != e.fence {"},
			{"\te.data, e.written = value, true\n", "\te.data, e.written = value, true\n\te.wrote = e.fence\n"},
		}},
	{name: "write-ack-extends-deadline", class: "several writes under one grant", file: "internal/impl/holder/holder.go",
		edits: [][2]string{{"\tcase model.Write:\n\t\tif r.OK {\n\t\t\th.writesLeft--\n",
			"\tcase model.Write:\n\t\tif r.OK {\n\t\t\th.extend(sent, now, 0) // an accepted write taken for a renewal\n\t\t\th.writesLeft--\n"}}},
	{name: "resource-refuses-repeat-fence", class: "two writes under one grant, fenced storage", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"stale := fence < highest\n", "stale := fence <= highest\n"}}},
	{name: "coordinator-keeps-first-write", class: "two writes under one grant and a reader", file: "internal/impl/memstore/store.go",
		edits: [][2]string{
			{"\tfreeAt int64\n}", "\tfreeAt int64\n\twrote  int64\n}"},
			{"\te.data, e.written = value, true\n", "\tif e.wrote != e.fence {\n\t\te.data, e.written = value, true\n\t}\n\te.wrote = e.fence\n"},
		}},
	// Renew interval.
	{name: "renew-adds-to-expiry", class: "renewals (more of them, the shorter the interval)", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"\te.expiry = now + ttl\n\treturn true\n}", "\te.expiry += ttl\n\treturn true\n}"}}},
	// Message delay past the request timeout.
	{name: "renew-timeout-taken-as-granted", class: "a renew unanswered within the request timeout", file: "internal/impl/holder/holder.go",
		edits: [][2]string{{"\t\t\tcase model.Renew:\n\t\t\t\th.renewFailed(now, \"renew-timeout\")\n",
			"\t\t\tcase model.Renew:\n\t\t\t\th.extend(h.outSent, now, 0)\n\t\t\t\th.nextRenew = now\n"}}},
	{name: "late-grant-accepted", class: "an acquire answered after the request timeout", file: "internal/impl/holder/holder.go",
		edits: [][2]string{{"if !h.inFlight || r.ID != h.out.ID {",
			"if !h.inFlight || r.ID != h.out.ID && !(r.OK && h.out.Kind == model.Acquire && r.Fence > h.fence) {"}}},
	// Clocks at their bounds, no delay, no margin.
	{name: "deadline-inclusive", class: "a deadline at the exact tick", file: "internal/impl/holder/holder.go",
		edits: [][2]string{{"\treturn now >= h.deadline\n}", "\treturn now > h.deadline\n}"}}},
	{name: "drift-rounded-down", class: "clocks at the drift bound", file: "internal/impl/holder/holder.go",
		edits: [][2]string{{"(drift+999_999)/1_000_000", "drift/1_000_000"}}},
	{name: "resolution-tick-dropped", class: "no delay, no margin", file: "internal/impl/holder/holder.go",
		edits: [][2]string{{"h.deadline = sent + ttl - 1 - ", "h.deadline = sent + ttl - "}}},
	// Three holders.
	{name: "release-by-previous-holder", class: "a late release by the holder before", file: "internal/impl/memstore/store.go",
		edits: [][2]string{
			{"\tfreeAt int64\n}", "\tfreeAt int64\n\tprev   string\n}"},
			{"\ttakeover := e.held\n", "\ttakeover := e.held\n\tif e.held && e.holder != owner {\n\t\te.prev = e.holder\n\t}\n"},
			{"\ttrusted := s.bugs&BugReleaseTrustsFence != 0 && fence != 0 && fence == e.fence\n",
				"\ttrusted := s.bugs&BugReleaseTrustsFence != 0 && fence != 0 && fence == e.fence || owner == e.prev\n"},
		}},
}

// TestShapeBugsFound: `leasecheck run --seeds 2000` and the default
// `leasecheck explore` each catch every bug of shapeBugs, and repro replays
// explore's counterexample. The times to the first failure are logged
// (docs/measurements-shapes.md has them).
//
// It runs only when asked (-shapebugs): it builds the command eleven times
// and runs 2000 seeds and the default plan with each, minutes on a quiet
// machine, tens of them on a loaded one.
var shapeBugsFlag = flag.Bool("shapebugs", false, "run TestShapeBugsFound: eleven source-planted bugs against run --seeds 2000 and the default explore plan")

func TestShapeBugsFound(t *testing.T) {
	if !*shapeBugsFlag {
		t.Skip("tens of minutes, and red until every planted shape is reached: run with -shapebugs")
	}
	for _, bug := range shapeBugs {
		t.Run(bug.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := buildWith(t, dir, bug)
			start := time.Now()
			cmd := exec.Command(bin, "run", "--seeds", "2000", "--fail-fast", "--save", "1", "--json", "--progress=false", "--out", filepath.Join(dir, "run"))
			out, err := cmd.Output()
			runTime := time.Since(start)
			var sum struct {
				FailedSeeds []uint64 `json:"failed_seeds"`
			}
			if jerr := json.Unmarshal(out, &sum); jerr != nil || exitCode(err) != 1 || len(sum.FailedSeeds) == 0 {
				t.Errorf("a bug in %s: run --seeds 2000: exit %d, failing seeds %v (%v)", bug.class, exitCode(err), sum.FailedSeeds, jerr)
			} else {
				t.Logf("run: first failing seed %d, %.1fs", sum.FailedSeeds[0], runTime.Seconds())
			}
			start = time.Now()
			cmd = exec.Command(bin, "explore", "--json", "--out", filepath.Join(dir, "explore"))
			out, err = cmd.Output()
			exploreTime := time.Since(start)
			var rep struct {
				Disagreement   string `json:"disagreement"`
				DistinctStates int64  `json:"distinct_states"`
				Counterexample *struct {
					Property string `json:"property"`
					Ops      int    `json:"ops"`
					File     string `json:"file"`
				} `json:"counterexample"`
			}
			if jerr := json.Unmarshal(out, &rep); jerr != nil || exitCode(err) != 1 || rep.Counterexample == nil || rep.Disagreement != "" {
				t.Errorf("a bug in %s: explore: exit %d, %d distinct states, disagreement %q (%v)", bug.class, exitCode(err), rep.DistinctStates, rep.Disagreement, jerr)
				return
			}
			t.Logf("explore: %s in %d operations, %d distinct states, %.1fs", rep.Counterexample.Property, rep.Counterexample.Ops, rep.DistinctStates, exploreTime.Seconds())
			rout, rerr := exec.Command(bin, "repro", rep.Counterexample.File).CombinedOutput()
			if code := exitCode(rerr); code != 1 || !strings.Contains(string(rout), rep.Counterexample.Property) {
				t.Errorf("repro %s: exit %d (want 1)\n%s", rep.Counterexample.File, code, rout)
			}
		})
	}
}
