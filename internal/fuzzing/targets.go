package fuzzing

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A Target is one fuzz target: the package directory, relative to the
// module root, and the function's name.
type Target struct {
	Dir, Name string
}

// Package is the target's package as `go test` takes it: ./DIR.
func (t Target) Package() string { return "./" + filepath.ToSlash(t.Dir) }

// CorpusDir is where its committed seed corpus lives, relative to the
// module root: Go's own place, DIR/testdata/fuzz/NAME.
func (t Target) CorpusDir() string { return filepath.Join(t.Dir, "testdata", "fuzz", t.Name) }

// Targets lists the fuzz targets of the module rooted at root: each
// top-level func FuzzXxx(f *testing.F) of a _test.go file, by directory
// and name. Directories named testdata, hidden ones and nested modules are
// not the module's packages and are skipped.
func Targets(root string) ([]Target, error) {
	var out []Target
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && isFuzzName(fn.Name.Name) && takesF(fn) {
				out = append(out, Target{Dir: dir, Name: fn.Name.Name})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dir != out[j].Dir {
			return out[i].Dir < out[j].Dir
		}
		return out[i].Name < out[j].Name
	})
	return out, err
}

// isFuzzName is go test's rule: Fuzz, then nothing or a non-lowercase rune.
func isFuzzName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Fuzz")
	return ok && (rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z'))
}

// takesF: the one parameter is a *testing.F.
func takesF(fn *ast.FuncDecl) bool {
	ps := fn.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) > 1 {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}

// corpusHeader opens every file of Go's fuzz corpus format.
var corpusHeader = []byte("go test fuzz v1\n")

// MissingCorpus says, for each target of root without a usable seed
// corpus, why: its directory is absent, empty, or holds a file that is
// not in Go's corpus format (go test would refuse the whole target).
func MissingCorpus(root string, targets []Target) []string {
	var out []string
	for _, t := range targets {
		dir := t.CorpusDir()
		ents, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			out = append(out, t.Name+": no seed corpus: "+dir+" does not exist")
			continue
		}
		seeds, bad := 0, 0
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(root, dir, e.Name()))
			if err != nil || !bytes.HasPrefix(b, corpusHeader) {
				out = append(out, t.Name+": "+filepath.Join(dir, e.Name())+" is not a Go fuzz corpus file (it must start \"go test fuzz v1\")")
				bad++
				continue
			}
			seeds++
		}
		if seeds == 0 && bad == 0 {
			out = append(out, t.Name+": no seed corpus: "+dir+" is empty")
		}
	}
	return out
}
