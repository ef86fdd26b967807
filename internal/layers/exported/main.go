// Command exported counts the exported names of each package outside
// internal/ (docs/design.md §13: the doors, and the house that should move
// under internal/): top-level functions, types, constants and variables,
// and the exported methods of exported types, from the packages' non-test
// source. It is `make exported`; a door is marked as `make layers` marks it.
//
// A name whose doc comment has a "Deprecated:" paragraph is kept for one
// release and then goes: it is listed apart, by name, and left out of each
// package's count and of the totals, which say how many were left out.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/leasecheck/leasecheck/internal/layers"
)

func main() {
	counts := map[string]int{}
	deprecated := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "internal" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		n, old := exported(f)
		counts[pkg] += n
		deprecated[pkg] = append(deprecated[pkg], old...)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "exported:", err)
		os.Exit(2)
	}
	pkgs := make([]string, 0, len(counts))
	for p := range counts {
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool {
		if counts[pkgs[i]] != counts[pkgs[j]] {
			return counts[pkgs[i]] > counts[pkgs[j]]
		}
		return pkgs[i] < pkgs[j]
	})
	total, doors, old := 0, 0, 0
	for _, p := range pkgs {
		mark := ""
		if slices.Contains(layers.Doors, p) {
			mark, doors = " [door]", doors+counts[p]
		}
		if n := len(deprecated[p]); n > 0 {
			mark += fmt.Sprintf(" (and %d deprecated)", n)
		}
		total += counts[p]
		old += len(deprecated[p])
		fmt.Printf("%5d  %s%s\n", counts[p], p, mark)
	}
	fmt.Printf("%5d  in all outside internal/ (%d in the doors), not counting %d deprecated\n", total, doors, old)
	if old == 0 {
		return
	}
	fmt.Printf("\ndeprecated, kept for one release (%d; %d in all with them):\n", old, total+old)
	for _, p := range pkgs {
		if len(deprecated[p]) == 0 {
			continue
		}
		names := slices.Sorted(slices.Values(deprecated[p]))
		fmt.Printf("%5d  %s: %s\n", len(names), p, strings.Join(names, ", "))
	}
}

// exported counts f's exported top-level names and the exported methods of
// its exported types, but for the deprecated ones, which it returns by
// name (a method as Type.Method).
func exported(f *ast.File) (n int, deprecated []string) {
	count := func(name string, docs ...*ast.CommentGroup) {
		if isDeprecated(docs...) {
			deprecated = append(deprecated, name)
		} else {
			n++
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				count(d.Name.Name, d.Doc)
			} else if recv, ok := exportedRecv(d.Recv.List[0].Type); ok {
				count(recv+"."+d.Name.Name, d.Doc)
			}
		case *ast.GenDecl:
			// An unparenthesized declaration's comment is the GenDecl's; a
			// parenthesized one's names each have their own, and the group's
			// comment speaks for them all.
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						count(s.Name.Name, d.Doc, s.Doc)
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							count(name.Name, d.Doc, s.Doc)
						}
					}
				}
			}
		}
	}
	return n, deprecated
}

// isDeprecated reports whether any of docs has a paragraph that begins
// "Deprecated: ", the convention go doc, gopls and staticcheck read.
func isDeprecated(docs ...*ast.CommentGroup) bool {
	for _, doc := range docs {
		if doc == nil {
			continue
		}
		for _, para := range strings.Split(doc.Text(), "\n\n") {
			if strings.HasPrefix(para, "Deprecated: ") {
				return true
			}
		}
	}
	return false
}

// exportedRecv returns the name of a method's receiver type and whether it
// is exported.
func exportedRecv(t ast.Expr) (string, bool) {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name, x.IsExported()
		default:
			return "", false
		}
	}
}
