package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/etcdmember"
)

// The command-line contract of `leasecheck check` (docs/specification.md §4), tested on
// the built binary run as a separate process: exit statuses 0/1/2/3, the
// --json shape, stdin as "-", --html, and bad input reported as
// "FILE:LINE: reason" with exit status 2 and never a panic.

var (
	checkBinOnce sync.Once
	checkBinDir  string // removed by TestMain
	checkBinPath string
	checkBinErr  error
)

func TestMain(m *testing.M) {
	// The etcd37-cluster backend's members are this test binary run as
	// `etcd-server` (as the leasecheck binary's are it).
	etcdmember.Dispatch()
	code := m.Run()
	if checkBinDir != "" {
		os.RemoveAll(checkBinDir)
	}
	os.Exit(code)
}

// checkBinary builds ./cmd/leasecheck once per test run (buildBinary's
// plain build too).
func checkBinary(t *testing.T) string {
	t.Helper()
	checkBinOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			checkBinErr = fmt.Errorf("go tool not found to build leasecheck: %v", err)
			return
		}
		if checkBinDir, err = os.MkdirTemp("", "leasecheck-check-test-"); err != nil {
			checkBinErr = err
			return
		}
		checkBinPath = filepath.Join(checkBinDir, "leasecheck")
		if runtime.GOOS == "windows" {
			checkBinPath += ".exe"
		}
		cmd := exec.Command(goTool, "build", "-o", checkBinPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			checkBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if checkBinErr != nil {
		t.Fatal(checkBinErr)
	}
	return checkBinPath
}

type checkRun struct {
	code           int
	stdout, stderr string
}

// runCheckCLI runs `bin check args...` in dir with stdin.
func runCheckCLI(t *testing.T, bin, dir string, stdin []byte, args ...string) checkRun {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"check"}, args...)...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := checkRun{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running leasecheck check %v: %v", args, err)
	}
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("leasecheck check %v panicked:\n%s", args, r.stderr)
	}
	return r
}

// historiesDir holds the checker's golden histories, beside the checker.
const historiesDir = "../../checker/testdata/histories"

func history(name string) string { return filepath.Join(historiesDir, name+".jsonl") }

