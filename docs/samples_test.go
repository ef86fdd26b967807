package docs_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the command samples of README.md and docs/*.md from the commands' output")

// A sample is a command of a fenced block of README.md or docs/*.md,
// written "$ COMMAND" on a line of its own, with the output that follows
// it up to the next "$ " line or the end of the block.
type sample struct {
	file    string
	line    int // the "$ " line, 1-based
	command string
	output  []string
	end     int // the line after the output, 1-based
}

// samples lists the samples of one Markdown file.
func samples(file string, text []string) []sample {
	var out []sample
	in := false
	var cur *sample
	flush := func(end int) {
		if cur != nil {
			cur.end = end
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, l := range text {
		if strings.HasPrefix(l, "```") {
			if in {
				flush(i + 1)
			}
			in = !in
			continue
		}
		if !in {
			continue
		}
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			flush(i + 1)
			cur = &sample{file: file, line: i + 1, command: cmd}
			continue
		}
		if cur != nil {
			cur.output = append(cur.output, l)
		}
	}
	return out
}

// Every "$ " sample of the README and of docs/ is run, in a fresh
// directory, and its output must be the one shown; `go test ./docs -run
// TestCommandSamples -update` rewrites the samples from what the commands
// print now. The commands a sample may show: `leasecheck ARGS` (the
// command built from this tree) and `cat FILE`, whose output shown is
// FILE's contents (written into the directory for the commands after it).
// In a sample's output a line "..." stands for any lines, and "..." within
// a line for any text (-update keeps both where the rest still matches).
// Stdout and stderr are shown together, as a terminal shows them.
func TestCommandSamples(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, page := range append([]string{"../README.md"}, pages...) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Split(string(b), "\n")
		ss := samples(page, text)
		if len(ss) == 0 {
			continue
		}
		found += len(ss)
		// Samples of one block share its directory (cat writes a file
		// the next command reads); each block starts afresh.
		dirs := map[int]string{}
		var edits []sampleEdit
		for _, s := range ss {
			block := blockStart(text, s.line)
			if dirs[block] == "" {
				dirs[block] = t.TempDir()
			}
			got, err := runSample(t, dirs[block], s)
			if err != nil {
				t.Errorf("%s:%d: %s: %v", s.file, s.line, s.command, err)
				continue
			}
			if matchLines(s.output, got) {
				continue
			}
			if *update {
				edits = append(edits, sampleEdit{s, regenerate(s.output, got)})
				continue
			}
			t.Errorf("%s:%d: the sample of `%s` is stale (go test ./docs -run TestCommandSamples -update rewrites it); the command prints:\n%s",
				s.file, s.line, s.command, strings.Join(got, "\n"))
		}
		if len(edits) > 0 {
			for i := len(edits) - 1; i >= 0; i-- {
				e := edits[i]
				text = append(text[:e.s.line], append(e.lines, text[e.s.end-1:]...)...)
			}
			if err := os.WriteFile(page, []byte(strings.Join(text, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d sample(s) rewritten", page, len(edits))
		}
	}
	if found == 0 {
		t.Fatal("no command sample found in README.md or docs/*.md: the pattern no longer matches the pages")
	}
}

type sampleEdit struct {
	s     sample
	lines []string
}

// blockStart is the line of the fence that opens the block holding line.
func blockStart(text []string, line int) int {
	for i := line - 1; i >= 0; i-- {
		if strings.HasPrefix(text[i], "```") {
			return i
		}
	}
	return 0
}

var (
	leasecheckOnce sync.Once
	leasecheckBin  string
	leasecheckErr  error
)

// leasecheck builds the command from this tree once per test run.
func leasecheck(t *testing.T) string {
	leasecheckOnce.Do(func() {
		dir, err := os.MkdirTemp("", "leasecheck-docs-")
		if err != nil {
			leasecheckErr = err
			return
		}
		leasecheckBin = filepath.Join(dir, "leasecheck")
		if out, err := exec.Command("go", "build", "-o", leasecheckBin, "../cmd/leasecheck").CombinedOutput(); err != nil {
			leasecheckErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if leasecheckErr != nil {
		t.Fatal(leasecheckErr)
	}
	return leasecheckBin
}

// runSample runs one sample's command in dir and returns its output lines.
func runSample(t *testing.T, dir string, s sample) ([]string, error) {
	args := strings.Fields(s.command)
	switch {
	case len(args) == 2 && args[0] == "cat":
		// The sample shows the file: it is what the file holds.
		if err := os.WriteFile(filepath.Join(dir, args[1]), []byte(strings.Join(s.output, "\n")+"\n"), 0o644); err != nil {
			return nil, err
		}
		return s.output, nil
	case args[0] == "leasecheck":
		if strings.ContainsAny(s.command, `'"|;&<>$`+"`") {
			return nil, fmt.Errorf("a sample's leasecheck command is plain words: no quotes, pipes or redirections")
		}
		cmd := exec.Command(leasecheck(t), args[1:]...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			if _, ok := err.(*exec.ExitError); !ok {
				return nil, err
			}
		}
		return strings.Split(strings.TrimRight(out.String(), "\n"), "\n"), nil
	default:
		return nil, fmt.Errorf("no test runs this command: a sample shows `leasecheck ...` or `cat FILE` (or write it without \"$ \" and no output)")
	}
}

// matchLines: the output got is what the sample shows, a line "..." of the
// sample standing for any lines and "..." within a line for any text.
func matchLines(want, got []string) bool {
	return align(want, got, func(w, g string) bool { return matchLine(w, g) }) != nil
}

// align matches pattern lines to output lines (a line "..." takes any
// number of them), each other pattern line to one line same says it
// matches; it returns the output line each pattern line starts at, or nil.
func align(want, got []string, same func(w, g string) bool) []int {
	at := make([]int, len(want))
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		if i == len(want) {
			return j == len(got)
		}
		at[i] = j
		if strings.TrimSpace(want[i]) == "..." {
			for k := j; k <= len(got); k++ {
				if rec(i+1, k) {
					return true
				}
			}
			return false
		}
		return j < len(got) && same(want[i], got[j]) && rec(i+1, j+1)
	}
	if !rec(0, 0) {
		return nil
	}
	return at
}

// matchLine: trailing spaces aside, got is want with each "..." of want
// standing for any text.
func matchLine(want, got string) bool {
	want, got = strings.TrimRight(want, " \t"), strings.TrimRight(got, " \t")
	if !strings.Contains(want, "...") {
		return want == got
	}
	parts := strings.Split(want, "...")
	re := "^"
	for i, p := range parts {
		if i > 0 {
			re += ".*?"
		}
		re += regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(re + "$").MatchString(got)
}

// regenerate writes a stale sample's output anew from got, keeping the
// sample's elisions where the rest of it still lines up: each line "..."
// stays, each line with "..." in it stays where it still matches, and each
// plain line is replaced by the output line in its place (a line in the
// same place begins with the same word). When the sample no longer lines
// up at all, the whole output replaces it.
func regenerate(want, got []string) []string {
	firstWord := func(s string) string {
		f := strings.Fields(s)
		if len(f) == 0 {
			return ""
		}
		return f[0]
	}
	at := align(want, got, func(w, g string) bool {
		if strings.Contains(w, "...") {
			return matchLine(w, g)
		}
		return firstWord(w) == firstWord(g) && len(w)-len(strings.TrimLeft(w, " ")) == len(g)-len(strings.TrimLeft(g, " "))
	})
	if at == nil {
		return got
	}
	out := make([]string, len(want))
	for i, w := range want {
		if strings.Contains(w, "...") {
			out[i] = w
		} else {
			out[i] = got[at[i]]
		}
	}
	return out
}
