package audit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/retention"
	"github.com/linkqr/linkqr/internal/webhook"
)

// TestConcurrentChangesKeepOneChain: changes made at once in one
// workspace take turns at the chain's head; the chain has no fork (every
// seq once, every prev_hash the hash before) and verifies.
func TestConcurrentChangesKeepOneChain(t *testing.T) {
	r := newRig(t)
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.app.Webhooks.Create(r.ctx, r.ws, webhook.CreateInput{URL: fmt.Sprintf("http://127.0.0.1:%d/hook", 9100+i), Events: []string{"link.created"}})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := r.scalar(t, "SELECT count(DISTINCT prev_hash) FROM audit_events WHERE workspace_id = $1", r.ws); got != n {
		t.Errorf("%d distinct prev_hash among %d entries: the chain forked", got, n)
	}
	if got := r.scalar(t, "SELECT max(seq)::int FROM audit_events WHERE workspace_id = $1", r.ws); got != n {
		t.Errorf("max seq %d, want %d", got, n)
	}
	v, err := audit.Verify(context.Background(), r.app.DB, r.ws)
	if err != nil || !v.OK || v.Entries != n {
		t.Fatalf("Verify = %+v, %v", v, err)
	}
}

// superuser runs sql on one connection with triggers off (as the database
// superuser may): how an attacker with the database would tamper.
func superuser(t *testing.T, r *rig, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	c, err := r.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if _, err := c.Exec(ctx, "SET session_replication_role = replica"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = c.Exec(ctx, "RESET session_replication_role") }()
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func entryIDs(t *testing.T, r *rig) []string {
	t.Helper()
	p, err := audit.List(context.Background(), r.app.DB, r.ws, audit.Filter{}, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(p.Entries))
	for i, e := range p.Entries {
		ids[len(ids)-1-i] = e.ExternalID() // oldest first
	}
	return ids
}

// TestVerifyFindsTampering: an edited field, a deleted middle entry and
// a deleted last entry are each found, naming the first broken entry.
func TestVerifyFindsTampering(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, r *rig, ids []string) (broken string)
	}{
		{"edited changes", func(t *testing.T, r *rig, ids []string) string {
			entryID, _ := id.Parse(id.Audit, ids[2])
			superuser(t, r, `UPDATE audit_events SET changes = jsonb_set(changes, '{name,1}', '"innocent"') WHERE id = $1`, entryID)
			return ids[2]
		}},
		{"edited actor", func(t *testing.T, r *rig, ids []string) string {
			entryID, _ := id.Parse(id.Audit, ids[1])
			superuser(t, r, `UPDATE audit_events SET actor_email = 'someone-else@example.com' WHERE id = $1`, entryID)
			return ids[1]
		}},
		{"deleted middle", func(t *testing.T, r *rig, ids []string) string {
			entryID, _ := id.Parse(id.Audit, ids[2])
			superuser(t, r, `DELETE FROM audit_events WHERE id = $1`, entryID)
			return ids[3]
		}},
		{"deleted last", func(t *testing.T, r *rig, ids []string) string {
			entryID, _ := id.Parse(id.Audit, ids[4])
			superuser(t, r, `DELETE FROM audit_events WHERE id = $1`, entryID)
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			for i := range 5 {
				if _, _, err := r.app.Keys.Create(r.ctx, r.ws, nil, apikey.CreateInput{Name: fmt.Sprintf("key %d", i), Scopes: []string{"links:read"}}); err != nil {
					t.Fatal(err)
				}
			}
			if v, err := audit.Verify(context.Background(), r.app.DB, r.ws); err != nil || !v.OK || v.Entries != 5 {
				t.Fatalf("before tampering: %+v, %v", v, err)
			}
			broken := tc.tamper(t, r, entryIDs(t, r))
			v, err := audit.Verify(context.Background(), r.app.DB, r.ws)
			if err != nil {
				t.Fatal(err)
			}
			if v.OK || v.Broken != broken || v.Reason == "" {
				t.Fatalf("after tampering: %+v, want broken %q", v, broken)
			}
		})
	}
}

