package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// Exported is what `make exported` counts in a module (docs/design.md
// §13): for each package outside internal/, its exported names — top-level
// functions, types, constants and variables, and the exported methods of
// exported types, from non-test source, main packages left out — and,
// apart, by name, those whose doc has a "Deprecated:" paragraph (a method
// or a struct field as Type.Method, Type.Field), which are not counted and
// are deleted after at least two minor releases (CHANGELOG.md).
type Exported struct {
	Counts     map[string]int
	Names      map[string][]string
	Deprecated map[string][]string
}

// Total is the count over every package, and over the doors alone.
func (e *Exported) Total() (all, doors int) {
	for p, n := range e.Counts {
		all += n
		for _, d := range Doors {
			if d == p {
				doors += n
			}
		}
	}
	return all, doors
}

// CountExported counts the module rooted at root.
func CountExported(root string) (*Exported, error) {
	counts := map[string]int{}
	names := map[string][]string{}
	deprecated := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "internal" || name == "node_modules") {
				return filepath.SkipDir
			}
			// A module of its own (examples/) is not leasecheck's API.
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
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
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		current, old := exported(f, module+pkg, func(path, name string) []string { return houseMethods(root, path, name) })
		counts[pkg] += len(current)
		names[pkg] = append(names[pkg], current...)
		deprecated[pkg] = append(deprecated[pkg], old...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Exported{Counts: counts, Names: names, Deprecated: deprecated}, nil
}

// exported counts f's exported top-level names and the exported methods of
// its exported types, but for the deprecated ones, which it returns by
// name (a method as Type.Method). An exported alias of a house type
// (`type Result = sim.Result`) hands the type's exported methods to the
// door's users, so they are the door's names too: methods lists them
// (import path, type name). So does an exported alias of an unexported type
// of the package itself (self is its import path): the alias is the name a
// user calls the methods by.
func exported(f *ast.File, self string, methods func(path, name string) []string) (current, deprecated []string) {
	count := func(name string, docs ...*ast.CommentGroup) {
		if isDeprecated(docs...) {
			deprecated = append(deprecated, name)
		} else {
			current = append(current, name)
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
					if !s.Name.IsExported() {
						continue
					}
					count(s.Name.Name, d.Doc, s.Doc)
					// A field is not counted as a name, but a deprecated one
					// leaves like one: it is listed apart (Type.Field), so
					// that its deletion is allowed as any other's
					// (internal/layers/apicheck).
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							for _, n := range fl.Names {
								if n.IsExported() && isDeprecated(fl.Doc) {
									deprecated = append(deprecated, s.Name.Name+"."+n.Name)
								}
							}
						}
					}
					path, name, ok := houseAlias(f, s)
					if id, local := s.Type.(*ast.Ident); local && s.Assign.IsValid() && !id.IsExported() {
						path, name, ok = self, id.Name, true
					}
					if ok {
						for _, m := range methods(path, name) {
							count(s.Name.Name+"."+m, d.Doc, s.Doc)
						}
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
	return current, deprecated
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

// module is the import path the module's packages are under.
const module = "github.com/leasecheck/leasecheck/"

// houseAlias reports the import path and name of the house type s aliases,
// if it aliases one (a type of a package under internal/).
func houseAlias(f *ast.File, s *ast.TypeSpec) (path, name string, ok bool) {
	if !s.Assign.IsValid() {
		return "", "", false
	}
	sel, ok := s.Type.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", "", false
	}
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		local := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == x.Name {
			return p, sel.Sel.Name, strings.HasPrefix(p, module) && strings.Contains(p, "/internal/")
		}
	}
	return "", "", false
}

// houseMethods lists the exported methods declared on type name in the
// module's package path (non-test source), none when it cannot be read.
// Where name is itself an alias of a house type (a type moved down a layer
// leaves an alias behind), the methods are that type's.
func houseMethods(root, path, name string) []string {
	dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(path, module)))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok {
				for _, sp := range gd.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok && ts.Name.Name == name {
						if p, n, ok := houseAlias(f, ts); ok {
							out = append(out, houseMethods(root, p, n)...)
						}
					}
				}
			}
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			if recv, _ := exportedRecv(fd.Recv.List[0].Type); recv == name {
				out = append(out, fd.Name.Name)
			}
		}
	}
	return out
}
