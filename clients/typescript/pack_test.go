package typescript_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// TestPackedTarball is what an integrator does first: `npm pack` (the
// prepack script builds dist/), install the tarball into an empty project
// next to TypeScript, compile the examples/ programs there with tsc
// --strict (ES module and CommonJS), and run both against a live server.
// The tarball must hold the built package and nothing of the source tree.
func TestPackedTarball(t *testing.T) {
	strict.SkipShort(t, "the TypeScript client's packed tarball (npm pack, tsc, the examples)")
	node := testkit.RequireBinary(t, "node")
	npm := testkit.RequireBinary(t, "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if _, err := os.Stat("node_modules"); err != nil {
		run(ctx, t, nil, npm, "ci", "--no-audit", "--no-fund")
	}

	packDir := t.TempDir()
	out := testkit.Run(ctx, t, "", nil, npm, "pack", "--json", "--pack-destination", packDir)
	tarball := filepath.Join(packDir, packedFile(t, out))
	checkTarball(t, tarball)

	scratch := t.TempDir()
	writeFile(t, filepath.Join(scratch, "package.json"), `{"name":"scratch","private":true,"type":"module"}`)
	writeFile(t, filepath.Join(scratch, "tsconfig.json"), `{"compilerOptions":{"target":"ES2022","module":"NodeNext",
		"moduleResolution":"NodeNext","strict":true,"types":["node"],"outDir":"out","skipLibCheck":false},
		"include":["*.ts","*.cts"]}`)
	for _, f := range []string{"quickstart.ts", "require.cts"} {
		copyFile(t, filepath.Join("examples", f), filepath.Join(scratch, f))
	}
	// TypeScript and @types/node at the versions this package is tested with
	// (already in npm's cache after npm ci).
	testkit.Run(ctx, t, scratch, nil, npm, "install", "--no-audit", "--no-fund", "--prefer-offline", tarball,
		"typescript@"+installedVersion(t, "typescript"), "@types/node@"+installedVersion(t, "@types/node"))
	testkit.Run(ctx, t, scratch, nil, node, filepath.Join("node_modules", "typescript", "bin", "tsc"), "--strict", "-p", ".")

	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	env := []string{"LINKQR_BASE_URL=" + srv.URL, "LINKQR_TOKEN=" + srv.APIKey(t, tn.WorkspaceID)}
	esm := lastLine(testkit.Run(ctx, t, scratch, env, node, filepath.Join("out", "quickstart.js")))
	var got struct {
		Version, Code, Refused, Pointer string
		Listed                          int
	}
	if err := json.Unmarshal([]byte(esm), &got); err != nil {
		t.Fatalf("quickstart printed %q: %v", esm, err)
	}
	if got.Version != packageVersion(t) || got.Code == "" || got.Listed != 1 || got.Refused != "validation-failed" || got.Pointer != "/target_url" {
		t.Errorf("quickstart: %+v", got)
	}
	cjs := lastLine(testkit.Run(ctx, t, scratch, env, node, filepath.Join("out", "require.cjs")))
	if want := `{"version":"` + packageVersion(t) + `","workspace":"workspace","problemError":"function"}`; cjs != want {
		t.Errorf("require.cts printed %s, want %s", cjs, want)
	}
}

// checkTarball asserts the tarball ships both builds with their types and
// the README, and none of the tests, Go files, sources or configs.
func checkTarball(t *testing.T, tarball string) {
	t.Helper()
	out, err := exec.Command("tar", "-tzf", tarball).Output()
	if err != nil {
		t.Fatalf("tar -tzf %s: %v", tarball, err)
	}
	files := map[string]bool{}
	for _, f := range strings.Fields(string(out)) {
		files[strings.TrimPrefix(f, "package/")] = true
		if strings.HasSuffix(f, ".go") || strings.Contains(f, "/test/") || strings.Contains(f, "/src/") ||
			strings.Contains(f, "tsconfig") || strings.Contains(f, "node_modules") {
			t.Errorf("the tarball ships %s", f)
		}
	}
	for _, f := range []string{"package.json", "README.md", "dist/esm/index.js", "dist/esm/index.d.ts",
		"dist/cjs/index.js", "dist/cjs/index.d.ts", "dist/cjs/package.json"} {
		if !files[f] {
			t.Errorf("the tarball lacks %s (has %v)", f, files)
		}
	}
}

func packedFile(t *testing.T, npmPackJSON string) string {
	t.Helper()
	start := strings.Index(npmPackJSON, "[") // prepack's build output comes first
	var packed []struct{ Filename string }
	if start < 0 || json.Unmarshal([]byte(npmPackJSON[start:]), &packed) != nil || len(packed) != 1 {
		t.Fatalf("npm pack --json printed %s", npmPackJSON)
	}
	return packed[0].Filename
}

func installedVersion(t *testing.T, pkg string) string {
	t.Helper()
	return readVersion(t, filepath.Join("node_modules", pkg, "package.json"))
}

func packageVersion(t *testing.T) string {
	t.Helper()
	return readVersion(t, "package.json")
}

func readVersion(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Version string }
	if err := json.Unmarshal(b, &p); err != nil || p.Version == "" {
		t.Fatalf("%s: no version (%v)", path, err)
	}
	return p.Version
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(b))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
