package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/pgembed"
)

// These tests pin finding 10 of the hardening issue: operator commands run
// from the wrong directory must not quietly create a new, empty cluster.

// lines splits a command's stderr into its lines.
func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

// envWithoutDataDir is the environment of an operator who never set
// LINKQR_DATA_DIR: the ./var default applies.
func envWithoutDataDir(extra ...string) []string {
	env := slices.DeleteFunc(slices.Clone(os.Environ()), func(kv string) bool {
		return strings.HasPrefix(kv, "LINKQR_DATA_DIR=")
	})
	return append(env, append([]string{"LINKQR_DATABASE_URL=", "LINKQR_LOG_FORMAT=json"}, extra...)...)
}

func requireAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s must not exist: %v", path, err)
	}
}

func TestOperatorCommandsRefuseANewDefaultCluster(t *testing.T) {
	requirePostgres(t)
	dir := t.TempDir()
	env := envWithoutDataDir()
	varDir := filepath.Join(dir, "var")
	wsID := id.Format(id.Workspace, uuid.Must(uuid.NewV7()))
	refusal := "no linkqr data directory at " + varDir + " (no cluster under pg/); " +
		"run from the directory where you ran `linkqr serve`, set LINKQR_DATA_DIR, or pass --init to create one"

	for _, args := range [][]string{
		{"admin", "bootstrap", "--email", "owner@example.com", "--password", "correct horse battery staple", "--workspace", "Acme"},
		{"migrate"},
		{"admin", "api-key", "create", "--workspace", wsID, "--name", "n", "--scopes", "links:read"},
		{"admin", "analytics", "rebuild"},
	} {
		code, out, errOut := runCmdIn(t, dir, env, args...)
		name := strings.Join(args[:min(3, len(args))], " ")
		name = strings.TrimSuffix(strings.TrimSuffix(name, " --email"), " --workspace")
		if want := "linkqr " + name + ": " + refusal; code != 1 || out != "" || !slices.Equal(lines(errOut), []string{want}) {
			t.Errorf("%s in an empty directory: exit %d, stdout %q, stderr %q; want exit 1 and the one line %q", name, code, out, errOut, want)
		}
	}
	requireAbsent(t, varDir)
	if t.Failed() {
		return
	}

	// --init creates the cluster here, and says where.
	code, out, errOut := runCmdIn(t, dir, env, "admin", "bootstrap", "--init", "--email", "owner@example.com", "--password", "correct horse battery staple", "--workspace", "Acme")
	var ids map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &ids) != nil || !strings.HasPrefix(ids["workspace_id"], "ws_") {
		t.Fatalf("bootstrap --init: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if want := "linkqr: using data directory " + varDir + " (creating a new cluster in pg/)"; lines(errOut)[0] != want {
		t.Errorf("bootstrap --init stderr %q, want first line %q", errOut, want)
	}
	if !pgembed.Exists(filepath.Join(varDir, "pg")) {
		t.Fatalf("bootstrap --init created no cluster in %s", varDir)
	}
	if pid := postmasterPID(t, varDir); alive(pid) {
		t.Errorf("bootstrap --init left the cluster running (pid %d)", pid)
	}

	// Now that a cluster exists, the same directory needs no flag.
	code, out, errOut = runCmdIn(t, dir, env, "migrate")
	if code != 0 || strings.TrimSpace(out) != `{"status":"migrated"}` || errOut != "linkqr: using data directory "+varDir+"\n" {
		t.Errorf("migrate on the existing cluster: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCmdIn(t, dir, env, "admin", "api-key", "create", "--workspace", ids["workspace_id"], "--name", "ops", "--scopes", "links:read")
	if code != 0 || !strings.Contains(out, `"secret":"lqk_`) {
		t.Errorf("api-key create on the existing cluster: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCmdIn(t, dir, env, "admin", "api-key", "create", "--workspace", wsID, "--name", "ops", "--scopes", "links:read")
	if want := "linkqr admin api-key create: no workspace " + wsID; code != 1 || out != "" || lines(errOut)[len(lines(errOut))-1] != want {
		t.Errorf("api-key create for an unknown workspace: exit %d, stdout %q, stderr %q; want last line %q", code, out, errOut, want)
	}
}

func TestMigrateInitCreatesTheDefaultCluster(t *testing.T) {
	requirePostgres(t)
	dir := t.TempDir()
	code, out, errOut := runCmdIn(t, dir, envWithoutDataDir(), "migrate", "--init")
	varDir := filepath.Join(dir, "var")
	if code != 0 || strings.TrimSpace(out) != `{"status":"migrated"}` {
		t.Fatalf("migrate --init: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if want := "linkqr: using data directory " + varDir + " (creating a new cluster in pg/)\n"; errOut != want {
		t.Errorf("migrate --init stderr %q, want %q", errOut, want)
	}
	if !pgembed.Exists(filepath.Join(varDir, "pg")) {
		t.Errorf("migrate --init created no cluster in %s", varDir)
	}
}

// An explicit LINKQR_DATA_DIR, even a relative one, is consent enough; the
// printed path is absolute so the operator sees where it resolved.
func TestExplicitDataDirNeedsNoInit(t *testing.T) {
	requirePostgres(t)
	dir := t.TempDir()
	env := envWithoutDataDir("LINKQR_DATA_DIR=data")
	code, out, errOut := runCmdIn(t, dir, env, "admin", "bootstrap", "--email", "owner@example.com", "--password", "correct horse battery staple", "--workspace", "Acme")
	if code != 0 || !strings.Contains(out, `"workspace_id":"ws_`) {
		t.Fatalf("bootstrap with LINKQR_DATA_DIR=data: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if want := "linkqr: using data directory " + filepath.Join(dir, "data") + " (creating a new cluster in pg/)"; lines(errOut)[0] != want {
		t.Errorf("stderr %q, want first line %q", errOut, want)
	}
	requireAbsent(t, filepath.Join(dir, "var"))
}

// With LINKQR_DATABASE_URL the commands name the database, never the
// password, need no data directory, and fail in one line when it is down.
func TestDatabaseURLIsNamedWithoutItsPassword(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addr := freeAddr(t) // closed again: nothing listens there
	env := envWithoutDataDir("LINKQR_DATABASE_URL=postgres://ops:sekrit@" + addr + "/linkqr_prod?connect_timeout=5")
	code, out, errOut := runCmdIn(t, dir, env, "migrate")
	got := lines(errOut)
	if code != 1 || out != "" || len(got) != 2 || got[0] != "linkqr: using database "+addr+"/linkqr_prod (LINKQR_DATABASE_URL)" || !strings.HasPrefix(got[1], "linkqr migrate: ") {
		t.Errorf("migrate against a database that is down: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if strings.Contains(errOut, "sekrit") {
		t.Errorf("stderr shows the password: %q", errOut)
	}
	requireAbsent(t, filepath.Join(dir, "var"))
}

func TestHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
	// A broken environment must not hide the help.
	env := append(envWithoutDataDir(), "LINKQR_ADDR=nonsense")
	commands := []string{"serve [--role all|redirect,api,worker]", "migrate [--init]", "admin bootstrap --email E --password P --workspace NAME [--init]",
		"admin api-key create --workspace ws_… --name N --scopes a,b [--rate-limit N] [--ip-allow CIDR,…] [--init]",
		"admin oauth-client create --grant client_credentials --workspace ws_… --name N --scopes a,b [--rate-limit N] [--ip-allow CIDR,…] [--init]",
		"admin oauth-client create --grant authorization_code --name N --redirect-uri U [--public] --scopes a,b [--init]",
		"admin oauth-client revoke --client cli_… [--init]",
		"admin user reset-link --email E [--init]",
		"admin user reset-2fa --email E [--init]",
		"admin workspace export --workspace ws_… --output FILE|- [--init]",
		"admin workspace delete --workspace ws_… [--init]",
		"admin analytics rebuild [--link lnk_…] [--init]",
		"listen --forward-to URL [--events a,b] [--after evt_…] [--api-url URL] [--api-key KEY]", "help"}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"admin", "help"}, {"admin", "--help"}} {
		code, out, errOut := runCmd(t, env, args...)
		if code != 0 || errOut != "" {
			t.Errorf("linkqr %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
			continue
		}
		text := lines(out)
		for _, c := range commands {
			i := slices.Index(text, "  "+c)
			if i < 0 || i+1 >= len(text) || !strings.HasPrefix(text[i+1], "      ") || strings.TrimSpace(text[i+1]) == "" {
				t.Errorf("linkqr %s: no usage line %q followed by a description in:\n%s", strings.Join(args, " "), c, out)
			}
		}
	}
	for _, args := range [][]string{{"admin", "bootstrap", "-h"}, {"migrate", "--help"}, {"admin", "api-key", "create", "-h"}, {"admin", "oauth-client", "create", "-h"}, {"admin", "analytics", "rebuild", "-h"}, {"admin", "user", "reset-link", "-h"}} {
		code, out, errOut := runCmd(t, envWithoutDataDir(), args...)
		if code != 0 || out != "" || !strings.HasPrefix(errOut, "usage: linkqr "+strings.Join(args[:len(args)-1], " ")) || !strings.Contains(errOut, "-init") {
			t.Errorf("linkqr %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
	}
}
