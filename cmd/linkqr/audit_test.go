package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestAuditVerifyCommand: an operator command's change is the operator's
// in the audit log; `admin audit verify` prints the count and ok, and
// after a row is tampered with (as the superuser, triggers off) it names
// the broken entry and exits 1.
func TestAuditVerifyCommand(t *testing.T) {
	t.Parallel()
	url, pool := commandDB(t)
	ctx := context.Background()
	env := envWithoutDataDir("LINKQR_DATABASE_URL=" + url)
	code, out, errOut := runCmd(t, env, "admin", "bootstrap", "--email", "op@example.com", "--password", "correct horse battery staple", "--workspace", "Audited")
	var boot map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &boot) != nil {
		t.Fatalf("bootstrap: exit %d, %q %q", code, out, errOut)
	}
	ws, _ := boot["workspace_id"].(string)
	for _, months := range []string{"3", "4"} {
		if code, out, errOut := runCmd(t, env, "admin", "scan-retention", "--workspace", ws, "--months", months); code != 0 {
			t.Fatalf("scan-retention: exit %d, %q %q", code, out, errOut)
		}
	}
	var actor string
	var n int
	if err := pool.QueryRow(ctx, `SELECT min(actor_type), count(*) FROM audit_events WHERE action = 'workspace.retention_changed'`).Scan(&actor, &n); err != nil || actor != "operator" || n != 2 {
		t.Fatalf("entries of the operator's change: %q × %d, %v", actor, n, err)
	}

	code, out, errOut = runCmd(t, env, "admin", "audit", "verify", "--workspace", ws)
	if code != 0 || strings.TrimSpace(out) != `{"entries":2,"ok":true}` {
		t.Fatalf("verify: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `UPDATE audit_events SET changes = '{"scan_retention_months":["default",120]}' WHERE seq = 1`); err == nil {
		t.Fatal("the trigger let an UPDATE through")
	}
	if _, err := conn.Exec(ctx, `ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only`); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `UPDATE audit_events SET changes = '{"scan_retention_months":["default",120]}' WHERE seq = 1`)
	if _, e := conn.Exec(ctx, `ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only`); e != nil || err != nil {
		t.Fatal(err, e)
	}

	code, out, errOut = runCmd(t, env, "admin", "audit", "verify", "--workspace", ws)
	var v map[string]any
	if code != 1 || json.Unmarshal([]byte(out), &v) != nil || v["ok"] != false || v["entries"] != float64(1) ||
		!strings.HasPrefix(v["broken"].(string), "aud_") || v["reason"] == "" || !strings.Contains(errOut, "broken") {
		t.Fatalf("verify after tampering: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := runCmd(t, env, "admin", "audit", "verify", "--workspace", "ws_nope"); code != 1 {
		t.Errorf("a bad --workspace exits %d", code)
	}
	if code, _, _ := runCmd(t, env, "admin", "audit", "check"); code != 2 {
		t.Errorf("an unknown audit command exits %d", code)
	}
}
