// Package rapidtest makes the repository's rapid property tests keep no
// fail files. Rapid writes a failing case to testdata/rapid/<Test>/ and, on
// every later run, replays every file there before drawing anything new: a
// fail file left in a checkout, or committed, keeps `go test` red for good,
// even after the generator it was drawn from changed. Import it for its
// effect from one _test.go file of each package that uses rapid:
//
//	import _ "github.com/leasecheck/leasecheck/internal/rapidtest"
//
// A failure still tells how to reproduce it: rapid prints the -rapid.seed
// of the failing case, and the tests print a replay command. Passing
// -rapid.nofailfile=false (or RAPID_NOFAILFILE=false) on the command line
// writes fail files again, for a session that wants them.
package rapidtest

import (
	"flag"
	"os"

	_ "pgregory.net/rapid" // its flags are registered before this init runs
)

func init() {
	if _, set := os.LookupEnv("RAPID_NOFAILFILE"); set {
		return // the environment decided
	}
	f := flag.Lookup("rapid.nofailfile")
	if f == nil {
		panic("rapidtest: pgregory.net/rapid registered no -rapid.nofailfile flag")
	}
	f.DefValue = "true"
	if err := f.Value.Set("true"); err != nil {
		panic(err)
	}
}
