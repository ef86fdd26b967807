package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A user reads a public package's documentation (go doc, pkg.go.dev) and
// can import nothing under internal/: a package doc, or the doc of any
// exported name, of a package outside internal/ that explains itself
// through an internal package ("use sim.Options", "see
// internal/impl/redis") sends the reader where Go forbids them to go. The
// examples are left out: they are programs a user copies, not doors.
func TestPublicDocsNameNoInternalPackage(t *testing.T) {
	internal, err := internalExports("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(internal) == 0 {
		t.Fatal("no exported name found under internal/: the walk found nothing to check against")
	}
	docs, err := publicDocs("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no documentation found outside internal/")
	}
	for _, d := range docs {
		for _, why := range namesInternal(d, internal) {
			t.Errorf("%s: the doc of %s %s; say it in the public package's own terms", d.pos, d.what, why)
		}
	}
}

// publicDoc is one doc comment of a public package: where it is, whose it
// is, its text, and the names the file imports packages under (a
// qualified name whose package the file imports from outside internal/ is
// that package's, not an internal one's).
type publicDoc struct {
	pos, what, text string
	imported        map[string]bool
}

// internalPath is a package path under internal/ in prose (a bare
// "internal/", as in "moves under internal/", names no package).
var internalPath = regexp.MustCompile(`\binternal/[a-z0-9_]+(/[a-z0-9_]+)*`)

// qualified is a Go qualified identifier in prose: pkg.Name.
var qualified = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)\b`)

// namesInternal says how doc d names an internal package, if it does: a
// path under internal/, or a qualified name pkg.Name where an internal
// package called pkg exports Name and the file imports no other package
// of that name.
func namesInternal(d publicDoc, internal map[string]map[string]bool) []string {
	var why []string
	for _, m := range internalPath.FindAllString(d.text, -1) {
		why = append(why, "names "+m)
	}
	for _, m := range qualified.FindAllStringSubmatch(d.text, -1) {
		if d.imported[m[1]] {
			continue
		}
		if internal[m[1]][m[2]] {
			why = append(why, "names "+m[0]+" (an internal package's)")
		}
	}
	return why
}

// internalExports maps the name of each package under internal/ to its
// exported top-level names.
func internalExports(root string) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	err := goFiles(root, func(path string, f *ast.File) {
		if !isInternal(path) {
			return
		}
		names := out[f.Name.Name]
		if names == nil {
			names = map[string]bool{}
			out[f.Name.Name] = names
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil && decl.Name.IsExported() {
					names[decl.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						if spec.Name.IsExported() {
							names[spec.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							if n.IsExported() {
								names[n.Name] = true
							}
						}
					}
				}
			}
		}
	})
	return out, err
}

// publicDocs is every doc comment a user of a package outside internal/
// reads: the package doc, and the doc of every exported name (functions,
// methods, types, constants, variables, struct fields and interface
// methods of exported types). Commands (package main) and the examples
// are no one's import.
func publicDocs(root string) ([]publicDoc, error) {
	var out []publicDoc
	fset := token.NewFileSet()
	err := goFilesSet(root, fset, func(path string, f *ast.File) {
		if isInternal(path) || f.Name.Name == "main" || strings.HasPrefix(filepath.ToSlash(path), filepath.ToSlash(filepath.Join(root, "examples"))+"/") {
			return
		}
		// The package's own name qualifies its own names (leasetest/servers
		// is a public package named like internal/servers).
		imported := map[string]bool{f.Name.Name: true}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(p, "/internal/") {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imported[name] = true
		}
		add := func(g *ast.CommentGroup, what string) {
			if g == nil {
				return
			}
			out = append(out, publicDoc{pos: fset.Position(g.Pos()).String(), what: what, text: g.Text(), imported: imported})
		}
		add(f.Doc, "package "+f.Name.Name)
		fields := func(owner string, l *ast.FieldList) {
			if l == nil {
				return
			}
			for _, fld := range l.List {
				for _, n := range fld.Names {
					if n.IsExported() {
						add(fld.Doc, owner+"."+n.Name)
						break
					}
				}
			}
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if !decl.Name.IsExported() {
					continue
				}
				name := decl.Name.Name
				if decl.Recv != nil {
					recv := receiverType(decl.Recv.List[0].Type)
					if !ast.IsExported(recv) {
						continue
					}
					name = recv + "." + name
				}
				add(decl.Doc, name)
			case *ast.GenDecl:
				exported := false
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						if !spec.Name.IsExported() {
							continue
						}
						exported = true
						add(spec.Doc, spec.Name.Name)
						switch typ := spec.Type.(type) {
						case *ast.StructType:
							fields(spec.Name.Name, typ.Fields)
						case *ast.InterfaceType:
							fields(spec.Name.Name, typ.Methods)
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							if n.IsExported() {
								exported = true
								add(spec.Doc, n.Name)
								break
							}
						}
					}
				}
				if exported {
					add(decl.Doc, f.Name.Name+" declaration")
				}
			}
		}
	})
	return out, err
}

func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func isInternal(path string) bool {
	return strings.Contains(filepath.ToSlash(path), "/internal/")
}

func goFiles(root string, visit func(path string, f *ast.File)) error {
	return goFilesSet(root, token.NewFileSet(), visit)
}

// goFilesSet parses every non-test Go file of the module (the clone's
// .git, testdata and any nested module left out), comments kept.
func goFilesSet(root string, fset *token.FileSet, visit func(path string, f *ast.File)) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "testdata" || n == "node_modules" {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		visit(path, f)
		return nil
	})
}
