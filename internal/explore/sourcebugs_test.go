package explore_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// sourceBug is a bug planted by editing the reference's source — not
// through its Bug switches, which the monitor could never share — as
// textual replacements, each of which must match exactly once.
type sourceBug struct {
	name  string
	class string // what of the space it needs, for the failure message
	file  string // relative to the module root
	edits [][2]string
}

// sourceBugs are the planted bugs of TestSourceBugsFound: one in the
// coordinator's expiry arithmetic, one only the fenced resource exercises,
// one only an adversarial request under the holder's own name after an
// owner reuse exercises, one at an exact instant (the expiry tick), one in
// the holder.
var sourceBugs = []sourceBug{
	{name: "grant-expiry-one-short", class: "the coordinator's expiry arithmetic", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"e.holder, e.held = owner, true\n\te.expiry = now + ttl\n", "e.holder, e.held = owner, true\n\te.expiry = now + ttl - 1\n"}}},
	{name: "resource-accepts-one-below", class: "the fenced resource", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"stale := fence < highest\n", "stale := fence < highest-1\n"}}},
	{name: "release-previous-incarnation", class: "an adversarial request under the holder's own name after an owner reuse", file: "internal/impl/memstore/store.go",
		edits: [][2]string{
			// The coordinator remembers the fence of the grant a same-named
			// owner held before (a restart "may still release it"), and a
			// release under that name with that fence frees the lease.
			{"\tfreeAt int64\n}", "\tfreeAt int64\n\tprev   int64\n}"},
			{"\ttakeover := e.held\n", "\ttakeover := e.held\n\te.prev = 0\n\tif e.held && e.holder == owner {\n\t\te.prev = e.fence\n\t}\n"},
			{"\ttrusted := s.bugs&BugReleaseTrustsFence != 0 && fence != 0 && fence == e.fence\n",
				"\ttrusted := s.bugs&BugReleaseTrustsFence != 0 && fence != 0 && fence == e.fence || e.holder == owner && fence != 0 && fence == e.prev\n"},
		}},
	{name: "acquire-refused-on-expiry-tick", class: "the exact instant of expiry", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"free := !e.held || !s.live(now, e.expiry)\n", "free := !e.held || now > e.expiry\n"}}},
	{name: "holder-retries-unanswered-renew", class: "the holder", file: "internal/impl/holder/holder.go",
		edits: [][2]string{{"h.renewFailed(now, \"renew-timeout\")\n", "h.nextRenew = now // taken for a slow network: renew again\n"}}},
}

// TestSourceBugsFound: for each bug planted in the source (sourceBugs),
// the command built with that source (go build -overlay: the edited file
// replaces the original, nothing in the module changes) finds a violation
// with its default `leasecheck explore` — never "complete" without one —
// with no disagreement between its monitor and its full judges, and
// `leasecheck repro` replays the saved counterexample to the same
// violation. The monitor judges against the specification, so a bug in
// the machines is not a bug in their judge.
func TestSourceBugsFound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command five times and explores each (a few minutes)")
	}
	for _, bug := range sourceBugs {
		t.Run(bug.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := buildWith(t, dir, bug)
			cmd := exec.Command(bin, "explore", "--json", "--no-minimize", "--out", filepath.Join(dir, "out"))
			cmd.Dir = dir
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var rep struct {
				Complete       bool   `json:"complete"`
				Stopped        string `json:"stopped"`
				Disagreement   string `json:"disagreement"`
				DistinctStates int64  `json:"distinct_states"`
				Counterexample *struct {
					Property string `json:"property"`
					Steps    int    `json:"steps"`
					File     string `json:"file"`
				} `json:"counterexample"`
			}
			if jerr := json.Unmarshal(out, &rep); jerr != nil {
				t.Fatalf("explore: %v (%v)\n%s", jerr, err, stderr.String())
			}
			if code := exitCode(err); code != 1 || rep.Counterexample == nil || rep.Complete || rep.Disagreement != "" {
				t.Fatalf("a bug in %s: explore exit %d, complete %v, stopped %s after %d distinct states, disagreement %q\n%s",
					bug.class, code, rep.Complete, rep.Stopped, rep.DistinctStates, rep.Disagreement, stderr.String())
			}
			t.Logf("%s: %s after %d moves, %d distinct states", bug.name, rep.Counterexample.Property, rep.Counterexample.Steps, rep.DistinctStates)
			repro := exec.Command(bin, "repro", rep.Counterexample.File)
			repro.Dir = dir
			rout, rerr := repro.CombinedOutput()
			if code := exitCode(rerr); code != 1 || !strings.Contains(string(rout), rep.Counterexample.Property) {
				t.Fatalf("repro %s: exit %d (want 1, the violation replayed)\n%s", rep.Counterexample.File, code, rout)
			}
		})
	}
}

