package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheckWarnsTimeoutRefusals: a client timeout recorded as a refusal
// ("return" with "ok":false,"error":"timeout") keeps the format's verdict —
// a definite refusal, so here linearizable is violated — but check warns,
// on standard error and in --json's warnings, naming every such line; the
// same history recorded as the format says (no "return") is clean and has
// no warning, and neither has a history whose refusals are the
// coordinator's own (held, expired, stale-fence) or a request never sent.
func TestCheckWarnsTimeoutRefusals(t *testing.T) {
	bin := checkBinary(t)
	const (
		acq = `{"process":"A","op":"acquire","ttl":5,"fence":1,"call":0,"return":1,"ok":true}`
		// B's acquire is refused after A's lease would have expired had A's
		// renewal not taken effect.
		bRefused = `{"process":"B","op":"acquire","ttl":5,"call":7,"return":8,"ok":false,"error":"held"}`
	)
	renew := func(tail string) string {
		return `{"process":"A","op":"renew","ttl":5,"fence":1,"call":2` + tail + `}`
	}
	many := acq + "\n"
	for i := range 25 {
		c := 2 + 2*i
		many += fmt.Sprintf(`{"process":"A","op":"renew","ttl":50,"fence":1,"call":%d,"return":%d,"ok":false,"error":"context deadline exceeded"}`, c, c+1) + "\n"
	}
	for _, tc := range []struct {
		name    string
		input   string
		code    int
		lines   []int // the lines warned about, nil: no warning
		count   int
		inError string
	}{
		{"timeout-as-refusal", acq + "\n" + renew(`,"return":6,"ok":false,"error":"timeout"`) + "\n" + bRefused + "\n", 1, []int{2}, 1, `"error":"timeout"`},
		{"crlf-and-header", "{\"format\":\"leasecheck/history\",\"version\":1}\r\n\r\n" + acq + "\r\n" + renew(`,"return":6,"ok":false,"error":"i/o timeout"`) + "\r\n" + bRefused, 1, []int{4}, 1, `"error":"i/o timeout"`},
		{"many", many, 1, []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}, 25, "context deadline exceeded"},
		{"timeout-recorded-right", acq + "\n" + renew(``) + "\n" + bRefused + "\n", 0, nil, 0, ""},
		{"definite-refusals", acq + "\n" +
			`{"process":"B","op":"acquire","ttl":5,"call":2,"return":3,"ok":false,"error":"held"}` + "\n" +
			`{"process":"C","op":"acquire","ttl":5,"call":2,"return":3,"ok":false,"error":"connection refused"}` + "\n" +
			`{"process":"A","op":"renew","ttl":5,"fence":1,"call":7,"return":8,"ok":false,"error":"expired"}` + "\n", 0, nil, 0, ""},
		{"ok-true-with-error-text", acq + "\n" + renew(`,"return":3,"ok":true,"error":"timeout"`) + "\n", 0, nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "h.jsonl"), []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, via := range []string{"file", "stdin", "stream"} {
				args, stdin, name := []string{"--json", "h.jsonl"}, []byte(nil), "h.jsonl"
				switch via {
				case "stdin":
					args, stdin, name = []string{"--json", "-"}, []byte(tc.input), "-"
				case "stream":
					args = append(args, "--stream")
				}
				r := runCheckCLI(t, bin, dir, stdin, args...)
				if r.code != tc.code {
					t.Errorf("%s: exit %d, want %d\n%s%s", via, r.code, tc.code, r.stdout, r.stderr)
				}
				var rep struct {
					Properties map[string]string `json:"properties"`
					Warnings   []checkWarning    `json:"warnings"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Warnings == nil {
					t.Fatalf("%s: --json: %v (warnings %v)\n%s", via, err, rep.Warnings, r.stdout)
				}
				if tc.name == "timeout-as-refusal" && rep.Properties["linearizable"] != "violated" {
					t.Errorf("%s: the verdict changed: %v (a refusal is a refusal; only a warning is added)", via, rep.Properties)
				}
				if tc.lines == nil {
					if len(rep.Warnings) != 0 || strings.Contains(r.stderr, "warning") {
						t.Errorf("%s: a false warning: %+v\n%s", via, rep.Warnings, r.stderr)
					}
					continue
				}
				if len(rep.Warnings) != 1 {
					t.Fatalf("%s: warnings %+v, want one", via, rep.Warnings)
				}
				w := rep.Warnings[0]
				if w.File != name || !slices.Equal(w.Lines, tc.lines) || w.Count != tc.count || !strings.Contains(w.Message, tc.inError) ||
					!strings.Contains(w.Message, `no "return"`) {
					t.Errorf("%s: warning %+v, want %s lines %v (%d in all) naming %s", via, w, name, tc.lines, tc.count, tc.inError)
				}
				if !strings.Contains(r.stderr, "leasecheck: warning: "+w.String()) {
					t.Errorf("%s: stderr does not carry the warning %q:\n%s", via, w.String(), r.stderr)
				}
			}
		})
	}
}

// TestRefusalScanChunking: the scan finds the same lines whatever the
// writes' boundaries (a line split across reads, a last line with no
// newline), and skips a line too long to be an op record without losing
// count of the lines after it.
func TestRefusalScanChunking(t *testing.T) {
	bad := `{"process":"A","op":"renew","ttl":5,"call":2,"return":6,"ok":false,"error":"Timeout"}`
	long := `{"process":"A","op":"write","fence":1,"value":"` + strings.Repeat("x", 2*maxScannedLine) + `","call":1,"return":2,"ok":false,"error":"timeout"}`
	input := bad + "\n\n" + long + "\n" + bad + "\n" + bad
	want := []int{1, 4, 5}
	for _, size := range []int{1, 7, 4096, len(input)} {
		s := &refusalScan{}
		for i := 0; i < len(input); i += size {
			s.Write([]byte(input[i:min(i+size, len(input))]))
		}
		w := s.warning("x")
		if w == nil || !slices.Equal(w.Lines, want) || w.Count != 3 {
			t.Errorf("writes of %d bytes: %+v, want lines %v", size, w, want)
		}
	}
}

// TestCheckJSONErrorNoFile: a file that cannot be opened is an input
// error too: exit 2, and --json says which file and why.
func TestCheckJSONErrorNoFile(t *testing.T) {
	bin := checkBinary(t)
	r := runCheckCLI(t, bin, t.TempDir(), nil, "--json", "missing.jsonl")
	var rep struct {
		OK    bool `json:"ok"`
		Error struct {
			File   string `json:"file"`
			Reason string `json:"reason"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 2 || rep.OK || rep.Error.File != "missing.jsonl" || !strings.Contains(rep.Error.Reason, "no such file") {
		t.Errorf("exit %d, JSON %+v (%v):\n%s%s", r.code, rep, err, r.stdout, r.stderr)
	}
}
