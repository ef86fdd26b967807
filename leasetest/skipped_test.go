package leasetest_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/leasetest"
)

// TestSkippedPropertiesLogged: when the suite ends, Run writes one line
// naming every property it did not check and why — those Info rules out
// (no fences, unchecked writes) and those Options.Skip drops — to
// Options.Log, and to standard error by default, so that they show in
// go test's normal output, not only with -v. A property that ran is not
// listed.
func TestSkippedPropertiesLogged(t *testing.T) {
	// A lock with no fences and unchecked writes (the zero protection):
	// FenceIncreases, StaleFence and WriteAfterExpiry do not apply.
	opts := only(userOpts(noFencePlain, "plainlock"), "Acquire", "FenceIncreases", "StaleFence", "WriteAfterExpiry")
	check := func(t *testing.T, out, suite string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "leasetest "+suite+": ") {
			t.Fatalf("want one line for suite %s, got:\n%s", suite, out)
		}
		l := lines[0]
		n := len(leasetest.Properties()) - 1 // all but Acquire
		if !strings.Contains(l, ": "+itoa(n)+" of "+itoa(len(leasetest.Properties()))+" properties not checked: ") {
			t.Errorf("the line does not count %d skipped properties:\n%s", n, l)
		}
		for _, want := range []string{
			"FenceIncreases (Info.Fences is NoFences", "StaleFence (Info.Fences is NoFences",
			"WriteAfterExpiry (Info.Writes is UncheckedWrites", "Linearizable (Options.Skip)", "MutualExclusion (Options.Skip)",
		} {
			if !strings.Contains(l, want) {
				t.Errorf("the line lacks %q:\n%s", want, l)
			}
		}
		if strings.Contains(l, "Acquire (") {
			t.Errorf("the line lists Acquire, which ran:\n%s", l)
		}
	}

	var buf bytes.Buffer
	opts.Log = &buf
	t.Run("log", func(t *testing.T) { leasetest.Run(t, userFactory(noFencePlain, ""), opts) })
	check(t, buf.String(), t.Name()+"/log")

	// The default: standard error (this test is not parallel, so swapping
	// os.Stderr for the suite's duration is safe).
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	opts.Log = nil
	t.Run("stderr", func(t *testing.T) { leasetest.Run(t, userFactory(noFencePlain, ""), opts) })
	os.Stderr = saved
	w.Close()
	var got bytes.Buffer
	if _, err := got.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	r.Close()
	check(t, got.String(), t.Name()+"/stderr")
}

func itoa(n int) string { return strconv.Itoa(n) }
