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

// pairBugs are planted in the reference's source (go build -overlay, as
// sourceBugs), each in the shape the pair model (package pairs) is for: a
// fault that matters only while a particular step is in flight, or only
// together with a second fault or a workload dimension. The class names
// the pair that exposes it.
var pairBugs = []sourceBug{
	{name: "writes-lost-on-restart", class: "coordinator-crash × reader", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"func (s *Store) Crash() {\n", "func (s *Store) Crash() {\n\ts.keys.each(func(e *entry) { e.data, e.written = \"\", false })\n"}}},
	{name: "free-fence-lost-on-restart", class: "coordinator-crash × release applied", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"func (s *Store) Crash() {\n", "func (s *Store) Crash() {\n\ts.keys.each(func(e *entry) {\n\t\tif !e.held {\n\t\t\te.fence = 0\n\t\t}\n\t})\n"}}},
	{name: "acquire-retry-reuses-id", class: "late-message × acquire applied, then a lost or late retry", file: "internal/impl/holder/holder.go",
		edits: [][2]string{{"\th.nextI++\n\tr.ID = h.nextI\n", "\tif r.Kind != model.Acquire || h.backoff == 0 {\n\t\th.nextI++\n\t}\n\tr.ID = h.nextI\n"}}},
	{name: "late-ok-taken-for-renew", class: "late-message × write applied, with a renew in flight", file: "internal/impl/holder/holder.go",
		edits: [][2]string{{"if !h.inFlight || r.ID != h.out.ID {", "if !h.inFlight || r.ID != h.out.ID && !(h.out.Kind == model.Renew && r.OK) {"}}},
	{name: "restart-trusts-first-renew", class: "coordinator-crash × renew sent", file: "internal/impl/memstore/store.go",
		edits: [][2]string{
			{"func (s *Store) Crash() {\n", "func (s *Store) Crash() {\n\ts.keys.each(func(e *entry) { e.freeAt = -1 })\n"},
			{"\tif !live && s.bugs&BugRenewAfterExpiry == 0 {", "\tif e.freeAt == -1 {\n\t\tlive, e.freeAt = true, 0\n\t}\n\tif !live && s.bugs&BugRenewAfterExpiry == 0 {"},
		}},
	{name: "restart-lease-never-expires", class: "coordinator-crash × crash", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"func (s *Store) Crash() {\n", "func (s *Store) Crash() {\n\ts.keys.each(func(e *entry) {\n\t\tif e.held {\n\t\t\te.expiry = 1 << 62\n\t\t}\n\t})\n"}}},
	{name: "restart-skips-write-expiry", class: "coordinator-crash × pause", file: "internal/impl/memstore/store.go",
		edits: [][2]string{
			{"func (s *Store) Crash() {\n", "func (s *Store) Crash() {\n\ts.keys.each(func(e *entry) { e.freeAt = -2 })\n"},
			{"\tif !s.live(now, e.expiry) && s.bugs&BugWriteSkipsExpiry == 0 {", "\tif !s.live(now, e.expiry) && s.bugs&BugWriteSkipsExpiry == 0 && e.freeAt != -2 {"},
		}},
	// Writes are acknowledged before they reach the log, which is flushed
	// with the key's next renewal or grant: a restart in between loses
	// the writes since, though each was answered OK.
	{name: "writes-flushed-on-renew", class: "coordinator-crash × write applied, with a reader", file: "internal/impl/memstore/store.go",
		edits: [][2]string{
			{"\tfreeAt int64\n}", "\tfreeAt int64\n\tlogged  string\n\tloggedW bool\n}"},
			{"\te.expiry = now + ttl\n\tif !(", "\te.expiry = now + ttl\n\te.logged, e.loggedW = e.data, e.written\n\tif !("},
			{"\te.expiry = now + ttl\n\treturn true\n}", "\te.expiry = now + ttl\n\te.logged, e.loggedW = e.data, e.written\n\treturn true\n}"},
			{"func (s *Store) Crash() {\n", "func (s *Store) Crash() {\n\ts.keys.each(func(e *entry) { e.data, e.written = e.logged, e.loggedW })\n"},
		}},
	// Renewals live in memory only (they are frequent; the log keeps the
	// grant): a restart puts each lease back to its grant's expiry, which
	// a lease renewed past its first TTL has outlived.
	{name: "renewals-lost-on-restart", class: "coordinator-crash × renew applied", file: "internal/impl/memstore/store.go",
		edits: [][2]string{
			{"\tfreeAt int64\n}", "\tfreeAt int64\n\tlogged int64\n}"},
			{"\te.expiry = now + ttl\n\tif !(", "\te.expiry = now + ttl\n\te.logged = e.expiry\n\tif !("},
			{"func (s *Store) Crash() {\n", "func (s *Store) Crash() {\n\ts.keys.each(func(e *entry) { e.expiry = e.logged })\n"},
		}},
	// The fence counter reaches the log with the next request on its key
	// that waits for the log (a renew, a write, a release), not with the
	// grant itself: a restart between a grant and its holder's first
	// request hands the same fence out again.
	{name: "grant-fence-synced-late", class: "coordinator-crash × acquire applied", file: "internal/impl/memstore/store.go",
		edits: [][2]string{
			{"\tfreeAt int64\n}", "\tfreeAt int64\n\tsynced int64\n}"},
			{"\te.expiry = now + ttl\n\treturn true\n}", "\te.expiry = now + ttl\n\te.synced = e.fence\n\treturn true\n}"},
			{"\te.data, e.written = value, true\n", "\te.data, e.written = value, true\n\te.synced = e.fence\n"},
			{"\te.holder, e.held = \"\", false\n\treturn true\n}", "\te.holder, e.held = \"\", false\n\te.synced = e.fence\n\treturn true\n}"},
			{"func (s *Store) Crash() {\n", "func (s *Store) Crash() {\n\ts.keys.each(func(e *entry) { e.fence = e.synced })\n"},
		}},
}

