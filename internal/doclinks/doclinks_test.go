package doclinks

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRepositoryLinksResolve checks every relative link of the README, the
// docs and the other READMEs that link into them.
func TestRepositoryLinksResolve(t *testing.T) {
	root := repoRoot(t)
	var files []string
	for _, pattern := range []string{"README.md", "docs/*.md", "deploy/README.md", "clients/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		if len(m) == 0 {
			t.Fatalf("no file matches %s: the list of documents is out of date", pattern)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	broken, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Errorf("broken link: %s", b)
	}
	t.Logf("%d documents checked", len(files))
}

// TestCheckFindsBrokenLinks runs the check on a fixture with links of every
// kind, so it is known to fail on each way a link can break and to pass the
// ones that work.
func TestCheckFindsBrokenLinks(t *testing.T) {
	broken, err := Check("testdata/broken", []string{"a.md", "sub/b.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range broken {
		got = append(got, b.String())
	}
	want := []string{
		"a.md:13: sub/missing.md: no such file",
		"a.md:14: sub/b.md#no-such-heading: no heading #no-such-heading in sub/b.md",
		"a.md:14: #nowhere: no heading #nowhere in a.md",
		"a.md:15: sub/missing.png: no such file",
		"a.md:15: ../../../../../../outside.md: leaves the repository",
		"a.md:17: sub/gone.md: no such file",
	}
	if !slices.Equal(got, want) {
		t.Errorf("broken links:\n got %q\nwant %q", got, want)
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"OAuth 2.0":           "oauth-20",
		"AI assistants (MCP)": "ai-assistants-mcp",
		"2. The writer (`internal/scan/recorder.go`, `write.go`)": "2-the-writer-internalscanrecordergo-writego",
		"linkqr Kotlin client (`dev.linkqr.client`)":              "linkqr-kotlin-client-devlinkqrclient",
		"Tests — real engines":                                    "tests--real-engines",
		"E-mail":                                                  "e-mail",
		"The [scan](x.md) pipeline":                               "the-scan-pipeline",
		"Größe_und Maß":                                           "größe_und-maß",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestAnchorsNumberRepeatedHeadings(t *testing.T) {
	a := Anchors("# Notes\n\n```\n# not a heading\n```\n## Notes ##\n<a id=\"here\"></a>\n## Notes\n")
	for _, want := range []string{"notes", "notes-1", "notes-2", "here"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a line in a code block counted as a heading")
	}
}

// repoRoot is the module's root: the test runs in internal/doclinks.
func repoRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not two levels up: %v", err)
	}
	return root
}
