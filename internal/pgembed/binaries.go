package pgembed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNoBinaries is returned when no PostgreSQL server installation is found. Its message is
// the one line an operator needs: what is missing and the two ways to fix it.
var ErrNoBinaries = errors.New("PostgreSQL server binaries not found: install them (Debian/Ubuntu: apt-get install postgresql) or set LINKQR_DATABASE_URL")

// serverTools are the programs pgembed runs; a directory qualifies only when it has all.
var serverTools = []string{"initdb", "postgres"}

// versionedGlobs are the layouts of packaged servers: Debian/Ubuntu, then PGDG for RHEL.
var versionedGlobs = []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"}

// FindBinDir locates the directory holding initdb and postgres. It looks in PATH first
// (the operator's explicit choice), then asks `pg_config --bindir`, then scans the
// packaged layouts (/usr/lib/postgresql/*/bin, newest major version first, so 16 wins
// over 9.6) and finally /usr/local/pgsql/bin. Debian puts none of the server programs in
// PATH, which is why the fallbacks exist.
func FindBinDir() (string, error) {
	return firstWithTools(binDirCandidates())
}

// firstWithTools returns the first directory that holds every server tool.
func firstWithTools(dirs []string) (string, error) {
	for _, d := range dirs {
		if hasServerTools(d) {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

// binDirCandidates lists, in order of preference, the directories that may hold the
// server; duplicates are harmless.
func binDirCandidates() []string {
	var dirs []string
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(real)) // keep initdb and postgres of one install
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	if d := pgConfigBinDir(); d != "" {
		dirs = append(dirs, d)
	}
	for _, g := range versionedGlobs {
		dirs = append(dirs, globNewestFirst(g)...)
	}
	return append(dirs, "/usr/local/pgsql/bin")
}

// pgConfigBinDir asks pg_config (from PATH) where the binaries are; "" when it cannot.
func pgConfigBinDir() string {
	p, err := exec.LookPath("pg_config")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--bindir").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// globNewestFirst expands a versioned pattern and orders the matches by version, newest
// first, comparing numerically (a plain string sort would put 9.6 above 16).
func globNewestFirst(pattern string) []string {
	matches, _ := filepath.Glob(pattern)
	slices.SortStableFunc(matches, func(a, b string) int {
		return compareVersions(dirVersion(b), dirVersion(a))
	})
	return matches
}

// dirVersion extracts "15" from /usr/lib/postgresql/15/bin or /usr/pgsql-15/bin.
func dirVersion(binDir string) string {
	return strings.TrimPrefix(filepath.Base(filepath.Dir(binDir)), "pgsql-")
}

// compareVersions orders dotted numeric versions ("9.6" < "10" < "16"); a component that
// is not a number sorts below any number, so odd directory names end up last.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		if c := compareComponent(component(as, i), component(bs, i)); c != 0 {
			return c
		}
	}
	return 0
}

// component returns the i-th version component, "0" past the end ("15" == "15.0").
func component(parts []string, i int) string {
	if i < len(parts) {
		return parts[i]
	}
	return "0"
}

func compareComponent(a, b string) int {
	an, aerr := strconv.Atoi(a)
	bn, berr := strconv.Atoi(b)
	switch {
	case aerr != nil && berr != nil:
		return strings.Compare(a, b)
	case aerr != nil:
		return -1
	case berr != nil:
		return 1
	}
	return an - bn
}

// hasServerTools reports whether dir holds every server tool as an executable file.
func hasServerTools(dir string) bool {
	for _, tool := range serverTools {
		fi, err := os.Stat(filepath.Join(dir, tool))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// serverMajor returns the major version of the server in binDir as PG_VERSION spells it:
// "15" for 15.4, "9.6" for 9.6.24.
func serverMajor(binDir string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("running %s --version: %w", filepath.Join(binDir, "postgres"), err)
	}
	return majorOf(string(out)), nil
}

// majorOf parses "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)" into "15".
func majorOf(versionOutput string) string {
	fields := strings.Fields(versionOutput)
	if len(fields) < 3 {
		return ""
	}
	parts := strings.Split(fields[2], ".")
	if n, err := strconv.Atoi(parts[0]); err == nil && n < 10 && len(parts) > 1 {
		return parts[0] + "." + parts[1]
	}
	return leadingDigits(parts[0]) // "16beta1" → "16"
}

func leadingDigits(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		return s
	}
	return s[:i]
}

// binDirForCluster picks the binaries for an existing cluster of the given major version:
// a server of another major version refuses its files, so the newest install is not
// automatically right once a cluster exists.
func binDirForCluster(major string) (string, error) {
	var found []string
	seen := map[string]bool{}
	for _, d := range binDirCandidates() {
		real, err := filepath.EvalSymlinks(filepath.Join(d, "postgres"))
		if err != nil || seen[real] || !hasServerTools(d) {
			continue
		}
		seen[real] = true
		m, err := serverMajor(d)
		if err == nil && m == major {
			return d, nil
		}
		found = append(found, fmt.Sprintf("%s (PostgreSQL %s)", d, m))
	}
	if len(found) == 0 {
		return "", ErrNoBinaries
	}
	return "", fmt.Errorf("the embedded cluster was created by PostgreSQL %s but only %s is installed: install PostgreSQL %s server binaries or upgrade the cluster with pg_upgrade",
		major, strings.Join(found, ", "), major)
}
