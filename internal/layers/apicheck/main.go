// Command apicheck is `make api-check`: it compares the public API of the
// tree with the previous release's and fails on any incompatible change
// to a door (docs/design.md §13), but for the deletion of a name the
// release deprecated, listed in the allow-list with the release that
// deprecated it (CHANGELOG.md states the policy).
//
// The release is named in the repository (.ci/api-baseline: its tag and
// commit), since a clone may come without tags; its source is taken from
// the clone's own history (git archive), so nothing but the Go module
// proxy is reached. golang.org/x/exp's apidiff, at a pinned version,
// writes both trees' export data and lists the incompatible changes;
// changes outside the doors (the command, the examples) are not API and
// are only counted. Exit status: 0 compatible, 1 an incompatible change,
// 2 the check could not run.
package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leasecheck/leasecheck/internal/layers"
)

// apidiffVersion pins golang.org/x/exp's apidiff: the same report for the
// same trees, whenever the check runs.
const apidiffVersion = "v0.0.0-20261121134650-e1094eeca1b5"

const module = "github.com/leasecheck/leasecheck"

func main() {
	baselineFile := flag.String("baseline", ".ci/api-baseline", "the release to compare with: a line \"TAG COMMIT\"")
	allowFile := flag.String("allow", ".ci/api-allow", "the deprecated names this release deletes: a line \"PACKAGE.NAME RELEASE\" each")
	apidiff := flag.String("apidiff", "", "an apidiff binary to use (default: go install golang.org/x/exp/cmd/apidiff@"+apidiffVersion+" into a temporary directory)")
	verbose := flag.Bool("v", false, "list the allowed deletions and the changes outside the doors")
	flag.Parse()
	code, err := run(*baselineFile, *allowFile, *apidiff, *verbose, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "api-check:", err)
	}
	os.Exit(code)
}

func run(baselineFile, allowFile, apidiff string, verbose bool, out io.Writer) (int, error) {
	tag, commit, err := readBaseline(baselineFile)
	if err != nil {
		return 2, err
	}
	f, err := os.Open(allowFile)
	if err != nil {
		return 2, err
	}
	allow, err := parseAllow(f, allowFile, layers.Doors)
	f.Close()
	if err != nil {
		return 2, err
	}
	rev, err := resolve(tag, commit)
	if err != nil {
		return 2, err
	}
	tmp, err := os.MkdirTemp("", "leasecheck-api-check-")
	if err != nil {
		return 2, err
	}
	defer os.RemoveAll(tmp)
	base := filepath.Join(tmp, "base")
	if err := extract(rev, base); err != nil {
		return 2, fmt.Errorf("extracting %s (%s): %w", tag, rev, err)
	}
	if apidiff == "" {
		if apidiff, err = installApidiff(tmp); err != nil {
			return 2, err
		}
	} else if apidiff, err = filepath.Abs(apidiff); err != nil { // it runs in the baseline's directory too
		return 2, err
	}
	// The baseline's deprecated names, as make exported lists them there.
	old, err := layers.CountExported(base)
	if err != nil {
		return 2, fmt.Errorf("reading %s's names: %w", tag, err)
	}
	baseX, treeX := filepath.Join(tmp, "base.x"), filepath.Join(tmp, "tree.x")
	for _, w := range []struct{ dir, file string }{{base, baseX}, {".", treeX}} {
		if _, err := command(w.dir, apidiff, "-m", "-w", w.file, module); err != nil {
			return 2, fmt.Errorf("apidiff: the export data of %s: %w", w.dir, err)
		}
	}
	// A check that compared nothing is no pass: each side must hold doors.
	for _, x := range []struct{ name, file string }{{tag, baseX}, {"the tree", treeX}} {
		if n, err := doorsIn(x.file); err != nil || n == 0 {
			return 2, fmt.Errorf("the export data of %s holds no door (%v): nothing was compared", x.name, err)
		}
	}
	report, err := command(".", apidiff, "-m", "-incompatible", baseX, treeX)
	if err != nil {
		return 2, fmt.Errorf("apidiff: comparing: %w", err)
	}
	changes, err := parseReport(bytes.NewReader(report), module)
	if err != nil {
		return 2, err
	}
	v := judge(changes, allow, old.Deprecated, tag, layers.Doors)
	fmt.Fprintf(out, "api-check: the doors against %s (%s): %d incompatible changes, %d of them deletions of deprecated names on %s, %d outside the doors (not API)\n",
		tag, commit, len(changes)-len(v.Ignored), len(v.Allowed), allowFile, len(v.Ignored))
	if verbose {
		for _, a := range v.Allowed {
			fmt.Fprintln(out, "  allowed:", a)
		}
		for _, a := range v.Ignored {
			fmt.Fprintln(out, "  not API:", a)
		}
	}
	if len(v.Problems) == 0 {
		fmt.Fprintln(out, "api-check: compatible")
		return 0, nil
	}
	for _, p := range v.Problems {
		fmt.Fprintln(out, "INCOMPATIBLE:", p)
	}
	fmt.Fprintf(out, "api-check: %d incompatible changes to the public API; a name leaves a door only deprecated first, for at least two minor releases, and listed in %s when it is deleted (CHANGELOG.md)\n", len(v.Problems), allowFile)
	return 1, nil
}

