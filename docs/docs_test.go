// Package docs_test checks that the repository's documentation stands alone:
// nothing points outside the clone, and what the README points to exists.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/campaign"
)

// No file of the repository refers to a directory beside the clone (the
// workplace's shared/ is not in a clone), and every relative link of the
// README and of docs/ names a file that is in it.
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
		if strings.Contains(string(b), "../"+"shared") {
			t.Errorf("%s refers to ../%s, which a clone does not have", path, "shared")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	for _, doc := range []string{"../README.md", "specification.md", "design.md", "timeline.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), m[1])); err != nil {
				t.Errorf("%s links to %s: %v", doc, m[1], err)
			}
		}
	}
}

// The specification names every property leasecheck judges, and the
// README's property table lists each.
func TestSpecificationNamesEveryProperty(t *testing.T) {
	spec, err := os.ReadFile("specification.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
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
	}
}
