package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestExportedSignaturesHideSqlc: a domain package may use its own
// generated queries (internal/<owner>/internal/<owner>db) inside, but no
// exported function, method or type of it mentions one of their types, or
// its callers would have to build its rows to use it (they cannot import
// the package): the leak Go's internal/ rule alone does not refuse.
func TestExportedSignaturesHideSqlc(t *testing.T) {
	pkgs := loadPackages(t)
	root := moduleRoot(t)
	checked := 0
	for _, p := range sortedKeys(pkgs) {
		if queriesPackage(module+"/"+p) || !slices.ContainsFunc(pkgs[p], queriesPackage) {
			continue
		}
		checked++
		for _, leak := range sqlcLeaks(t, filepath.Join(root, filepath.FromSlash(p))) {
			t.Errorf("%s: %s; take *store.DB, store.DBTX or pgx.Tx and return the package's own types", p, leak)
		}
	}
	if checked < 8 {
		t.Errorf("only %d packages import generated queries: the loader is wrong", checked)
	}
}

// TestSqlcLeaksAreFound guards the check: the fixture's exported API
// leaks generated queries (linkdb) in every way the check knows, and each leak is reported.
func TestSqlcLeaksAreFound(t *testing.T) {
	got := strings.Join(sqlcLeaks(t, filepath.Join("testdata", "leaky")), "\n")
	for _, want := range []string{
		"func Load mentions linkdb.DBTX",
		"func EnvelopeOf mentions linkdb.Event",
		"method (*Service).Row mentions linkdb.Link",
		"type Row mentions linkdb.Link",
		"type Service mentions linkdb.Queries",
		"type Store mentions q.DBTX",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the check misses %q; it found:\n%s", want, got)
		}
	}
	for _, clean := range []string{"func load ", "func Clean ", "method (*service).", "type service ", "type Private "} {
		if strings.Contains(got, clean) {
			t.Errorf("the check flags %q, which is not exported API or does not leak:\n%s", clean, got)
		}
	}
}

// sqlcLeaks lists the exported declarations of the non-test Go files in
// dir whose signature (parameters, results, receiver, or for a type its
// definition's exported parts) names a type of generated queries.
func sqlcLeaks(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var leaks []string
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		local := sqlcName(f)
		if local == "" {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				what := "func " + d.Name.Name
				if d.Recv != nil {
					what = "method (" + recvString(d.Recv) + ")." + d.Name.Name
				}
				if sel := mentions(d.Type, local); sel != "" {
					leaks = append(leaks, what+" mentions "+sel)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					if sel := mentions(exportedParts(ts.Type), local); sel != "" {
						leaks = append(leaks, "type "+ts.Name.Name+" mentions "+sel)
					}
				}
			}
		}
	}
	return leaks
}

// sqlcName is the name a file imports generated queries under, or "".
func sqlcName(f *ast.File) string {
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); queriesPackage(path) {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// mentions returns the first pkg.Name selector in n whose pkg is local.
func mentions(n ast.Node, local string) string {
	if n == nil {
		return ""
	}
	found := ""
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && found == "" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
				found = local + "." + sel.Sel.Name
			}
		}
		return found == ""
	})
	return found
}

// exportedParts is what of a type definition other packages see: a
// struct's exported and embedded fields, an interface's exported methods,
// anything else whole.
func exportedParts(e ast.Expr) ast.Node {
	var fields *ast.FieldList
	switch e := e.(type) {
	case *ast.StructType:
		fields = e.Fields
	case *ast.InterfaceType:
		fields = e.Methods
	default:
		return e
	}
	var visible []ast.Expr
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			visible = append(visible, f.Type) // embedded: promoted
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				visible = append(visible, f.Type)
				break
			}
		}
	}
	return &ast.CompositeLit{Elts: visible}
}

func exportedRecv(recv *ast.FieldList) bool {
	return ast.IsExported(strings.TrimPrefix(recvString(recv), "*"))
}

func recvString(recv *ast.FieldList) string {
	e := recv.List[0].Type
	star := ""
	if s, ok := e.(*ast.StarExpr); ok {
		e, star = s.X, "*"
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return star + id.Name
	}
	return star + "?"
}
