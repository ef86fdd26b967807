package verify_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/verify"
)

// TestStoryOneUnit: a real backend's failure is told in one unit. Its
// history is in µs, its fault log and fault records in durations; the
// story on stderr and the .md beside the saved history give every time in
// ms, named: no bare µs number (t=1567317, [726238,1567285]) and no
// seconds (0.726s) beside an ms (840ms). And it is one clock: the time
// the fault log gives a pause is the start the violation gives it.
func TestStoryOneUnit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, errOut := run(t, "--backend", "mem-unfenced", "--faults", "pause", "--duration", "3s", "--ttl", "300ms", "--out", dir, "--shrink-for", "0")
	if code != verify.ExitViolation {
		t.Fatalf("exit %d, want %d:\n%s", code, verify.ExitViolation, errOut)
	}
	mds, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(mds) != 1 {
		t.Fatalf("saved stories %v, want one", mds)
	}
	md, err := os.ReadFile(mds[0])
	if err != nil {
		t.Fatal(err)
	}
	num := `-?\d+(?:\.\d+)?`
	instant := regexp.MustCompile(`\bt(?:=|>=|<=)(` + num + `)(ms)?`)
	span := regexp.MustCompile(`\[(` + num + `),(` + num + `|-)\](ms)?`)
	secs := regexp.MustCompile(`\b\d+\.\d+ ?s\b|\b\d+s\b`)
	for name, text := range map[string]string{"stderr": errOut, "the .md": string(md)} {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "memverify: ") {
				continue // the command's own flags, echoed as typed (--duration 3s)
			}
			for _, m := range instant.FindAllStringSubmatch(line, -1) {
				if m[2] != "ms" {
					t.Errorf("%s: bare time %q:\n%s", name, m[0], line)
				}
			}
			for _, m := range span.FindAllStringSubmatch(line, -1) {
				if m[3] != "ms" {
					t.Errorf("%s: bare span %q:\n%s", name, m[0], line)
				}
			}
			if s := secs.FindString(line); s != "" {
				t.Errorf("%s: a time in seconds (%q) beside the ms:\n%s", name, s, line)
			}
		}
	}
	// The pause's start: the fault log's time is the violation's.
	logged := regexp.MustCompile(`seed 1 +(` + num + `)ms pause `).FindStringSubmatch(errOut)
	told := regexp.MustCompile(`pause\(h\d\) \[(` + num + `),`).FindStringSubmatch(errOut)
	if logged == nil || told == nil {
		t.Fatalf("no pause in the fault log (%v) or in the violation (%v):\n%s", logged, told, errOut)
	}
	if logged[1] != told[1] {
		t.Errorf("the fault log starts the pause at %sms, the violation at %sms:\n%s", logged[1], told[1], errOut)
	}
	if !strings.Contains(string(md), "given in ms") {
		t.Errorf("the .md does not say its times are in ms:\n%s", md)
	}
}