func TestCheckExitStatus(t *testing.T) {
	bin := checkBinary(t)
	for _, tc := range []struct {
		name string
		want int
	}{
		{"ok-lease-py-transcript", 0},
		{"ok-fenced-storage-zombie-rejected", 0},
		{"ok-uncertainty-window-acquire-u1", 0},
		{"bad-linearizable-uncertainty-window-acquire-u0", 1},
		{"bad-stop-on-renew-failure-renewal-loop-dies", 1},
		{"bad-fence-monotonic-fenced-storage-zombie-accepted", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCheckCLI(t, bin, ".", nil, history(tc.name))
			if r.code != tc.want {
				t.Errorf("leasecheck check %s.jsonl: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.name, r.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
}

// hardHistory is a correct history that takes the linearizability search
// thousands of steps: one lease, held for good, and n writes under it from
// four processes whose calls overlap.
func hardHistory(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"format":"leasecheck/history","version":1,"time_unit":"ms","clock_uncertainty":1,"semantics":"seed"}` + "\n")
	b.WriteString(`{"process":"A","op":"acquire","ttl":1000000000,"call":0,"return":1,"ok":true,"fence":1}` + "\n")
	for i := range n {
		call := 10 + 2*i
		fmt.Fprintf(&b, `{"process":"W%d","owner":"A","op":"write","fence":1,"value":"v%d","call":%d,"return":%d,"ok":true}`+"\n",
			i%4, i, call, call+7)
	}
	return b.Bytes()
}

func TestCheckExitStatusUndecided(t *testing.T) {
	bin := checkBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hard.jsonl"), hardHistory(4000), 0o644); err != nil {
		t.Fatal(err)
	}
	// The search looks at its deadline every 1024 steps; this history needs
	// more than 4000, so a 1ns budget is always spent before the verdict.
	r := runCheckCLI(t, bin, dir, nil, "--timeout", "1ns", "hard.jsonl")
	if r.code != 3 {
		t.Fatalf("check --timeout 1ns hard.jsonl: exit status %d, want 3\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "linearizable") || !strings.Contains(r.stdout, "unknown") {
		t.Errorf("check --timeout 1ns: the report does not say linearizable is unknown:\n%s", r.stdout)
	}
	j := runCheckCLI(t, bin, dir, nil, "--json", "--timeout", "1ns", "hard.jsonl")
	if j.code != 3 {
		t.Fatalf("check --json --timeout 1ns hard.jsonl: exit status %d, want 3", j.code)
	}
	var rep struct {
		OK         bool              `json:"ok"`
		Violations []json.RawMessage `json:"violations"`
	}
	if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, j.stdout)
	}
	if rep.OK || len(rep.Violations) != 0 {
		t.Errorf("undecided --json: ok=%v, %d violations; want ok=false, no violations", rep.OK, len(rep.Violations))
	}

	// With a real budget the same history holds: exit 3 was the budget's doing.
	if r := runCheckCLI(t, bin, dir, nil, "--timeout", "2m", "hard.jsonl"); r.code != 0 {
		t.Errorf("check --timeout 2m hard.jsonl: exit status %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// checkJSON is docs/specification.md §4's --json shape; extra fields are allowed.
type checkJSON struct {
	OK         *bool            `json:"ok"`
	Ops        *int             `json:"ops"`
	Violations []checkJSONEntry `json:"violations"`
}

type checkJSONEntry struct {
	Property    string `json:"property"`
	Lines       []int  `json:"lines"`
	Explanation string `json:"explanation"`
}

func decodeCheckJSON(t *testing.T, out string) checkJSON {
	t.Helper()
	// The documented fields must have the documented JSON types.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("--json output is not one JSON object: %v\n%s", err, out)
	}
	for field, want := range map[string]byte{"ok": 'b', "ops": '0', "violations": '['} {
		v, ok := raw[field]
		if !ok {
			t.Fatalf("--json output has no %q field:\n%s", field, out)
		}
		got := v[0]
		if got == 't' || got == 'f' {
			got = 'b'
		} else if got >= '0' && got <= '9' {
			got = '0'
		}
		if got != want {
			t.Errorf("--json field %q = %s, wrong JSON type", field, v)
		}
	}
	var rep checkJSON
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("decoding --json output: %v\n%s", err, out)
	}
	if dec.More() {
		t.Errorf("--json output has more than one JSON value:\n%s", out)
	}
	return rep
}

func TestCheckJSON(t *testing.T) {
	bin := checkBinary(t)
	t.Run("violated", func(t *testing.T) {
		r := runCheckCLI(t, bin, ".", nil, "--json", history("bad-linearizable-two-keys"))
		if r.code != 1 {
			t.Fatalf("exit status %d, want 1\n%s", r.code, r.stderr)
		}
		rep := decodeCheckJSON(t, r.stdout)
		if *rep.OK || *rep.Ops != 9 {
			t.Errorf("ok=%v ops=%d, want ok=false ops=9", *rep.OK, *rep.Ops)
		}
		if len(rep.Violations) != 1 {
			t.Fatalf("%d violations, want 1: %+v", len(rep.Violations), rep.Violations)
		}
		v := rep.Violations[0]
		if v.Property != "linearizable" || !reflect.DeepEqual(v.Lines, []int{3, 7}) {
			t.Errorf("violation = {%s %v}, want {linearizable [3 7]}", v.Property, v.Lines)
		}
		if !strings.Contains(v.Explanation, "line 7") || !strings.Contains(v.Explanation, "expired") {
			t.Errorf("explanation does not tell of line 7's write after expiry: %q", v.Explanation)
		}
	})
	t.Run("several", func(t *testing.T) {
		r := runCheckCLI(t, bin, ".", nil, history("bad-fence-monotonic-fence-reused"), "--json") // flag after the file
		if r.code != 1 {
			t.Fatalf("exit status %d, want 1\n%s", r.code, r.stderr)
		}
		rep := decodeCheckJSON(t, r.stdout)
		var got []string
		for _, v := range rep.Violations {
			got = append(got, fmt.Sprint(v.Property, v.Lines))
			if v.Explanation == "" {
				t.Errorf("%s violation without an explanation", v.Property)
			}
		}
		want := []string{"linearizable[2 4]", "single-writer-per-fence[3 5]", "fence-monotonic[2 4]"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("violations = %v, want %v", got, want)
		}
	})
	t.Run("holds", func(t *testing.T) {
		r := runCheckCLI(t, bin, ".", nil, "--json", history("ok-lease-py-transcript"))
		if r.code != 0 {
			t.Fatalf("exit status %d, want 0\n%s", r.code, r.stderr)
		}
		rep := decodeCheckJSON(t, r.stdout)
		if !*rep.OK || *rep.Ops != 15 {
			t.Errorf("ok=%v ops=%d, want ok=true ops=15", *rep.OK, *rep.Ops)
		}
		if !strings.Contains(r.stdout, `"violations": []`) && !strings.Contains(r.stdout, `"violations":[]`) {
			t.Errorf("violations must be an empty array, not null or absent:\n%s", r.stdout)
		}
	})
}

func TestCheckStdin(t *testing.T) {
	bin := checkBinary(t)
	for _, tc := range []struct {
		name string
		want int
	}{
		{"ok-unknown-writes", 0},
		{"bad-linearizable-gc-pause-two-writers", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(history(tc.name))
			if err != nil {
				t.Fatal(err)
			}
			r := runCheckCLI(t, bin, ".", data, "-")
			if r.code != tc.want {
				t.Fatalf("check - < %s.jsonl: exit status %d, want %d\n%s%s", tc.name, r.code, tc.want, r.stdout, r.stderr)
			}
			if !strings.HasPrefix(r.stdout, "-: ") {
				t.Errorf("the report does not name stdin as \"-\":\n%s", r.stdout)
			}
			// Same verdict and violations as from the file.
			f := runCheckCLI(t, bin, ".", nil, history(tc.name))
			if got, want := strings.TrimPrefix(r.stdout, "-"), strings.TrimPrefix(f.stdout, history(tc.name)); got != want {
				t.Errorf("report from stdin differs from the file's:\n%s\nwant\n%s", got, want)
			}
		})
	}
	t.Run("no-header", func(t *testing.T) {
		in := `{"process":"A","op":"acquire","ttl":10,"call":0,"return":1,"ok":true,"fence":1}` + "\n" +
			`{"process":"A","op":"write","fence":1,"value":"x","call":2,"return":3,"ok":true}` + "\n"
		r := runCheckCLI(t, bin, ".", []byte(in), "-")
		if r.code != 0 {
			t.Fatalf("exit status %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "seed semantics, clock uncertainty 0 ms") {
			t.Errorf("a history without a header must mean the defaults (seed, u=0, ms):\n%s", r.stdout)
		}
	})
	t.Run("bad-input", func(t *testing.T) {
		in := "\n" + `{"process":"A","op":"acquire","ttl":0,"call":0,"return":1,"ok":false}` + "\n"
		r := runCheckCLI(t, bin, ".", []byte(in), "-")
		if r.code != 2 || !strings.Contains(r.stderr, "-:2: ") {
			t.Errorf("exit status %d, stderr %q; want 2 and a message naming -:2:", r.code, r.stderr)
		}
	})
}

func TestCheckHTML(t *testing.T) {
	bin := checkBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	porc := filepath.Join(dir, "report.porcupine.html")
	name := "bad-linearizable-gc-pause-two-writers"
	r := runCheckCLI(t, bin, ".", nil, "--html", out, "--porcupine", porc, history(name))
	if r.code != 1 {
		t.Fatalf("exit status %d, want 1\n%s", r.code, r.stderr)
	}
	// Porcupine's page is the secondary view, linked from ours.
	if p, err := os.ReadFile(porc); err != nil || !bytes.Contains(p, []byte("<html")) {
		t.Errorf("--porcupine %s: %v (%d bytes)", porc, err, len(p))
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("--html %s: %v", out, err)
	}
	if len(page) == 0 {
		t.Fatalf("--html wrote an empty file")
	}
	if !bytes.Contains(bytes.ToLower(page), []byte("<html")) {
		t.Errorf("--html output is not an HTML page")
	}
	if bytes.Contains(page, []byte("<title>Porcupine")) || !bytes.Contains(page, []byte("report.porcupine.html")) {
		t.Errorf("--html is not the lease timeline linking porcupine's page as its secondary view")
	}
	// Every violation's explanation is on the page, as text or as a JSON
	// string inside its script.
	j := decodeCheckJSON(t, runCheckCLI(t, bin, ".", nil, "--json", history(name)).stdout)
	if len(j.Violations) == 0 {
		t.Fatal("no violations to look for")
	}
	for _, v := range j.Violations {
		enc, _ := json.Marshal(v.Explanation)
		forms := []string{v.Explanation, html.EscapeString(v.Explanation), string(enc[1 : len(enc)-1])}
		found := false
		for _, f := range forms {
			found = found || bytes.Contains(page, []byte(f))
		}
		if !found {
			t.Errorf("the HTML page does not contain the %s explanation %q", v.Property, v.Explanation)
		}
	}
}

func TestCheckBadInput(t *testing.T) {
	bin := checkBinary(t)
	const (
		hdr = `{"format":"leasecheck/history","version":1,"time_unit":"ms","clock_uncertainty":2,"semantics":"seed"}`
		acq = `{"process":"A","op":"acquire","ttl":10,"call":0,"return":1,"ok":true,"fence":1}`
	)
	for _, tc := range []struct {
		name  string
		input string
		line  int
		// reason is a fragment the message must contain.
		reason string
	}{
		{"truncated-json", hdr + "\n" + acq + "\n" + `{"process":"A","op":"write","fence":1,"val`, 3, "JSON"},
		{"truncated-json-mid-file", hdr + "\n" + `{"process":"A","op":"acq` + "\n" + acq + "\n", 2, "JSON"},
		{"not-an-object", hdr + "\n" + acq + "\n" + `["write"]` + "\n", 3, "object"},
		{"unknown-op", hdr + "\n" + acq + "\n" + `{"process":"A","op":"steal","call":2,"return":3,"ok":true}` + "\n", 3, "steal"},
		{"missing-process", hdr + "\n\n" + acq + "\n" + `{"op":"read","call":2,"return":3,"ok":true}` + "\n", 4, `"process"`},
		{"missing-op", hdr + "\n" + `{"process":"A","call":2,"return":3,"ok":true}` + "\n", 2, `"op"`},
		{"missing-call", hdr + "\n" + acq + "\n" + `{"process":"A","op":"read","return":3,"ok":true}` + "\n", 3, `"call"`},
		{"missing-ok", hdr + "\n" + acq + "\n" + `{"process":"A","op":"read","call":2,"return":3}` + "\n", 3, `"ok"`},
		{"missing-ttl", hdr + "\n" + acq + "\n" + `{"process":"A","op":"renew","call":2,"return":3,"ok":true}` + "\n", 3, `"ttl"`},
		{"missing-write-fence", hdr + "\n" + acq + "\n" + `{"process":"A","op":"write","value":"x","call":2,"return":3,"ok":true}` + "\n", 3, `"fence"`},
		{"negative-ttl", hdr + "\n" + acq + "\n" + `{"process":"A","op":"renew","ttl":-5,"call":2,"return":3,"ok":false}` + "\n", 3, `"ttl"`},
		{"zero-fence", hdr + "\n" + `{"process":"A","op":"acquire","ttl":10,"call":0,"return":1,"ok":true,"fence":0}` + "\n", 2, `"fence"`},
		{"return-before-call", hdr + "\n" + acq + "\n\n" + `{"process":"A","op":"read","call":9,"return":4,"ok":true}` + "\n", 4, `"return"`},
		{"overlapping-process", hdr + "\n" + `{"process":"A","op":"acquire","ttl":10,"call":0,"return":6,"ok":true,"fence":1}` + "\n" +
			`{"process":"B","op":"read","call":1,"return":2,"ok":true}` + "\n" +
			`{"process":"A","op":"read","call":5,"return":7,"ok":true}` + "\n", 4, "overlap"},
		{"unsupported-version", `{"format":"leasecheck/history","version":2}` + "\n" + acq + "\n", 1, "version"},
		{"second-header", hdr + "\n" + acq + "\n" + hdr + "\n", 3, "header"},
		{"bad-semantics", `{"format":"leasecheck/history","version":1,"semantics":"eventual"}` + "\n", 1, "semantics"},
		{"negative-uncertainty", `{"format":"leasecheck/history","version":1,"clock_uncertainty":-1}` + "\n", 1, "clock_uncertainty"},
		{"at-after-window", hdr + "\n" + acq + "\n" + `{"process":"A","op":"read","call":5,"return":6,"at":9,"ok":true}` + "\n", 3, `"at"`},
		{"at-before-window", hdr + "\n" + acq + "\n" + `{"process":"A","op":"read","call":5,"return":6,"at":2,"ok":true}` + "\n", 3, `"at"`},
		{"at-before-call-no-return", hdr + "\n" + acq + "\n" + `{"process":"A","op":"renew","ttl":5,"call":5,"at":2}` + "\n", 3, `"at"`},
		{"string-call", hdr + "\n" + acq + "\n" + `{"process":"A","op":"read","call":"5","return":6,"ok":true}` + "\n", 3, `"call"`},
		{"fractional-ttl", hdr + "\n" + `{"process":"A","op":"acquire","ttl":1.5,"call":0,"return":1,"ok":false}` + "\n", 2, `"ttl"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "input.jsonl"), []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"input.jsonl"}, {"--json", "input.jsonl"}} {
				r := runCheckCLI(t, bin, dir, nil, args...)
				if r.code != 2 {
					t.Errorf("check %v: exit status %d, want 2\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
				}
				prefix := fmt.Sprintf("input.jsonl:%d: ", tc.line)
				if !strings.Contains(r.stderr, prefix) {
					t.Errorf("check %v: stderr does not name %q:\n%s", args, prefix, r.stderr)
				}
				if !strings.Contains(r.stderr, tc.reason) {
					t.Errorf("check %v: stderr does not mention %s:\n%s", args, tc.reason, r.stderr)
				}
				if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
					t.Errorf("check %v: want a one-line message, got %d lines:\n%s", args, n+1, r.stderr)
				}
				if args[0] != "--json" {
					if r.stdout != "" {
						t.Errorf("check %v: unusable input, yet stdout:\n%s", args, r.stdout)
					}
					continue
				}
				wantJSONInputError(t, args, r, tc.line, tc.reason)
			}
		})
	}
}

func TestCheckUsage(t *testing.T) {
	bin := checkBinary(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no-file", nil, "usage"},
		{"two-files", []string{"a.jsonl", "b.jsonl"}, "usage"},
		{"missing-file", []string{"nosuch.jsonl"}, "nosuch.jsonl"},
		{"unknown-flag", []string{"--frobnicate", "a.jsonl"}, "frobnicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCheckCLI(t, bin, dir, nil, tc.args...)
			if r.code != 2 {
				t.Errorf("check %v: exit status %d, want 2", tc.args, r.code)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("check %v: stderr does not mention %q:\n%s", tc.args, tc.want, r.stderr)
			}
		})
	}
}

// The strict-input rules: each bad input exits 2 with
// FILE:LINE: reason, whether the file is read into memory or streamed.
func TestCheckStrictInput(t *testing.T) {
	bin := checkBinary(t)
	const (
		hdr = `{"format":"leasecheck/history","version":1,"time_unit":"ms","clock_uncertainty":2,"semantics":"seed"}`
		acq = `{"process":"A","op":"acquire","ttl":10,"call":0,"return":1,"ok":true,"fence":1}`
	)
	for _, tc := range []struct {
		name, input string
		line        int
		reason      string
	}{
		{"empty", "", 1, "no operation"},
		{"header-only", hdr + "\n", 1, "no operation"},
		{"blank-lines-only", "\n\n\n", 3, "no operation"},
		{"faults-only", hdr + "\n" + `{"fault":"pause","target":"A","start":1}` + "\n", 2, "no operation"},
		{"duplicate-field", hdr + "\n" + acq + "\n" + `{"process":"A","op":"read","call":2,"call":3,"return":4,"ok":true}` + "\n", 3, `duplicate field "call"`},
		{"duplicate-ok", hdr + "\n" + `{"process":"A","op":"read","call":2,"return":4,"ok":true,"ok":false}` + "\n", 2, `duplicate field "ok"`},
		{"return-plus-u-overflows", hdr + "\n" + `{"process":"A","op":"read","call":1,"return":9223372036854775807,"ok":true}` + "\n", 2, `"return"`},
		{"at-plus-ttl-overflows", hdr + "\n" + `{"process":"A","op":"acquire","ttl":10,"fence":1,"call":9223372036854775000,"return":9223372036854775001,"at":9223372036854775000,"ok":true}` + "\n", 2, `"call"`},
		{"huge-ttl", hdr + "\n" + `{"process":"A","op":"acquire","ttl":9223372036854775807,"fence":1,"call":0,"return":1,"ok":true}` + "\n", 2, `"ttl"`},
		{"fence-in-fenceless", `{"format":"leasecheck/history","version":1,"fences":"none"}` + "\n" + acq + "\n", 2, `"fences":"none"`},
		{"fault-without-target", hdr + "\n" + acq + "\n" + `{"fault":"pause","start":1}` + "\n", 3, `"target"`},
		{"fault-ends-before-start", hdr + "\n" + acq + "\n" + `{"fault":"pause","target":"A","start":5,"end":1}` + "\n", 3, `"end"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "input.jsonl"), []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"input.jsonl"}, {"--stream", "input.jsonl"}, {"--json", "--stream", "input.jsonl"}} {
				r := runCheckCLI(t, bin, dir, nil, args...)
				prefix := fmt.Sprintf("input.jsonl:%d: ", tc.line)
				if r.code != 2 || !strings.Contains(r.stderr, prefix) || !strings.Contains(r.stderr, tc.reason) {
					t.Errorf("check %v: exit %d, stderr %q; want exit 2, %q and %q", args, r.code, r.stderr, prefix, tc.reason)
				}
				if args[0] == "--json" {
					wantJSONInputError(t, args, r, tc.line, tc.reason)
				} else if r.stdout != "" {
					t.Errorf("check %v: unusable input, yet stdout:\n%s", args, r.stdout)
				}
			}
		})
	}
}