// built holds the binaries buildWith made, by the edited file's path and
// text: a bug planted twice (acquire-refused-on-expiry-tick of sourceBugs
// is acquire-tick of tickBugs) is built once. builtDir, where they are, is
// removed by TestMain.
var (
	builtMu  sync.Mutex
	built    = map[[2]string]string{}
	builtDir string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// buildWith builds the command with bug's edits applied to its file
// through go build -overlay (the patched file and the overlay written into
// dir), and returns the binary's path; a bug whose edited text was built
// before gets that binary.
func buildWith(t *testing.T, dir string, bug sourceBug) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(self)))
	src, err := os.ReadFile(filepath.Join(root, bug.file))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for _, e := range bug.edits {
		if n := strings.Count(text, e[0]); n != 1 {
			t.Fatalf("%s: the edit's original text occurs %d times (want 1): %q", bug.file, n, e[0])
		}
		text = strings.Replace(text, e[0], e[1], 1)
	}
	builtMu.Lock()
	defer builtMu.Unlock()
	key := [2]string{bug.file, text}
	if bin, ok := built[key]; ok {
		return bin
	}
	if builtDir == "" {
		if builtDir, err = os.MkdirTemp("", "leasecheck-sourcebugs-"); err != nil {
			t.Fatal(err)
		}
	}
	patched := filepath.Join(dir, filepath.Base(bug.file))
	if err := os.WriteFile(patched, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, bug.file): patched}})
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(builtDir, fmt.Sprintf("leasecheck-%d", len(built)))
	build := exec.Command("go", "build", "-overlay", overlay, "-o", bin, "./cmd/leasecheck")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	built[key] = bin
	return bin
}

// tickBugs are off-by-ones at the expiry tick in one operation's check
// each: the operation decides as if the lease lived one tick longer
// (...-tick) or one tick shorter (...-early).
var tickBugs = []sourceBug{
	{name: "acquire-tick", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"free := !e.held || !s.live(now, e.expiry)\n", "free := !e.held || now > e.expiry\n"}}},
	{name: "acquire-early", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"free := !e.held || !s.live(now, e.expiry)\n", "free := !e.held || now >= e.expiry-1\n"}}},
	{name: "renew-tick", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"\tlive := s.live(now, e.expiry)\n", "\tlive := now <= e.expiry\n"}}},
	{name: "renew-early", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"\tlive := s.live(now, e.expiry)\n", "\tlive := now < e.expiry-1\n"}}},
	{name: "write-tick", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"\tif !s.live(now, e.expiry) && s.bugs&BugWriteSkipsExpiry == 0 {", "\tif now > e.expiry && s.bugs&BugWriteSkipsExpiry == 0 {"}}},
	{name: "write-early", file: "internal/impl/memstore/store.go",
		edits: [][2]string{{"\tif !s.live(now, e.expiry) && s.bugs&BugWriteSkipsExpiry == 0 {", "\tif now >= e.expiry-1 && s.bugs&BugWriteSkipsExpiry == 0 {"}}},
}

// TestRunFindsTickBugs: the scenario generator's edge-seeking client
// (scenario.drawEdgeClient) makes `leasecheck run --seeds 2000`, with its
// defaults, catch an off-by-one at the expiry tick in any single
// operation's check, edited into the coordinator's source.
func TestRunFindsTickBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command six times and runs 2000 seeds with each (about a minute and a half)")
	}
	for _, bug := range tickBugs {
		t.Run(bug.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := buildWith(t, dir, bug)
			cmd := exec.Command(bin, "run", "--seeds", "2000", "--no-shrink", "--save", "0", "--json", "--progress=false", "--out", filepath.Join(dir, "out"))
			cmd.Dir = dir
			out, err := cmd.Output()
			var sum struct {
				Failed int `json:"failed"`
			}
			if jerr := json.Unmarshal(out, &sum); jerr != nil || exitCode(err) != 1 || sum.Failed == 0 {
				t.Fatalf("run --seeds 2000: exit %d, %d failing seeds (%v)", exitCode(err), sum.Failed, jerr)
			}
			t.Logf("%s: %d of 2000 seeds fail", bug.name, sum.Failed)
		})
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
