package doclinks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArchitectureNamesEveryPackage checks that the Packages list of
// docs/architecture.md has a line for every package under internal/ and
// every directory under cmd/ and clients/, so a newcomer finds each one
// described.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Packages\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			listed[strings.TrimSuffix(f[0], "/")] = true
		}
	}
	for _, parent := range []string{"internal", "cmd", "clients"} {
		entries, err := os.ReadDir(filepath.Join(root, parent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := parent + "/" + e.Name()
			if !e.IsDir() || parent == "internal" && !hasGoFiles(filepath.Join(root, name)) {
				continue
			}
			if !listed[name] {
				t.Errorf("docs/architecture.md#packages has no line for %s: add one saying what it is", name)
			}
		}
	}
}

// hasGoFiles reports whether dir directly holds a .go file (a package).
func hasGoFiles(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}
