package archtest

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/linkqr/linkqr"

// Third-party packages named by the rules.
const (
	pgx     = "github.com/jackc/pgx/v5"
	pgxpool = "github.com/jackc/pgx/v5/pgxpool"
	pgconn  = "github.com/jackc/pgx/v5/pgconn"
	templ   = "github.com/a-h/templ"
)

// rule says which module packages may import a package (prefix match on
// the imported path): everything not listed is refused.
type rule struct {
	imported string
	allowed  []string // module-relative package paths
	why      string
}

var rules = []rule{
	{
		imported: pgxpool,
		// notify and replica are process machinery: a LISTEN session, and
		// the replica's health checks and the choice of pool for reads.
		allowed: []string{"internal/store", "internal/app", "internal/notify", "internal/replica", "internal/testkit", "cmd/linkqr"},
		why:     "services reach the database through store.DB, which resolves the request's transaction; a raw pool would escape it",
	},
	{
		imported: templ,
		allowed:  []string{"web"},
		why:      "HTML is rendered by the web package only",
	},
	{
		imported: module + "/web",
		allowed:  []string{"internal/app"},
		why:      "web is an edge: only the app that assembles the process wires it",
	},
	{
		imported: module + "/internal/api",
		allowed:  []string{"internal/app", "internal/testkit"},
		why:      "api is an edge: only the app (and the test kit's OpenAPI check) may import it",
	},
	{
		imported: "github.com/redis/go-redis/v9",
		allowed:  []string{"internal/ratelimit"},
		why:      "Redis holds the shared rate-limit budgets only; it is reached through internal/ratelimit, which falls back in-process when it is away",
	},
	{
		imported: module + "/internal/app",
		allowed:  []string{"cmd/linkqr", "internal/testkit"},
		why:      "app assembles the process; nothing inside it depends on it",
	},
}

// sqlFree are the edges, which never write SQL (no pgx at all).
var sqlFree = []string{"internal/api", "web", "internal/auth", "internal/redirect", "internal/ratelimit", "internal/mcp"}

// storeFree are the edges that speak to the domain and never to the
// persistence package: IDs and "not found" are internal/id's, database
// outages internal/dbhealth's.
var storeFree = []string{"internal/api", "web", "internal/redirect", "internal/wire", "internal/mcp"}

// htmlFree must not depend on web or templ, even transitively.
var htmlFree = []string{"internal/api", "internal/mcp", "internal/scan", "internal/redirect", "internal/link", "internal/analytics", "internal/account", "internal/apikey", "internal/webhook", "internal/ratelimit", "internal/oauth", "internal/domain"}

func TestImportRules(t *testing.T) {
	pkgs := loadPackages(t)
	for _, p := range sortedKeys(pkgs) {
		for _, imp := range pkgs[p] {
			for _, r := range rules {
				if (imp == r.imported || strings.HasPrefix(imp, r.imported+"/")) && !slices.Contains(r.allowed, p) && p != strings.TrimPrefix(r.imported, module+"/") {
					t.Errorf("%s imports %s: %s (allowed: %s)", p, imp, r.why, strings.Join(r.allowed, ", "))
				}
			}
		}
	}
	for _, p := range sqlFree {
		for _, imp := range pkgs[p] {
			if imp == pgx || strings.HasPrefix(imp, pgx+"/") || queriesPackage(imp) {
				t.Errorf("%s imports %s: handlers never write SQL; call a domain method", p, imp)
			}
		}
	}
	for _, p := range storeFree {
		for _, imp := range pkgs[p] {
			if imp == module+"/internal/store" || strings.HasPrefix(imp, module+"/internal/store/") {
				t.Errorf("%s imports %s: an edge speaks internal/id and the domain's methods, never the store", p, imp)
			}
		}
	}
	for _, p := range htmlFree {
		for _, dep := range deps(pkgs, p) {
			if dep == module+"/web" || dep == templ || strings.HasPrefix(dep, templ+"/") {
				t.Errorf("%s depends on %s: the domain and the API know no HTML", p, dep)
			}
		}
	}
}

// TestRulesSeeThePackages guards the test itself: a broken loader would
// pass every rule vacuously.
func TestRulesSeeThePackages(t *testing.T) {
	pkgs := loadPackages(t)
	for _, p := range []string{"internal/api", "internal/link", "internal/store", "web", "cmd/linkqr"} {
		if len(pkgs[p]) == 0 {
			t.Errorf("package %s not found or has no imports", p)
		}
	}
	if !slices.Contains(pkgs["internal/link"], module+"/internal/link/internal/linkdb") {
		t.Error("internal/link does not appear to import its linkdb; the loader is wrong")
	}
}

// queriesPackage reports whether imp is an owner's sqlc output,
// internal/<owner>/internal/<owner>db (sqlc.yaml, one block per owner).
// Go's internal/ rule keeps it to internal/<owner> and the packages below
// it; no rule here needs to name the owners.
func queriesPackage(imp string) bool {
	rel, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return false
	}
	parts := strings.Split(rel, "/")
	return len(parts) == 4 && parts[0] == "internal" && parts[2] == "internal" && parts[3] == parts[1]+"db"
}

// TestQueriesPackagesAreOwned: every package named like sqlc output sits
// where its owner's internal/ rule hides it, internal/<owner>/internal/<owner>db,
// and at least eight owners have one (one sqlc.yaml block each).
func TestQueriesPackagesAreOwned(t *testing.T) {
	pkgs := loadPackages(t)
	owners := 0
	for _, p := range sortedKeys(pkgs) {
		parts := strings.Split(p, "/")
		if queriesPackage(module + "/" + p) {
			owners++
			continue
		}
		if n := len(parts); n >= 2 && parts[n-2] == "internal" && strings.HasSuffix(parts[n-1], "db") && slices.Contains(pkgs[p], pgx) {
			t.Errorf("%s looks like sqlc output outside internal/<owner>/internal/<owner>db: generate it there (sqlc.yaml)", p)
		}
	}
	if owners < 8 {
		t.Errorf("only %d owners hold generated queries (internal/<owner>/internal/<owner>db); the loader is wrong or sqlc.yaml lost its blocks", owners)
	}
}

// loadPackages maps each module package (module-relative path) to the
// imports of its non-test files.
func loadPackages(t *testing.T) map[string][]string {
	t.Helper()
	root := moduleRoot(t)
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "var" || name == "bin") {
			return filepath.SkipDir
		}
		bp, err := build.Default.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		rel, _ := filepath.Rel(root, path)
		pkgs[filepath.ToSlash(rel)] = bp.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// deps is the transitive closure of p's imports, following module packages.
func deps(pkgs map[string][]string, p string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(rel string) {
		for _, imp := range pkgs[rel] {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			if strings.HasPrefix(imp, module+"/") {
				walk(strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
	walk(p)
	return sortedKeys(seen)
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
