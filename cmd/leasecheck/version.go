package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func init() {
	register("version", command{
		summary: "print leasecheck's module version and the Go version it was built with",
		run:     runVersion,
	})
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: leasecheck version")
		fmt.Fprintln(fs.Output(), "\nPrints the module version (a tag, or (devel) for a build from a work tree),\nthe VCS revision when the build recorded one, and the Go version.")
	}
	if code, ok := parseFlagsOnly(fs, args, stderr); !ok {
		return code
	}
	fmt.Fprintln(stdout, versionLine())
	return exitOK
}

// versionLine is "leasecheck VERSION (REVISION[, modified]) GOVERSION OS/ARCH",
// from the build information the Go toolchain embeds.
func versionLine() string {
	version, rev, modified := "(unknown)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		if version == "" {
			version = "(devel)"
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	s := "leasecheck " + version
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += ", modified"
		}
		s += " (" + rev + ")"
	}
	return fmt.Sprintf("%s %s %s/%s", s, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
