package explore_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/explore"
)

// TestParseCoverProfile: statements are counted per package (another
// package's blocks are not), a block listed by two runs counts as run when
// either ran it, adjacent never-run blocks join into one line range, and a
// package absent from the profile is listed with nothing run; cover -func
// lines at 0.0% become the package's functions never run. A malformed line
// is refused with its number.
func TestParseCoverProfile(t *testing.T) {
	prof := `mode: set
m/a/x.go:1.1,3.2 2 1
m/a/x.go:4.1,5.2 3 0
m/a/x.go:6.1,8.2 1 0
m/a/x.go:10.1,10.9 4 0
m/a/x.go:10.1,10.9 4 1
m/a/y.go:2.1,2.5 5 0
m/b/z.go:1.1,2.2 7 1
`
	c, err := explore.ParseCoverProfile(strings.NewReader(prof), []string{"m/a", "m/c"})
	if err != nil {
		t.Fatal(err)
	}
	a, cc := c.Packages[0], c.Packages[1]
	if a.Statements != 15 || a.Covered != 6 || a.Percent != 40 {
		t.Errorf("m/a: %d of %d, %.1f%%", a.Covered, a.Statements, a.Percent)
	}
	if !slices.Equal(a.Unreached, []string{"x.go:4-8", "y.go:2"}) {
		t.Errorf("m/a never run: %v", a.Unreached)
	}
	if cc.Statements != 0 || cc.Percent != 0 || len(cc.Unreached) != 0 {
		t.Errorf("m/c: %+v", cc)
	}
	funcs := "m/a/x.go:1:\tF\t100.0%\nm/a/x.go:4:\tG\t0.0%\nm/b/z.go:1:\tH\t0.0%\ntotal:\t(statements)\t40.0%\n"
	if err := c.AddFuncCoverage(strings.NewReader(funcs)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Packages[0].UnreachedFunctions, []string{"x.go:4:G"}) || len(c.Packages[1].UnreachedFunctions) != 0 {
		t.Errorf("functions never run: %v %v", c.Packages[0].UnreachedFunctions, c.Packages[1].UnreachedFunctions)
	}
	if _, err := explore.ParseCoverProfile(strings.NewReader("mode: set\nm/a/x.go:1.1,3.2 two 1\n"), nil); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a malformed line: %v", err)
	}
}