// TestEntriesAreAppendOnly: PostgreSQL itself refuses to update, delete or
// truncate entries outside the purges, whoever asks.
func TestEntriesAreAppendOnly(t *testing.T) {
	r := newRig(t)
	if _, _, err := r.app.Keys.Create(r.ctx, r.ws, nil, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, sql := range []string{
		"UPDATE audit_events SET action = 'api_key.revoked'",
		"DELETE FROM audit_events",
		"TRUNCATE audit_events",
	} {
		if _, err := r.pool.Exec(ctx, sql); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want refused", sql, err)
		}
	}
	// The purge's setting lets a DELETE through, in its transaction only.
	err := r.app.DB.InTx(ctx, func(tx pgx.Tx) error {
		_, err := audit.PurgeOlder(ctx, tx, time.Now().Add(time.Hour), 10)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.scalar(t, "SELECT count(*) FROM audit_events WHERE workspace_id = $1", r.ws); n != 0 {
		t.Errorf("%d entries after the purge", n)
	}
	if _, _, err := r.app.Keys.Create(r.ctx, r.ws, nil, apikey.CreateInput{Name: "k2", Scopes: []string{"links:read"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.pool.Exec(ctx, "DELETE FROM audit_events"); err == nil {
		t.Error("the purge's setting outlived its transaction")
	}
}

// TestRetentionPurgesOldEntriesAndChainStillVerifies: entries past
// LINKQR_AUDIT_RETENTION_DAYS go; verification starts from the oldest left.
func TestRetentionPurgesOldEntriesAndChainStillVerifies(t *testing.T) {
	r := newRig(t)
	for i := range 4 {
		if _, _, err := r.app.Keys.Create(r.ctx, r.ws, nil, apikey.CreateInput{Name: fmt.Sprintf("k%d", i), Scopes: []string{"links:read"}}); err != nil {
			t.Fatal(err)
		}
	}
	ids := entryIDs(t, r)
	// The two oldest were written 400 days ago (moved back as the superuser).
	for _, raw := range ids[:2] {
		entryID, _ := id.Parse(id.Audit, raw)
		superuser(t, r, "UPDATE audit_events SET created_at = created_at - interval '400 days' WHERE id = $1", entryID)
	}
	purged, err := r.app.Retention.Run(context.Background(), retention.JobAudit)
	if err != nil {
		t.Fatal(err)
	}
	if purged["audit_events"] != 2 {
		t.Fatalf("purged %v, want 2 audit_events", purged)
	}
	left := entryIDs(t, r)
	if len(left) != 2 || left[0] != ids[2] {
		t.Fatalf("left %v, want %v", left, ids[2:])
	}
	v, err := audit.Verify(context.Background(), r.app.DB, r.ws)
	if err != nil || !v.OK || v.Entries != 2 {
		t.Fatalf("Verify after the purge = %+v, %v", v, err)
	}
}

// TestNoSecretInTheLog: creating a key, a client and a webhook and
// rotating the webhook's secret writes entries that hold none of the
// secrets shown once.
func TestNoSecretInTheLog(t *testing.T) {
	r := newRig(t)
	_, token, err := r.app.Keys.Create(r.ctx, r.ws, nil, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.app.Webhooks.Create(r.ctx, r.ws, webhook.CreateInput{URL: "http://127.0.0.1:9/hook", Events: []string{"link.created"}})
	if err != nil {
		t.Fatal(err)
	}
	rot, err := r.app.Webhooks.RotateSecret(r.ctx, r.ws, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, clientSecret, err := r.app.OAuth.CreateClient(r.ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &r.ws,
		Name: "secret test", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	var rows string
	if err := r.pool.QueryRow(context.Background(), "SELECT string_agg(to_jsonb(a)::text, '\n') FROM audit_events a WHERE workspace_id = $1", r.ws).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rows, "webhook.secret_rotated") || !strings.Contains(rows, "api_key.created") {
		t.Fatalf("the entries are missing: %s", rows)
	}
	for name, secret := range map[string]string{"API key": token, "webhook secret": h.Secret, "rotated secret": rot.Secret, "client secret": clientSecret} {
		if secret == "" {
			t.Fatalf("no %s to look for", name)
		}
		if strings.Contains(rows, secret) {
			t.Errorf("the %s is in the audit log", name)
		}
	}
}