// Unknown fields are allowed (v1 promises it), but each distinct one is
// warned about once, with its line; --strict refuses them.
func TestCheckUnknownFields(t *testing.T) {
	bin := checkBinary(t)
	dir := t.TempDir()
	in := `{"process":"A","op":"acquire","ttl":10,"call":0,"return":1,"ok":true,"fence":1}` + "\n" +
		`{"process":"A","op":"write","fence":1,"value":"x","call":2,"retrun":3,"ok":true}` + "\n" +
		`{"process":"A","op":"write","fence":1,"value":"y","call":4,"retrun":5,"ok":true,"note":"n"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "typo.jsonl"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--stream"}} {
		r := runCheckCLI(t, bin, dir, nil, append(extra, "typo.jsonl")...)
		want := "leasecheck: warning: typo.jsonl:2: unknown field \"retrun\" in an operation, ignored (--strict refuses it)\n" +
			"leasecheck: warning: typo.jsonl:3: unknown field \"note\" in an operation, ignored (--strict refuses it)\n"
		if r.stderr != want || r.code != 0 {
			t.Errorf("check %v: exit %d, stderr:\n%s\nwant exit 0, stderr:\n%s", extra, r.code, r.stderr, want)
		}
		s := runCheckCLI(t, bin, dir, nil, append(extra, "--strict", "typo.jsonl")...)
		if s.code != 2 || !strings.Contains(s.stderr, `typo.jsonl:2: unknown field "retrun"`) {
			t.Errorf("check --strict %v: exit %d, stderr %q; want 2 naming line 2 and the field", extra, s.code, s.stderr)
		}
	}
}

// --stream checks a file without holding it, to the same verdicts.
func TestCheckStreamGoldens(t *testing.T) {
	bin := checkBinary(t)
	files, err := filepath.Glob(filepath.Join(historiesDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatal("no histories", err)
	}
	for _, f := range files {
		mem := runCheckCLI(t, bin, ".", nil, "--json", f)
		str := runCheckCLI(t, bin, ".", nil, "--json", "--stream", f)
		var a, b struct {
			Properties map[string]string `json:"properties"`
		}
		if json.Unmarshal([]byte(mem.stdout), &a) != nil || json.Unmarshal([]byte(str.stdout), &b) != nil {
			t.Fatalf("%s: no JSON:\n%s\n%s", f, mem.stdout, str.stdout)
		}
		if mem.code != str.code || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: in memory exit %d %v, streamed exit %d %v", f, mem.code, a, str.code, b)
		}
	}
}

// outOfOrderHistory lists n correct ops of one lease, newest first (each
// process on its own line of one op, so the format's order rule holds): a
// streaming check must hold them all before it can place the first.
func outOfOrderHistory(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"format":"leasecheck/history","version":1}` + "\n")
	b.WriteString(`{"process":"A","op":"acquire","ttl":1000000000,"call":0,"return":1,"at":0,"ok":true,"fence":1}` + "\n")
	for i := n; i > 0; i-- {
		fmt.Fprintf(&b, `{"process":"W%d","owner":"A","op":"write","fence":1,"value":"v%d","call":%d,"return":%d,"at":%d,"ok":true}`+"\n", i, i, 10*i, 10*i+1, 10*i)
	}
	return b.Bytes()
}