// TestPairBugsFound: `leasecheck run --seeds 2000` and the default
// `leasecheck explore` plan each catch every bug of pairBugs, and repro
// replays explore's counterexample.
//
// It runs only when asked (-pairbugs): it builds the command once per bug
// and runs 2000 seeds and the default plan with each, minutes on a quiet
// machine. The reference, built the same way from the unedited source,
// passes both (-pairbug reference runs only that).
var pairBugsFlag = flag.Bool("pairbugs", false, "run TestPairBugsFound: source-planted bugs of two factors against run --seeds 2000 and the default explore plan")

// pairBug selects one bug of pairBugs by name (for measuring one).
var pairBug = flag.String("pairbug", "", "with -pairbugs: only this bug (reference: only the unedited source)")

func TestPairBugsFound(t *testing.T) {
	if !*pairBugsFlag {
		t.Skip("minutes: run with -pairbugs")
	}
	if *pairBug == "" || *pairBug == "reference" {
		// The other way: the command built from the unedited source (an
		// edit-less bug) passes both, so what fails below is the edit's.
		t.Run("reference", func(t *testing.T) {
			dir := t.TempDir()
			bin := buildWith(t, dir, sourceBug{name: "reference", file: "internal/impl/memstore/store.go"})
			out, err := exec.Command(bin, "run", "--seeds", "2000", "--save", "0", "--progress=false").CombinedOutput()
			if code := exitCode(err); code != 0 {
				t.Errorf("the reference: run --seeds 2000: exit %d\n%s", code, out)
			}
			out, err = exec.Command(bin, "explore", "--json", "--progress=false", "--out", filepath.Join(dir, "explore")).Output()
			var rep struct {
				Complete bool `json:"complete"`
			}
			if jerr := json.Unmarshal(out, &rep); jerr != nil || exitCode(err) != 0 || !rep.Complete {
				t.Errorf("the reference: explore: exit %d, complete %v (%v)", exitCode(err), rep.Complete, jerr)
			}
		})
	}
	for _, bug := range pairBugs {
		if *pairBug != "" && bug.name != *pairBug {
			continue
		}
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
				t.Errorf("a bug of %s: run --seeds 2000: exit %d, failing seeds %v (%v)", bug.class, exitCode(err), sum.FailedSeeds, jerr)
			} else {
				t.Logf("run: first failing seed %d, %.1fs", sum.FailedSeeds[0], runTime.Seconds())
			}
			start = time.Now()
			cmd = exec.Command(bin, "explore", "--json", "--progress=false", "--out", filepath.Join(dir, "explore"))
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
				t.Errorf("a bug of %s: explore: exit %d, %d distinct states, disagreement %q (%v)", bug.class, exitCode(err), rep.DistinctStates, rep.Disagreement, jerr)
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
