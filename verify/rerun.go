package verify

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// rerunName is how a replay line starts: the command that runs this
// program again.
func (c *Command) rerunName() string {
	if c.rerun != "" {
		return c.rerun
	}
	return c.Name
}

// rerunCommand is the command that runs this program again from the
// directory it was run in, for the replay lines of Main's programs: `go run
// PKG` when `go run` built it (its binary lies in a temporary directory and
// is gone when it exits, and its name is on nobody's PATH; `go run` of the
// main package's import path works from anywhere in its module), the path
// as typed when it was run by path, otherwise (installed, on PATH) nothing:
// its name.
func rerunCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return rerunFor(exe, os.Args[0])
}

func rerunFor(exe, arg0 string) string {
	if builtByGoRun(exe) {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
			return "go run " + bi.Path
		}
	}
	if strings.ContainsRune(arg0, filepath.Separator) || strings.ContainsRune(arg0, '/') {
		return shellQuote(arg0)
	}
	return ""
}

// builtByGoRun: `go run` links into $GOTMPDIR/go-buildNNN/bNNN/exe/NAME.
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	return filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(dir))), "go-build")
}
