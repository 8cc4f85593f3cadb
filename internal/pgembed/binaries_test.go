package pgembed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	ordered := []string{"odd", "9", "9.6", "10", "15", "15.4", "16"}
	for i := range ordered {
		for j := range ordered {
			got := sign(compareVersions(ordered[i], ordered[j]))
			if want := sign(i - j); got != want {
				t.Errorf("compareVersions(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	if compareVersions("15", "15.0") != 0 {
		t.Error(`"15" and "15.0" should compare equal`)
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

func TestGlobNewestFirst(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, v := range []string{"9.6", "16", "15", "10"} {
		if err := os.MkdirAll(filepath.Join(root, v, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := globNewestFirst(filepath.Join(root, "*", "bin"))
	want := []string{"16", "15", "10", "9.6"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if dirVersion(got[i]) != want[i] {
			t.Fatalf("order = %v, want versions %v", got, want)
		}
	}
}

func TestMajorOf(t *testing.T) {
	t.Parallel()
	for out, want := range map[string]string{
		"postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)\n": "15",
		"postgres (PostgreSQL) 9.6.24\n":                         "9.6",
		"postgres (PostgreSQL) 16beta1\n":                        "16",
		"garbage":                                                "",
	} {
		if got := majorOf(out); got != want {
			t.Errorf("majorOf(%q) = %q, want %q", out, got, want)
		}
	}
}

func TestFirstWithToolsReportsHowToFix(t *testing.T) {
	t.Parallel()
	_, err := firstWithTools([]string{t.TempDir(), "/nonexistent"})
	if !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("err = %v, want ErrNoBinaries", err)
	}
	for _, hint := range []string{"apt-get install postgresql", "LINKQR_DATABASE_URL"} {
		if !strings.Contains(err.Error(), hint) {
			t.Errorf("error %q does not mention %q", err, hint)
		}
	}
}

// TestFindBinDirWithoutPATH checks the fallbacks (pg_config is not reachable either with
// PATH empty): Debian keeps the server out of PATH, so they are the usual way in.
func TestFindBinDirWithoutPATH(t *testing.T) {
	requireBinaries(t)
	t.Setenv("PATH", "")
	dir, err := FindBinDir()
	if err != nil {
		t.Fatalf("FindBinDir with empty PATH: %v", err)
	}
	if !hasServerTools(dir) {
		t.Fatalf("FindBinDir returned %s, which lacks initdb/postgres", dir)
	}
}
