package mutants

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMutantsList: names are unique kebab-case, every field is filled, and
// there are at least twelve (TestMutantsJudged: each property is judged).
func TestMutantsList(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All() {
		if seen[m.Name] || m.Name != strings.ToLower(m.Name) || strings.ContainsAny(m.Name, " _") {
			t.Errorf("%q: name repeated or not kebab-case", m.Name)
		}
		seen[m.Name] = true
		if m.Failure == "" || m.Article == "" || m.English == "" || m.Story == "" {
			t.Errorf("%s: a description field is empty", m.Name)
		}
		if !slices.Contains([]string{Coordinator, Resource, Holder}, m.Component) {
			t.Errorf("%s: component %q", m.Name, m.Component)
		}
		if ByName(m.Name) != m {
			t.Errorf("%s: ByName", m.Name)
		}
		if (m.Environment == "") != (m.tune == nil) {
			t.Errorf("%s: environment described iff tuned", m.Name)
		}
	}
	// Every quoted sentence is the article's own, when the article is at
	// hand: beside $LEASECHECK_LEASE_PY (its reference implementation), or
	// where this project's workplace keeps both, beside the clone.
	article := filepath.Join("..", "..", "..", "..", "shared", "reference", "lease-article.zh.txt")
	if py := os.Getenv("LEASECHECK_LEASE_PY"); py != "" {
		article = filepath.Join(filepath.Dir(py), "lease-article.zh.txt")
	}
	if art, err := os.ReadFile(article); err == nil {
		for _, m := range All() {
			if !strings.Contains(string(art), m.Article) {
				t.Errorf("%s: %q is not in the article", m.Name, m.Article)
			}
		}
	}
	if len(seen) < 12 {
		t.Errorf("%d mutants, want at least 12", len(seen))
	}
}
