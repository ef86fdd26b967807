package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/leasecheck/leasecheck/internal/explore"
)

// modulePath is leasecheck's module; coveredPackages the explored machines
// whose code --coverage measures.
const modulePath = "github.com/leasecheck/leasecheck"

var coveredPackages = []string{modulePath + "/internal/impl/holder", modulePath + "/internal/impl/memstore"}

// measureCoverage re-runs the exploration args describe (explore's own
// arguments, --coverage removed) in a build of leasecheck with coverage of
// the explored machines, under dir, and returns what it ran of them. The
// instrumented run must reach the same verdict as this one (want; nil when
// a budget ended this run, whose verdict may then differ): it is the same
// deterministic search.
func measureCoverage(dir string, args []string, want *explore.Verdict) (*explore.Coverage, error) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return nil, errors.New("--coverage builds leasecheck with Go's coverage: it needs the go command on PATH")
	}
	var out bytes.Buffer
	list := exec.Command(gocmd, "list", "-m", "-f", "{{.Path}} {{.Dir}}")
	list.Stdout = &out
	if err := list.Run(); err != nil || !strings.HasPrefix(out.String(), modulePath+" ") {
		return nil, fmt.Errorf("--coverage builds leasecheck from its source: run it inside the %s module's directory (go list -m says %q)", modulePath, strings.TrimSpace(out.String()))
	}
	modDir := strings.TrimSpace(strings.TrimPrefix(out.String(), modulePath+" "))
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	counters := filepath.Join(abs, "counters")
	if err := os.RemoveAll(counters); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(counters, 0o755); err != nil {
		return nil, err
	}
	run := func(stdout io.Writer, env []string, name string, arg ...string) error {
		c := exec.Command(name, arg...)
		c.Dir, c.Stdout, c.Env = modDir, stdout, append(os.Environ(), env...)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		if err := c.Run(); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(arg, " "), err, stderr.String())
		}
		return nil
	}
	// The command's own package is instrumented too: a binary whose main
	// package is not writes no counters.
	bin := filepath.Join(abs, "leasecheck-cover")
	if err := run(nil, nil, gocmd, "build", "-cover", "-coverpkg="+modulePath+"/cmd/leasecheck,"+strings.Join(coveredPackages, ","), "-o", bin, modulePath+"/cmd/leasecheck"); err != nil {
		return nil, err
	}
	var rep bytes.Buffer
	child := exec.Command(bin, append(append([]string{"explore"}, args...), "--json", "--no-minimize", "--progress=false", "--out", filepath.Join(abs, "failures"))...)
	child.Stdout, child.Env = &rep, append(os.Environ(), "GOCOVERDIR="+counters)
	var childErr bytes.Buffer
	child.Stderr = &childErr
	if err := child.Run(); err != nil && child.ProcessState.ExitCode() == exitUsage {
		return nil, fmt.Errorf("the instrumented exploration: %v\n%s", err, childErr.String())
	}
	var got struct {
		Verdict json.RawMessage `json:"verdict"`
	}
	if err := json.Unmarshal(rep.Bytes(), &got); err != nil {
		return nil, fmt.Errorf("the instrumented exploration's report: %v", err)
	}
	if want != nil {
		w, _ := json.Marshal(want)
		if !bytes.Equal(w, got.Verdict) {
			return nil, fmt.Errorf("the instrumented exploration reached another verdict (a bug in leasecheck: the search is deterministic):\n%s\n%s", got.Verdict, w)
		}
	}
	profile := filepath.Join(abs, "profile.txt")
	if err := run(nil, nil, gocmd, "tool", "covdata", "textfmt", "-i="+counters, "-pkg="+strings.Join(coveredPackages, ","), "-o", profile); err != nil {
		return nil, err
	}
	f, err := os.Open(profile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cov, err := explore.ParseCoverProfile(f, coveredPackages)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", profile, err)
	}
	var funcs bytes.Buffer
	if err := run(&funcs, nil, gocmd, "tool", "cover", "-func="+profile); err != nil {
		return nil, err
	}
	if err := cov.AddFuncCoverage(&funcs); err != nil {
		return nil, err
	}
	cov.Method = fmt.Sprintf("Go statement coverage: this exploration re-run by %s (built with -cover), counters in %s, profile %s", bin, counters, profile)
	return cov, nil
}

// withoutFlag returns args without flag name and its value (--name V,
// --name=V, one dash or two).
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		trimmed := strings.TrimLeft(a, "-")
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case strings.HasPrefix(a, "-") && trimmed == name:
			i++ // and its value
		case strings.HasPrefix(a, "-") && strings.HasPrefix(trimmed, name+"="):
		default:
			out = append(out, a)
		}
	}
	return out
}

// printCoverage renders the coverage section of explore's report.
func printCoverage(w io.Writer, c *explore.Coverage) {
	const shown = 12
	fmt.Fprintf(w, "\ncoverage of the explored machines (%s)\n", c.Method)
	for _, p := range c.Packages {
		fmt.Fprintf(w, "  %-28s %5.1f%% of %d statements run\n", strings.TrimPrefix(p.Package, modulePath+"/"), p.Percent, p.Statements)
		list := func(what string, xs []string) {
			if len(xs) == 0 {
				return
			}
			more := ""
			if len(xs) > shown {
				more = fmt.Sprintf(", ... (%d more in --json)", len(xs)-shown)
				xs = xs[:shown]
			}
			fmt.Fprintf(w, "    %s: %s%s\n", what, strings.Join(xs, ", "), more)
		}
		list("functions never run", p.UnreachedFunctions)
		list("lines never run", p.Unreached)
	}
}
