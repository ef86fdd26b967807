package rapidtest_test

import (
	"os"
	"testing"

	"pgregory.net/rapid"

	_ "github.com/leasecheck/leasecheck/internal/rapidtest"
)

// failing is a rapid.TB that records a failure instead of failing the test.
type failing struct {
	testing.TB
	failed bool
}

func (f *failing) Fatalf(string, ...any) { f.failed = true; panic(stop{}) }
func (f *failing) Fatal(...any)          { f.failed = true; panic(stop{}) }
func (f *failing) Errorf(string, ...any) { f.failed = true }
func (f *failing) Error(...any)          { f.failed = true }
func (f *failing) FailNow()              { f.failed = true; panic(stop{}) }
func (f *failing) Fail()                 { f.failed = true }
func (f *failing) Failed() bool          { return f.failed }

type stop struct{}

// TestFailingPropertyLeavesNoFailFile: a property that fails writes nothing
// under testdata/rapid/ (in a scratch directory), so no later run replays
// it; rapid still failed, so the failure is reported.
func TestFailingPropertyLeavesNoFailFile(t *testing.T) {
	t.Chdir(t.TempDir())
	f := &failing{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stop); !ok {
					panic(r)
				}
			}
		}()
		rapid.Check(f, func(rt *rapid.T) {
			if rapid.IntRange(0, 100).Draw(rt, "n") > 10 {
				rt.Fatalf("planted: n > 10")
			}
		})
	}()
	if !f.failed {
		t.Fatal("the planted failure was not found: the test proves nothing")
	}
	if _, err := os.Stat("testdata/rapid"); err == nil {
		t.Fatal("rapid wrote testdata/rapid/: a fail file that every later run would replay first")
	}
}
