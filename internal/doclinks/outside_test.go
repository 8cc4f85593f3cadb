package doclinks

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRepositoryStandsAlone fails on any line of a tracked text file that
// cites a document or a path outside the repository: whoever clones it must
// be able to follow every reference. Vendored files (static/vendor,
// node_modules) are not ours and are skipped.
func TestRepositoryStandsAlone(t *testing.T) {
	root := repoRoot(t)
	files, err := RepositoryFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go.mod", "docs/api.md", "internal/api/openapi.yaml"} {
		if !slices.Contains(files, want) {
			t.Fatalf("the file list lacks %s (%d files): it is not the repository's", want, len(files))
		}
	}
	refs, err := FindOutsideRefs(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		t.Errorf("%s", r)
	}
	t.Logf("%d files checked", len(files))
}

// TestFindOutsideRefsFlagsEachKind runs the check on a fixture with every
// kind of outside reference, and with look-alikes that are fine, in files
// that count and in files that do not (binary, vendored). The fixture is
// written at test time: committed, it would be an outside reference itself.
func TestFindOutsideRefsFlagsEachKind(t *testing.T) {
	contract, design := strings.ToUpper("contract"), strings.ToUpper("design")
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/a.md", strings.Join([]string{
		"# Notes",
		"The limit is in " + contract + ".md section 2.",
		"Tags follow (" + contract + " 10.2).",
		"As " + design + ".md says.",
		"[notes](../" + "shared/notes.md) and `../../" + "shared/x`",
		"cd /" + "work/main && make",
		"A contract, a design.md, https://example.com/" + "work/x, ./" + "work/y, a../" + "sharedx.",
	}, "\n"))
	write("main.go", "package main\n\n// Bounds of "+contract+".md section 4.\n")
	write("logo.png", "\x89PNG\x00 "+contract+".md")
	write("static/vendor/lib/LICENSE", "IN AN ACTION OF "+contract+", TORT OR OTHERWISE")
	write("clients/ts/node_modules/pkg/index.js", "// "+contract+".md")
	write("vendor/m/m.go", "// "+contract+".md")

	files, err := WalkFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"docs/a.md", "logo.png", "main.go"}; !slices.Equal(files, want) {
		t.Errorf("WalkFiles = %q, want %q (vendored directories skipped)", files, want)
	}
	refs, err := FindOutsideRefs(dir, append(files, "static/vendor/lib/LICENSE", "gone.md"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.Ref))
	}
	want := []string{
		"docs/a.md:2: " + contract + ".md",
		"docs/a.md:3: " + contract,
		"docs/a.md:4: " + design + ".md",
		"docs/a.md:5: ../" + "shared",
		"docs/a.md:5: ../../" + "shared",
		"docs/a.md:6: /" + "work/",
		"main.go:3: " + contract + ".md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("outside references:\n got %q\nwant %q", got, want)
	}
	if len(refs) > 0 && !strings.Contains(refs[0].String(), "state the rule in docs/") {
		t.Errorf("message %q does not say where the rule belongs", refs[0])
	}
}