// The budgets end in exit 3 with the reason, in every phase: the time
// budget while reading or checking a stream, and the memory budget when a
// stream is too far out of time order to hold.
func TestCheckBudgets(t *testing.T) {
	bin := checkBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hard.jsonl"), hardHistory(4000), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reversed.jsonl"), outOfOrderHistory(200_000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		reason string
	}{
		{"time-while-searching", []string{"--timeout", "1ns", "hard.jsonl"}, "time budget"},
		{"time-while-streaming", []string{"--stream", "--timeout", "1ns", "reversed.jsonl"}, "time budget"},
		{"memory-while-streaming", []string{"--stream", "--max-memory", "4MiB", "reversed.jsonl"}, "memory budget (4 MiB)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := runCheckCLI(t, bin, dir, nil, tc.args...)
			t.Logf("check %v: exit %d after %v", tc.args, r.code, time.Since(start))
			if r.code != 3 || !strings.Contains(r.stdout, "UNDECIDED: ") || !strings.Contains(r.stdout, tc.reason) {
				t.Errorf("check %v: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 3 and UNDECIDED naming %q", tc.args, r.code, r.stdout, r.stderr, tc.reason)
			}
			j := runCheckCLI(t, bin, dir, nil, append([]string{"--json"}, tc.args...)...)
			var rep struct {
				Undecided bool   `json:"undecided"`
				Reason    string `json:"reason"`
			}
			if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil || j.code != 3 || !rep.Undecided || !strings.Contains(rep.Reason, tc.reason) {
				t.Errorf("check --json %v: exit %d, %+v (%v)", tc.args, j.code, rep, err)
			}
		})
	}
	// With the budget it needs, the reversed history holds: exit 3 was the
	// budget's doing.
	if r := runCheckCLI(t, bin, dir, nil, "--stream", "reversed.jsonl"); r.code != 0 {
		t.Errorf("check --stream reversed.jsonl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// wantJSONInputError: with --json, input that cannot be used prints one
// JSON object on standard output — ok false, the file, the line and the
// reason, the same as on standard error — so a script that parses the
// JSON learns why.
func wantJSONInputError(t *testing.T, args []string, r checkRun, line int, reason string) {
	t.Helper()
	var rep struct {
		OK    *bool `json:"ok"`
		Error struct {
			File   string `json:"file"`
			Line   int    `json:"line"`
			Reason string `json:"reason"`
		} `json:"error"`
		Warnings []checkWarning `json:"warnings"`
	}
	d := json.NewDecoder(strings.NewReader(r.stdout))
	d.DisallowUnknownFields()
	if err := d.Decode(&rep); err != nil {
		t.Errorf("check %v: stdout is not the JSON error object (%v):\n%s", args, err, r.stdout)
		return
	}
	if rep.OK == nil || *rep.OK || rep.Error.File != "input.jsonl" || rep.Error.Line != line ||
		!strings.Contains(rep.Error.Reason, reason) || !strings.Contains(r.stderr, rep.Error.Reason) || rep.Warnings == nil {
		t.Errorf("check %v: JSON error %+v, want ok false, input.jsonl line %d, a reason with %s as on stderr:\n%s", args, rep, line, reason, r.stderr)
	}
}
