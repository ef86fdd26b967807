// Package docs_test checks that the repository's documentation stands alone:
// nothing points outside the clone, and what the README points to exists.
package docs_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/layers"
	"github.com/leasecheck/leasecheck/internal/runprop"
)

// No file of the repository refers to a directory beside the clone (the
// workplace's shared/ is not in a clone) or to a file it does not have, and
// every relative link of the README and of docs/ names a file that is in it.
func TestDocsStandAlone(t *testing.T) {
	root := ".."
	// .ci/run still finds the reference lease.py beside the clone; the
	// lead changes it (it is not this branch's to edit).
	allowed := map[string]bool{filepath.Join(root, ".ci", "run"): true}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if allowed[path] || strings.HasSuffix(path, ".png") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "../"+"shared") || strings.Contains(string(b), "shared/"+"reference") {
			t.Errorf("%s refers to the workplace's shared/, which a clone does not have", path)
		}
		// The design was once one file that no clone has (DESIGN and .md):
		// cite docs/specification.md §N (§1–4) or docs/design.md §N.
		if strings.Contains(string(b), "DESIGN"+".md") {
			t.Errorf("%s cites DESIGN%s, which a clone does not have: cite docs/specification.md or docs/design.md", path, ".md")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range append([]string{"../README.md"}, pages...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range relativeLink.FindAllStringSubmatch(string(b), -1) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), m[1])); err != nil {
				t.Errorf("%s links to %s: %v", doc, m[1], err)
			}
		}
	}
}

// relativeLink is a Markdown link to a file of the repository: its path
// (no scheme, so no URL) and an optional #anchor.
var relativeLink = regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)

// The README is what a newcomer reads in five minutes: at most 300 lines,
// the two commands, and a link to the guide of each use, every one a page
// under docs/ that exists (the full text lives there, not in the README).
func TestReadmeIsShortAndLinksEveryGuide(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines; at most 300 (move the detail into a page under docs/)", n)
	}
	for _, cmd := range []string{"go run ./cmd/leasecheck run", "make test"} {
		if !strings.Contains(readme, cmd) {
			t.Errorf("README.md does not give the command %q", cmd)
		}
	}
	linked := map[string]bool{}
	for _, m := range relativeLink.FindAllStringSubmatch(readme, -1) {
		if !strings.HasPrefix(m[1], "docs/") || !strings.HasSuffix(m[1], ".md") {
			continue
		}
		linked[m[1]] = true
		if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
			t.Errorf("README.md links to %s: %v", m[1], err)
		}
	}
	// One guide per use: run in the simulator, explore, verify a backend,
	// your own client in virtual time, a history and its format, benchmarks.
	for _, page := range []string{"run.md", "explore.md", "verify.md", "vclient.md", "history.md", "benchmarks.md"} {
		if !linked["docs/"+page] {
			t.Errorf("README.md does not link to docs/%s", page)
		}
	}
}

// The specification names every property leasecheck judges; the README's
// short property table and the full one in docs/history.md list each.
func TestSpecificationNamesEveryProperty(t *testing.T) {
	spec, err := os.ReadFile("specification.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("history.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range campaign.Properties() {
		if !strings.Contains(string(spec), "**`"+p+"`**") {
			t.Errorf("docs/specification.md does not define %s", p)
		}
		if !strings.Contains(string(readme), "| `"+p+"` |") {
			t.Errorf("README.md's property table lacks %s", p)
		}
		if !strings.Contains(string(guide), "| `"+p+"` |") {
			t.Errorf("docs/history.md's property table lacks %s", p)
		}
	}
}

// Where a comment or a page counts the properties ("the N history
// properties", "judges N run properties", "Check judges N
// properties"), the count is the code's: checker.Properties for the history
// properties, runprop.Properties for the run properties. A property added to
// the code and not to the prose fails here, in every file that counts.
func TestPropertyCountsAgreeWithTheCode(t *testing.T) {
	want := map[string]int{
		"history": len(checker.Properties()),
		"run":     len(runprop.Properties()),
		"judges":  len(checker.Properties()), // "Check judges N properties": the checker's
	}
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	number := map[string]int{}
	for i, w := range words {
		number[w] = i
	}
	// A count and its noun may be broken across lines of a comment.
	gap := `(?:\s|//)+`
	count := regexp.MustCompile(`(?i)\b(history|run|judges)` + gap + `(` + strings.Join(words, "|") + `)` + gap + `properties\b|\b(` + strings.Join(words, "|") + `)` + gap + `(history|run)` + gap + `properties\b`)
	checked := 0
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range count.FindAllStringSubmatch(string(b), -1) {
			kind, n := strings.ToLower(m[1]), m[2]
			if kind == "" {
				kind, n = strings.ToLower(m[4]), m[3]
			}
			checked++
			if got := number[strings.ToLower(n)]; got != want[kind] {
				t.Errorf("%s: %q, but the code has %d %s properties", path, strings.Join(strings.Fields(m[0]), " "), want[kind], strings.TrimSuffix(kind, "s"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no count of properties found anywhere: the pattern no longer matches the prose")
	}
}

// Code comments say why, once: an issue number means nothing to a reader
// with no tracker (what the issue asked for goes in the comment's words,
// its history in commit messages and docs/).
func TestCodeCommentsCiteNoIssues(t *testing.T) {
	issue := regexp.MustCompile(`(?i)\bissues?\s+#?\d+`)
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, g := range f.Comments {
			if m := issue.FindString(g.Text()); m != "" {
				t.Errorf("%s: a comment cites %q: say what it asked for instead", fset.Position(g.Pos()), m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// design.md's count of the exported names outside internal/ is what `make
// exported` counts now: the totals, the doors' share, every package the
// sentence names and the deprecated names left out.
func TestExportedCountsAgreeWithTheCode(t *testing.T) {
	b, err := os.ReadFile("design.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	i := strings.Index(text, "At this writing: ")
	if i < 0 {
		t.Fatal(`design.md: no "At this writing: " count of exported names`)
	}
	sentence := text[i:]
	if j := strings.Index(sentence, ". "); j >= 0 {
		sentence = sentence[:j]
	}
	e, err := layers.CountExported("..")
	if err != nil {
		t.Fatal(err)
	}
	all, doors := e.Total()
	old := 0
	for _, names := range e.Deprecated {
		old += len(names)
	}
	totals := regexp.MustCompile(`At this writing: ([\d,]+) in all, ([\d,]+) of them in the doors`).FindStringSubmatch(sentence)
	if totals == nil {
		t.Fatalf("design.md: %q does not say N in all, M of them in the doors", sentence)
	}
	num := func(s string) int { n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return n }
	if num(totals[1]) != all || num(totals[2]) != doors {
		t.Errorf("design.md says %s in all, %s in the doors; make exported counts %d and %d", totals[1], totals[2], all, doors)
	}
	named := regexp.MustCompile("`([a-z/]+)` (\\d+)").FindAllStringSubmatch(sentence, -1)
	if len(named) == 0 {
		t.Errorf("design.md: %q names no package's count", sentence)
	}
	for _, m := range named {
		if got := e.Counts[m[1]]; got != num(m[2]) {
			t.Errorf("design.md says `%s` %s; make exported counts %d", m[1], m[2], got)
		}
	}
	if m := regexp.MustCompile(`(\d+) more are deprecated`).FindStringSubmatch(sentence); m == nil || num(m[1]) != old {
		t.Errorf("design.md: %q does not say the %d deprecated names (N more are deprecated)", sentence, old)
	}
}
