// Package python_test runs the Python client's pytest suite
// (clients/python/tests) against a linkqr started for the run, checks the
// client with mypy --strict, and builds its wheel, installs it into a fresh
// virtual environment and runs the README's example from there, so
// `make test` covers the client as an integrator gets it.
package python_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// modules are the Debian packages the client is built and tested with
// (python3-httpx, -pytest, -mypy, -build, -hatchling, -venv).
const modules = "import httpx, pytest, mypy, build, hatchling, venv, ensurepip"

// TestPythonClient type-checks the client, runs pytest against a live server
// with freshly minted credentials in the environment, then builds the wheel
// and runs the README example from a virtual environment it is installed in.
// Without a python3 that has the modules the test skips loudly (fails under
// LINKQR_TEST_STRICT=1).
func TestPythonClient(t *testing.T) {
	strict.SkipShort(t, "the Python client's toolchain (mypy, pytest, a wheel built and installed)")
	python := findPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// Keep the source tree clean: no bytecode, no caches next to the code.
	quiet := []string{"PYTHONDONTWRITEBYTECODE=1"}
	run(ctx, t, ".", quiet, python, "-m", "mypy", "--strict", "--cache-dir", t.TempDir(), "src", "tests")

	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	tn := testkit.NewTenant(t, srv.Pool)
	creds := srv.NewClientCredentials(t, tn.WorkspaceID, "python")
	token := creds.Token
	env := append(quiet, creds.Env...)
	run(ctx, t, ".", env, python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "tests")

	t.Run("wheel in a venv runs the README example", func(t *testing.T) {
		dist := t.TempDir()
		// --skip-dependency-check: Debian's hatchling declares editables
		// (for editable installs only), which Debian 12 does not package.
		run(ctx, t, ".", quiet, python, "-m", "build", "--no-isolation", "--skip-dependency-check", "--outdir", dist)
		wheels, _ := filepath.Glob(filepath.Join(dist, "linkqr-*.whl"))
		sdists, _ := filepath.Glob(filepath.Join(dist, "linkqr-*.tar.gz"))
		if len(wheels) != 1 || len(sdists) != 1 {
			t.Fatalf("build made wheels %v and sdists %v, want one of each", wheels, sdists)
		}
		venv := filepath.Join(t.TempDir(), "venv")
		run(ctx, t, ".", quiet, python, "-m", "venv", "--system-site-packages", venv)
		vpy := filepath.Join(venv, "bin", "python")
		run(ctx, t, ".", quiet, vpy, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", wheels[0])

		// Run from an empty directory, so linkqr can only come from the venv.
		work := t.TempDir()
		where := run(ctx, t, work, quiet, vpy, "-c", "import linkqr; print(linkqr.__file__)")
		if !strings.HasPrefix(strings.TrimSpace(where), venv) {
			t.Fatalf("linkqr imported from %s, not from the venv %s", where, venv)
		}
		example := filepath.Join(work, "example.py")
		if err := os.WriteFile(example, []byte(readmeExample(t)), 0o600); err != nil {
			t.Fatal(err)
		}
		out := run(ctx, t, work, append(quiet, "LINKQR_BASE_URL="+srv.URL, "LINKQR_API_KEY="+token), vpy, example)
		if !strings.Contains(out, "re-pointed") || !strings.Contains(out, srv.URL+"/") {
			t.Fatalf("the README example printed %q, want the short URL and the re-pointing", out)
		}
	})
}

// findPython returns the first python3 that has every module the client
// needs: LINKQR_PYTHON when set, python3 on PATH (which may be a pyenv or
// other interpreter without Debian's packages), then Debian's /usr/bin/python3.
func findPython(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("LINKQR_PYTHON")}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "/usr/bin/python3")
	var tried []string
	for _, c := range candidates {
		if c == "" {
			continue
		}
		out, err := exec.Command(c, "-c", modules).CombinedOutput()
		if err == nil {
			return c
		}
		tried = append(tried, c+": "+lastLine(string(out)))
	}
	testkit.SkipUnlessStrict(t, "no python3 with httpx, pytest, mypy, build, hatchling and venv "+
		"(apt-get install python3-httpx python3-pytest python3-mypy python3-build python3-hatchling python3-venv); tried "+
		strings.Join(tried, "; "))
	return ""
}

// readmeExample is the Python block of README.md marked as the example this
// test runs.
func readmeExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- example: run by python_test.go -->\\s*```python\\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no ```python block after <!-- example: run by python_test.go -->")
	}
	return string(m[1])
}

// run executes a command in dir (testkit.Run).
func run(ctx context.Context, t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	return testkit.Run(ctx, t, dir, env, name, args...)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
