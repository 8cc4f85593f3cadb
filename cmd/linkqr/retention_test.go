package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestScanRetentionCommand sets one workspace's scan retention, back to the
// default, and refuses bad input without changing anything.
func TestScanRetentionCommand(t *testing.T) {
	t.Parallel()
	url, pool := commandDB(t)
	ws, other := testkit.NewTenant(t, pool), testkit.NewTenant(t, pool)
	env := envWithoutDataDir("LINKQR_DATABASE_URL="+url, "LINKQR_SCAN_RETENTION_MONTHS=18")
	stored := func(id uuid.UUID) *int32 {
		t.Helper()
		var m *int32
		if err := pool.QueryRow(context.Background(), `SELECT scan_retention_months FROM workspaces WHERE id = $1`, id).Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	code, out, errOut := runCmd(t, env, "admin", "scan-retention", "--workspace", ws.WorkspaceExternalID(), "--months", "3")
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["scan_retention_months"] != float64(3) || res["default"] != false {
		t.Fatalf("--months 3: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if m := stored(ws.WorkspaceID); m == nil || *m != 3 {
		t.Errorf("stored %v, want 3", m)
	}
	if m := stored(other.WorkspaceID); m != nil {
		t.Errorf("the other workspace's setting changed to %d", *m)
	}

	unknown := id.Format(id.Workspace, uuid.Must(uuid.NewV7()))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--workspace", unknown, "--months", "5"}, 1, "linkqr admin scan-retention: no workspace " + unknown},
		{[]string{"--workspace", "lnk_nope", "--months", "5"}, 1, `--workspace "lnk_nope" is not a workspace id`},
		{[]string{"--workspace", ws.WorkspaceExternalID(), "--months", "0"}, 1, `--months "0" is not "default" or a whole number of months from 1 to 1200`},
		{[]string{"--workspace", ws.WorkspaceExternalID(), "--months", "1201"}, 1, "from 1 to 1200"},
		{[]string{"--workspace", ws.WorkspaceExternalID()}, 2, "missing required flag(s): --months"},
	} {
		code, out, errOut := runCmd(t, env, append([]string{"admin", "scan-retention"}, tc.args...)...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
	if m := stored(ws.WorkspaceID); m == nil || *m != 3 {
		t.Errorf("after refused commands: stored %v, want 3 still", m)
	}

	code, out, errOut = runCmd(t, env, "admin", "scan-retention", "--workspace", ws.WorkspaceExternalID(), "--months", "default")
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["scan_retention_months"] != float64(18) || res["default"] != true {
		t.Fatalf("--months default: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if m := stored(ws.WorkspaceID); m != nil {
		t.Errorf("stored %d, want NULL (the default)", *m)
	}
}
