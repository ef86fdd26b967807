// Command exported counts the exported names of each package outside
// internal/ (docs/design.md §13: the doors, and the house that should move
// under internal/): top-level functions, types, constants and variables,
// and the exported methods of exported types, from the packages' non-test
// source. It is `make exported`; a door is marked as `make layers` marks it.
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
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		counts[filepath.ToSlash(filepath.Dir(path))] += exported(f)
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
	total, doors := 0, 0
	for _, p := range pkgs {
		mark := ""
		if slices.Contains(layers.Doors, p) {
			mark, doors = " [door]", doors+counts[p]
		}
		total += counts[p]
		fmt.Printf("%5d  %s%s\n", counts[p], p, mark)
	}
	fmt.Printf("%5d  in all outside internal/ (%d in the doors)\n", total, doors)
}

// exported counts f's exported top-level names and the exported methods of
// its exported types.
func exported(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil || exportedRecv(d.Recv.List[0].Type) {
				n++
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n++
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

func exportedRecv(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
