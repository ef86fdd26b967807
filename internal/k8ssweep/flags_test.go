package k8ssweep

import (
	"flag"
	"testing"
)

// TestFlagsPrefixed: the sweeps' flags are registered under k8slease.,
// so a binary that defines -seeds (or -profile, -save, -scenario) of its
// own does not panic at start; ShortFlags, leasecheck's own binaries'
// second names, would.
func TestFlagsPrefixed(t *testing.T) {
	for _, n := range sweepFlags {
		if flag.Lookup(FlagPrefix+n) == nil {
			t.Errorf("-%s%s is not registered", FlagPrefix, n)
		}
		if flag.Lookup(n) != nil {
			t.Fatalf("-%s is registered: a user's own -%s would panic", n, n)
		}
	}
	fs := flag.NewFlagSet("user", flag.ContinueOnError)
	flag.CommandLine.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	fs.Int("seeds", 7, "the user's own") // panics on a name already defined
	if err := fs.Parse([]string{"-seeds", "3", "-k8slease.seeds", "5"}); err != nil {
		t.Fatal(err)
	}
	if *SeedsFlag != 5 {
		t.Errorf("-k8slease.seeds 5 read as %d", *SeedsFlag)
	}
	*SeedsFlag = 0
}
