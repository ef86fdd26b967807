package classbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// RunOutput is what a timing program prints: the verdict per property
// ("holds", "violated", "unknown") and the nanoseconds spent reading and
// deciding the history.
type RunOutput struct {
	Verdicts map[string]string `json:"verdicts"`
	NS       int64             `json:"ns"`
}

// Measurement is one program run on one cell.
type Measurement struct {
	RunOutput
	PeakKB int64  // peak resident memory of the process
	Err    string // the run failed (a crash, a refusal, killed past its budget)
}

// Program is a built timing program: this tree's classrun, or a release's.
type Program struct {
	Name string // "now", a tag
	Path string
}

// ModuleRoot finds the repository root from the working directory.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the leasecheck module")
	}
	return filepath.Dir(mod), nil
}

// BuildCurrent builds this tree's classrun into dir, with the build tags
// given (a test builds a deliberately slowed checker so).
func BuildCurrent(root, dir string, tags ...string) (Program, error) {
	bin := filepath.Join(dir, "classrun-now")
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
		bin += "-" + strings.Join(tags, "-")
		args[2] = bin
	}
	cmd := exec.Command("go", append(args, "./internal/classbench/classrun")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return Program{}, fmt.Errorf("building classrun: %v\n%s", err, out)
	}
	return Program{Name: "now", Path: bin}, nil
}

// Release is a tagged release to time beside this tree: its tag, and the
// commit it names, for a clone that lacks the tag.
type Release struct{ Tag, Commit string }

// Releases are the baselines: v0.1.0, the release that decided the class's
// first rows, v0.2.0, the main those rows were measured on, v0.3.0, the
// first release with the class's portfolio, v0.3.1, the first with the
// fast paths (the greedy witness and the cheap refutations), v0.4.0 to
// v0.6.0 the releases after it, v0.7.0 to v0.12.0 the explorer's faster
// releases. Tag each release from now on and add it here: the regression rule (Judge)
// compares a cell with the best of every release listed that got it right.
var Releases = []Release{{"v0.1.0", "fdf3e33"}, {"v0.2.0", "a58662a"}, {"v0.3.0", "d42b9e9"}, {"v0.3.1", "26c0770"}, {"v0.4.0", "163b3a4"}, {"v0.5.0", "c128004"}, {"v0.6.0", "1c92f4f"}, {"v0.7.0", "b8a36c0"}, {"v0.8.0", "5cbc41f"}, {"v0.9.0", "69ddc50"}, {"v0.10.0", "2d14d5d"}, {"v0.11.0", "69b1997"}, {"v0.12.0", "28fb16a"}}

// resolve names the commit to build: the tag when the clone has it, else
// the commit (both are in main's history).
func (r Release) resolve(root string) (string, error) {
	for _, rev := range []string{r.Tag, r.Commit} {
		cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", rev+"^{commit}")
		cmd.Dir = root
		if out, err := cmd.Output(); err == nil {
			return strings.TrimSpace(string(out)), nil
		}
	}
	return "", fmt.Errorf("neither tag %s nor commit %s is in this clone", r.Tag, r.Commit)
}

// ReleaseMain is the timing program written into a release's tree: it
// reads and checks as classrun's check mode does, through the release's
// own model.ReadHistoryFile and checker.Check. CHECK is replaced by the
// call the release's Check signature takes.
const ReleaseMain = `// Written by internal/classbench into a release's source tree.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

func main() {
	timeout := flag.Duration("timeout", 10*time.Second, "the budget")
	flag.Parse()
	start := time.Now()
	h, err := model.ReadHistoryFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	CHECK
	out := struct {
		Verdicts map[string]string ` + "`json:\"verdicts\"`" + `
		NS       int64             ` + "`json:\"ns\"`" + `
	}{Verdicts: map[string]string{}}
	for _, p := range r.Properties {
		out.Verdicts[p.Name] = p.Verdict.String()
	}
	out.NS = time.Since(start).Nanoseconds()
	json.NewEncoder(os.Stdout).Encode(out)
}
`

// Tree takes the release's source tree out of git into dir/src-TAG and
// returns its path (the explorer's rate benchmark builds its command from
// it too).
func (r Release) Tree(root, dir string) (string, error) {
	commit, err := r.resolve(root)
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "src-"+r.Tag)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.Command("git", "archive", "--format=tar", commit)
	archive.Dir = root
	tarball, err := archive.Output()
	if err != nil {
		return "", fmt.Errorf("git archive %s: %v", commit, err)
	}
	untar := exec.Command("tar", "-x", "-C", src)
	untar.Stdin = bytes.NewReader(tarball)
	if out, err := untar.CombinedOutput(); err != nil {
		return "", fmt.Errorf("unpacking %s: %v\n%s", commit, err, out)
	}
	return src, nil
}

// BuildRelease takes the release's tree out of git into dir and builds the
// timing program in it. Only its checker and model packages (and
// porcupine) are compiled, so nothing needs fetching.
func BuildRelease(root, dir string, rel Release) (Program, error) {
	src, err := rel.Tree(root, dir)
	if err != nil {
		return Program{}, err
	}
	checkSrc, err := os.ReadFile(filepath.Join(src, "checker", "check.go"))
	if err != nil {
		return Program{}, err
	}
	call := "r := checker.Check(context.Background(), h, checker.Options{Timeout: *timeout})"
	if bytes.Contains(checkSrc, []byte("opts Options) (*Result, error)")) {
		call = "r, err := checker.Check(context.Background(), h, checker.Options{Timeout: *timeout})\n\tif err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(2)\n\t}"
	}
	mainDir := filepath.Join(src, "cmd", "classrun-release")
	if err := os.MkdirAll(mainDir, 0o755); err != nil {
		return Program{}, err
	}
	if err := os.WriteFile(filepath.Join(mainDir, "main.go"), []byte(strings.Replace(ReleaseMain, "CHECK", call, 1)), 0o644); err != nil {
		return Program{}, err
	}
	bin := filepath.Join(dir, "classrun-"+rel.Tag)
	build := exec.Command("go", "build", "-mod=mod", "-o", bin, "./cmd/classrun-release")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return Program{}, fmt.Errorf("building %s (%s): %v\n%s", rel.Tag, rel.Commit, err, out)
	}
	return Program{Name: rel.Tag, Path: bin}, nil
}

// Run times one program on one history file: args are its flags before
// the file. A run that outlives the budget by much is killed.
func Run(path string, budget time.Duration, file string, args ...string) Measurement {
	ctx, cancel := context.WithTimeout(context.Background(), 3*budget+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append(append(args, "-timeout", budget.String()), file)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var m Measurement
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			m.PeakKB = ru.Maxrss
		}
	}
	if err != nil {
		m.Err = fmt.Sprintf("%v: %s", err, strings.TrimSpace(stderr.String()))
		return m
	}
	if err := json.Unmarshal(stdout.Bytes(), &m.RunOutput); err != nil {
		m.Err = fmt.Sprintf("its output: %v", err)
	}
	return m
}
