package layers

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// watchSources stats every Go file of the module (and go.mod), so that go
// test's cache, which knows the files a test opens or stats but not what a
// go list it runs reads, reruns the test when an import changes instead of
// reporting the last result.
func watchSources(t *testing.T) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every package of the module belongs to a layer, imports only what its
// layer may (or is on KnownWrongWay, with its reason), and every entry of
// KnownWrongWay is still an import: a fixed one comes off the list.
func TestImportsGoOneWay(t *testing.T) {
	watchSources(t)
	g, err := Load(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(g) < 20 || g["checker"] == nil {
		t.Fatalf("go list found %d packages, checker's imports %v: not the module", len(g), g["checker"])
	}
	f := Check(g)
	for _, p := range f.Unassigned {
		t.Errorf("package %s belongs to no layer: add it to layers.Map (docs/design.md §13)", p)
	}
	for _, e := range f.WrongWay {
		t.Errorf("%s imports %s: the wrong way (layer %q may not import layer %q); import the other way, or move what is shared down (docs/design.md §13)",
			e.From, e.To, LayerOf(e.From), LayerOf(e.To))
	}
	for _, e := range f.Gone {
		t.Errorf("%s no longer imports %s: take it off KnownWrongWay", e.From, e.To)
	}
	for _, e := range f.Deprecated {
		t.Errorf("%s imports %s, kept for users for a while: import what it aliases (internal/%s)", e.From, e.To, e.To)
	}
}

// The judge itself, on a graph made up here: an import up the map is
// found, one down it or within a layer is not, a listed one is not, a
// package no layer claims is named, a listed import that is gone is, and
// so is an import of a deprecated package.
func TestCheckJudgesTheMap(t *testing.T) {
	g := Graph{
		"model":               nil,
		"checker":             {"model"},
		"internal/sim":        {"machine", "model", "internal/scenario"},
		"internal/impl/redis": {"impl/backend", "model", "internal/sim"},
		"internal/explore":    {"checker"},
		"newpkg":              {"model"},
		"cmd/foo/bar":         {"internal/campaign", "internal/sim"},
		"cmd/old":             {"cmd/oldpath"},
		"cmd/oldpath":         {"internal/campaign"},
	}
	defer func(was []string) { Deprecated = was }(Deprecated)
	Deprecated = []string{"cmd/oldpath"}
	// A list of its own: the real one only shrinks, and may run out of the
	// entries the graph needs.
	defer func(was map[Edge]string) { KnownWrongWay = was }(KnownWrongWay)
	KnownWrongWay = map[Edge]string{
		{"internal/explore", "checker"}:  "listed, and still imported",
		{"vclient", "internal/campaign"}: "listed, and no longer imported",
	}
	f := Check(g)
	if len(f.WrongWay) != 1 || f.WrongWay[0] != (Edge{"internal/impl/redis", "internal/sim"}) {
		t.Errorf("wrong-way imports %v, want only internal/impl/redis -> internal/sim", f.WrongWay)
	}
	if len(f.Deprecated) != 1 || f.Deprecated[0] != (Edge{"cmd/old", "cmd/oldpath"}) {
		t.Errorf("imports of a deprecated package %v, want only cmd/old -> cmd/oldpath", f.Deprecated)
	}
	if len(f.Unassigned) != 1 || f.Unassigned[0] != "newpkg" {
		t.Errorf("unassigned %v, want newpkg", f.Unassigned)
	}
	gone := map[Edge]bool{}
	for _, e := range f.Gone {
		gone[e] = true
	}
	if len(f.Gone) != 1 || !gone[Edge{"vclient", "internal/campaign"}] {
		t.Errorf("gone %v: want only vclient -> internal/campaign", f.Gone)
	}
}

// Every known wrong-way import says why it is still there, and the map
// is well formed: each package in one layer, each MayImport a layer below.
func TestMapIsWellFormed(t *testing.T) {
	for e, why := range KnownWrongWay {
		if strings.TrimSpace(why) == "" {
			t.Errorf("%s -> %s has no reason", e.From, e.To)
		}
		if Allowed(LayerOf(e.From), LayerOf(e.To)) {
			t.Errorf("%s -> %s is listed but goes the right way", e.From, e.To)
		}
	}
	below := map[string]bool{}
	owner := map[string]string{}
	for _, l := range Map {
		for _, m := range l.MayImport {
			if !below[m] {
				t.Errorf("layer %q may import %q, which is not a layer below it", l.Name, m)
			}
		}
		for _, p := range l.Packages {
			if o, dup := owner[p]; dup {
				t.Errorf("package %s in layers %q and %q", p, o, l.Name)
			}
			owner[p] = l.Name
		}
		below[l.Name] = true
	}
	for _, d := range Doors {
		if LayerOf(d) == "" {
			t.Errorf("door %s belongs to no layer", d)
		}
	}
}