// readBaseline reads "TAG COMMIT" from the first line that is not a
// comment.
func readBaseline(file string) (tag, commit string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return "", "", fmt.Errorf("%s:%d: want \"TAG COMMIT\" (v0.15.0 40fa0cb)", file, n)
		}
		if _, _, ok := minorOf(fields[0]); !ok {
			return "", "", fmt.Errorf("%s:%d: %q is not a release tag (vMAJOR.MINOR.PATCH)", file, n, fields[0])
		}
		return fields[0], fields[1], nil
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", fmt.Errorf("%s: no \"TAG COMMIT\" line", file)
}

// resolve names the baseline's commit: the tag when the clone has it, else
// the commit (a clone may come without tags); a tag that names another
// commit than the file says is an error.
func resolve(tag, commit string) (string, error) {
	c, err := command(".", "git", "rev-parse", "--verify", "--quiet", commit+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("commit %s (%s) is not in this clone's history (a shallow clone? git fetch --unshallow)", commit, tag)
	}
	full := strings.TrimSpace(string(c))
	if t, err := command(".", "git", "rev-parse", "--verify", "--quiet", tag+"^{commit}"); err == nil {
		if got := strings.TrimSpace(string(t)); got != full {
			return "", fmt.Errorf("tag %s is commit %s here, but the baseline file says %s", tag, got, commit)
		}
	}
	return full, nil
}

// extract writes rev's tree into dir, from the clone's own history.
func extract(rev, dir string) error {
	cmd := exec.Command("git", "archive", "--format=tar", rev)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	terr := untar(pipe, dir)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return terr
}

func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) || filepath.IsAbs(name) {
			return fmt.Errorf("archive entry %q leaves the directory", h.Name)
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, cerr := io.Copy(f, tr)
			if err := errors.Join(cerr, f.Close()); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, path); err != nil {
				return err
			}
		}
	}
}

// installApidiff builds the pinned apidiff into dir (from the module
// proxy, or the module cache).
func installApidiff(dir string) (string, error) {
	bin := filepath.Join(dir, "bin")
	cmd := exec.Command("go", "install", "golang.org/x/exp/cmd/apidiff@"+apidiffVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install golang.org/x/exp/cmd/apidiff@%s: %v\n%s", apidiffVersion, err, out)
	}
	return filepath.Join(bin, "apidiff"), nil
}

// command runs name in dir and returns its standard output; its standard
// error is in the error.
func command(dir, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// The module is compared as its go.mod says, whatever workspace the
	// caller is in.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// doorsIn counts the doors whose export data apidiff wrote to file (a zip
// with an entry per package, its import path and ".x").
func doorsIn(file string) (int, error) {
	z, err := zip.OpenReader(file)
	if err != nil {
		return 0, err
	}
	defer z.Close()
	n := 0
	for _, f := range z.File {
		if slices.Contains(layers.Doors, strings.TrimSuffix(strings.TrimPrefix(f.Name, module+"/"), ".x")) {
			n++
		}
	}
	return n, nil
}
