package retention_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/retention"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// batch and maxBatches are the tests' policy: small, so that seeding more
// rows than one run may delete is cheap.
const (
	batch      = 50
	maxBatches = 2
)

// setup is a purger over a fresh database, with the tests' policy and a
// clock stopped at now.
func setup(t *testing.T) (p *retention.Purger, pool *pgxpool.Pool, now time.Time) {
	t.Helper()
	pool, now = testkit.DB(t), time.Now().UTC()
	pol := config.DefaultRetention()
	pol.BatchSize, pol.MaxBatches = batch, maxBatches
	return &retention.Purger{DB: store.NewDB(pool), Policy: pol, Purged: retention.NewPurgedCounter(), Now: func() time.Time { return now }}, pool, now
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func run(t *testing.T, p *retention.Purger, job string) map[string]int64 {
	t.Helper()
	got, err := p.Run(context.Background(), job)
	if err != nil {
		t.Fatalf("run %s: %v", job, err)
	}
	return got
}

// purgedMetric reads linkqr_retention_purged_rows_total{table} as a
// registry would expose it.
func purgedMetric(t *testing.T, p *retention.Purger, table string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(p.Purged)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "linkqr_retention_purged_rows_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "table" && l.GetValue() == table {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no linkqr_retention_purged_rows_total{table=%q}", table)
	return 0
}

// idAt is a UUIDv7 of time t, as id.New would have made at t.
func idAt(t time.Time) uuid.UUID {
	var id uuid.UUID
	_, _ = rand.Read(id[:])
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(id[:6], ms[2:])
	id[6] = 0x70 | id[6]&0x0f
	id[8] = 0x80 | id[8]&0x3f
	return id
}

// TestCredentialsPurgeExactlyTheExpired seeds, in every table of the
// credentials job, rows just past their age and rows just inside it (more
// expired sessions than one run may delete), and checks that exactly the
// expired ones go, in runs of at most maxBatches statements of batch rows.
func TestCredentialsPurgeExactlyTheExpired(t *testing.T) {
	t.Parallel()
	p, pool, now := setup(t)
	tn := testkit.NewTenant(t, pool)

	// Sessions: 120 expired (more than a run's 100), 3 live.
	exec(t, pool, `INSERT INTO sessions (id_hash, data, expires_at)
		SELECT sha256(('old' || i)::bytea), '', $1::timestamptz - i * interval '1 second' FROM generate_series(0, 119) i`, now)
	exec(t, pool, `INSERT INTO sessions (id_hash, user_id, data, expires_at)
		SELECT sha256(('new' || i)::bytea), $2, '', $1::timestamptz + interval '1 second' FROM generate_series(1, 3) i`, now, tn.UserID)

	// OAuth: a partner client, a grant; codes expired for more and less
	// than the hour's grace; refresh tokens expired and live.
	client, grant := id.New(), id.New()
	exec(t, pool, `INSERT INTO oauth_clients (id, name, grant_type, scopes) VALUES ($1, 'partner', 'authorization_code', '{links:read}')`, client)
	exec(t, pool, `INSERT INTO oauth_grants (id, client_id, workspace_id, user_id, scopes) VALUES ($1, $2, $3, $4, '{links:read}')`, grant, client, tn.WorkspaceID, tn.UserID)
	for i, exp := range []time.Duration{-2 * time.Hour, -61 * time.Minute, -59 * time.Minute, time.Minute} {
		exec(t, pool, `INSERT INTO oauth_codes (code_hash, client_id, workspace_id, user_id, redirect_uri, scopes, code_challenge, expires_at)
			VALUES (sha256($1::bytea), $2, $3, $4, 'https://partner.example/cb', '{links:read}', 'x', $5)`,
			[]byte(fmt.Sprint("code", i)), client, tn.WorkspaceID, tn.UserID, now.Add(exp))
	}
	for i, exp := range []time.Duration{-time.Hour, -time.Second, time.Second, 30 * 24 * time.Hour} {
		exec(t, pool, `INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at) VALUES (sha256($1::bytea), $2, $3)`,
			[]byte(fmt.Sprint("rt", i)), grant, now.Add(exp))
	}
	// Password reset links: kept a day past expiry.
	for i, exp := range []time.Duration{-25 * time.Hour, -23 * time.Hour, 30 * time.Minute} {
		exec(t, pool, `INSERT INTO password_resets (token_hash, user_id, created_at, expires_at) VALUES (sha256($1::bytea), $2, $3, $4)`,
			[]byte(fmt.Sprint("pr", i)), tn.UserID, now.Add(exp-time.Hour), now.Add(exp))
	}
	// Throttling counters: older than their longest window go.
	for _, ago := range []time.Duration{2 * time.Hour, 61 * time.Minute, 59 * time.Minute, time.Minute} {
		exec(t, pool, `INSERT INTO signin_failures (email_key, ip, failed_at) VALUES ('a@example.com', '192.0.2.1', $1)`, now.Add(-ago))
		exec(t, pool, `INSERT INTO password_reset_requests (email_key, ip, requested_at) VALUES ('a@example.com', '192.0.2.1', $1)`, now.Add(-ago))
	}
	for _, ago := range []time.Duration{time.Hour, 16 * time.Minute, 14 * time.Minute} {
		exec(t, pool, `INSERT INTO signup_attempts (ip, attempted_at) VALUES ('192.0.2.1', $1)`, now.Add(-ago))
	}

	got := run(t, p, retention.JobCredentials)
	want := map[string]int64{
		"sessions": batch * maxBatches, "oauth_codes": 2, "oauth_refresh_tokens": 2, "password_resets": 1,
		"password_reset_requests": 2, "signin_failures": 2, "signup_attempts": 2,
	}
	for table, n := range want {
		if got[table] != n {
			t.Errorf("first run deleted %d %s, want %d", got[table], table, n)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM sessions`); n != 20+3 {
		t.Errorf("sessions after one run: %d, want the 20 expired a run could not reach and the 3 live", n)
	}
	got = run(t, p, retention.JobCredentials)
	if got["sessions"] != 20 || got["oauth_codes"] != 0 {
		t.Errorf("second run deleted %v, want the 20 remaining sessions only", got)
	}
	for table, left := range map[string]int64{
		"sessions": 3, "oauth_codes": 2, "oauth_refresh_tokens": 2, "password_resets": 2,
		"password_reset_requests": 2, "signin_failures": 2, "signup_attempts": 1,
	} {
		if n := count(t, pool, `SELECT count(*) FROM `+table); n != left {
			t.Errorf("%s left: %d, want %d", table, n, left)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM sessions WHERE expires_at <= $1`, now); n != 0 {
		t.Errorf("%d expired sessions left", n)
	}
	if v := purgedMetric(t, p, "sessions"); v != 120 {
		t.Errorf("linkqr_retention_purged_rows_total{table=sessions} = %v, want 120", v)
	}
}

// TestInvitationsPurgeClosedPastTheirAge keeps open invitations and those
// closed or expired less than 30 days ago.
func TestInvitationsPurgeClosedPastTheirAge(t *testing.T) {
	t.Parallel()
	p, pool, now := setup(t)
	tn := testkit.NewTenant(t, pool)
	day := 24 * time.Hour
	for i, inv := range []struct {
		status   string
		closed   time.Duration // ago; 0: open
		expires  time.Duration // from now
		purgedTo bool
	}{
		{"pending", 0, 7 * day, false},    // open
		{"pending", 0, -40 * day, true},   // expired 40 days ago
		{"pending", 0, -10 * day, false},  // expired 10 days ago
		{"accepted", 40 * day, day, true}, // closed 40 days ago
		{"declined", 31 * day, day, true},
		{"revoked", 29 * day, -20 * day, false}, // closed 29 days ago
		{"accepted", time.Hour, 6 * day, false},
	} {
		var closed *time.Time
		if inv.closed > 0 {
			c := now.Add(-inv.closed)
			closed = &c
		}
		exec(t, pool, `INSERT INTO invitations (id, workspace_id, email, role, status, created_at, expires_at, closed_at)
			VALUES ($1, $2, $3, 'member', $4, $5, $6, $7)`,
			id.New(), tn.WorkspaceID, fmt.Sprintf("i%d-%v@example.com", i, inv.purgedTo), inv.status, now.Add(-60*day), now.Add(inv.expires), closed)
	}
	// More than a run's worth of old closed ones.
	exec(t, pool, `INSERT INTO invitations (id, workspace_id, email, role, status, created_at, expires_at, closed_at)
		SELECT gen_random_uuid(), $1, 'bulk' || i || '-true@example.com', 'member', 'declined', $2, $3, $2::timestamptz + interval '1 day'
		FROM generate_series(1, 110) i`, tn.WorkspaceID, now.Add(-90*day), now.Add(-80*day))

	if got := run(t, p, retention.JobInvitations); got["invitations"] != batch*maxBatches {
		t.Errorf("first run deleted %d, want %d", got["invitations"], batch*maxBatches)
	}
	if got := run(t, p, retention.JobInvitations); got["invitations"] != 110+3-batch*maxBatches {
		t.Errorf("second run deleted %d, want the rest", got["invitations"])
	}
	if n := count(t, pool, `SELECT count(*) FROM invitations WHERE email LIKE '%-true@%'`); n != 0 {
		t.Errorf("%d invitations past their age left", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM invitations WHERE email LIKE '%-false@%'`); n != 4 {
		t.Errorf("%d invitations within their age left, want 4", n)
	}
}

// TestWebhooksPurgeDeliveriesThenUnneededEvents: deliveries older than 30
// days go (not pending ones); an old event goes once no delivery row and
// no unfinished delivery job refers to it.
func TestWebhooksPurgeDeliveriesThenUnneededEvents(t *testing.T) {
	t.Parallel()
	p, pool, now := setup(t)
	tn := testkit.NewTenant(t, pool)
	other := testkit.NewTenant(t, pool)
	day := 24 * time.Hour
	sub := id.New()
	exec(t, pool, `INSERT INTO webhook_subscriptions (id, workspace_id, url, events, secret_ciphertext) VALUES ($1, $2, 'https://hooks.example/x', '{link.updated}', '\x00')`, sub, tn.WorkspaceID)
	event := func(age time.Duration, ws uuid.UUID) uuid.UUID {
		id := idAt(now.Add(-age))
		exec(t, pool, `INSERT INTO events (id, workspace_id, type, data, created_at) VALUES ($1, $2, 'link.updated', '{}', $3)`, id, ws, now.Add(-age))
		return id
	}
	delivery := func(ev uuid.UUID, age time.Duration, attempt int, status string) {
		exec(t, pool, `INSERT INTO webhook_deliveries (id, workspace_id, subscription_id, event_id, event_type, attempt, status, created_at)
			VALUES ($1, $2, $3, $4, 'link.updated', $5, $6, $7)`, idAt(now.Add(-age)), tn.WorkspaceID, sub, ev, attempt, status, now.Add(-age))
	}
	job := func(ev uuid.UUID, state string) {
		var finalized *time.Time
		if state == "completed" || state == "discarded" {
			finalized = &now
		}
		exec(t, pool, `INSERT INTO river_job (args, kind, max_attempts, queue, state, finalized_at) VALUES ($1, 'webhook_delivery', 8, 'webhooks', $2, $3)`,
			fmt.Sprintf(`{"subscription_id":%q,"workspace_id":%q,"event_id":%q,"event_type":"link.updated"}`, sub, tn.WorkspaceID, ev), state, finalized)
	}

	// 120 events of another workspace, 40 days old, with nothing
	// referring to them: more than one run may delete.
	for range 120 {
		event(40*day, other.WorkspaceID)
	}
	gone := event(40*day, tn.WorkspaceID) // old attempts only, job completed
	for a := 1; a <= 3; a++ {
		delivery(gone, 40*day-time.Duration(a)*time.Hour, a, "failed")
	}
	job(gone, "completed")
	retried := event(40*day, tn.WorkspaceID) // an old attempt and one 10 days ago
	delivery(retried, 40*day, 1, "failed")
	delivery(retried, 10*day, 2, "succeeded")
	pending := event(40*day, tn.WorkspaceID) // a manual retry still pending
	delivery(pending, 35*day, 1, "failed")
	delivery(pending, 31*day, 2, "pending")
	scheduled := event(35*day, tn.WorkspaceID) // its next attempt is scheduled
	delivery(scheduled, 35*day, 1, "failed")
	job(scheduled, "retryable")
	young := event(29*day, tn.WorkspaceID)
	delivery(young, 29*day, 1, "succeeded")

	got := run(t, p, retention.JobWebhooks)
	if got["webhook_deliveries"] != 6 {
		t.Errorf("deleted %d deliveries, want 6 (3 of the gone event, 1 of each other old one)", got["webhook_deliveries"])
	}
	if got["events"] != batch*maxBatches {
		t.Errorf("first run deleted %d events, want a full run's %d", got["events"], batch*maxBatches)
	}
	got = run(t, p, retention.JobWebhooks)
	if got["events"] != 121-batch*maxBatches || got["webhook_deliveries"] != 0 {
		t.Errorf("second run deleted %v, want the rest of the 121 events", got)
	}
	var left []uuid.UUID
	rows, err := pool.Query(context.Background(), `SELECT id FROM events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		_ = rows.Scan(&id)
		left = append(left, id)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	want := map[uuid.UUID]string{retried: "retried", pending: "pending", scheduled: "scheduled", young: "young"}
	if len(left) != len(want) {
		t.Errorf("events left: %d, want %d (retried, pending, scheduled, young)", len(left), len(want))
	}
	for _, id := range left {
		if _, ok := want[id]; !ok {
			t.Errorf("event %s should be gone", id)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM webhook_deliveries`); n != 3 {
		t.Errorf("deliveries left: %d, want 3 (retried's recent one, the pending one, young's)", n)
	}
}

// TestUnusedSelfRegisteredClientsPurged: a self-registered OAuth client
// that nobody consented to for 30 days goes (with its codes); one with a
// grant (even revoked), a younger one and an operator's client stay.
func TestUnusedSelfRegisteredClientsPurged(t *testing.T) {
	t.Parallel()
	p, pool, now := setup(t)
	tn := testkit.NewTenant(t, pool)
	old := now.Add(-retention.UnusedDynamicClientAge - time.Minute)
	young := now.Add(-retention.UnusedDynamicClientAge + time.Minute)
	client := func(dynamic bool, created time.Time) uuid.UUID {
		clientID := id.New()
		exec(t, pool, `INSERT INTO oauth_clients (id, name, grant_type, scopes, redirect_uris, dynamic, created_at)
			VALUES ($1, 'app', 'authorization_code', '{links:read}', '{http://127.0.0.1/cb}', $2, $3)`, clientID, dynamic, created)
		return clientID
	}
	abandoned, used, revokedGrant, recent, operator := client(true, old), client(true, old), client(true, old), client(true, young), client(false, old)
	exec(t, pool, `INSERT INTO oauth_codes (code_hash, client_id, workspace_id, user_id, redirect_uri, scopes, code_challenge, expires_at)
		VALUES (sha256('c'::bytea), $1, $2, $3, 'http://127.0.0.1/cb', '{links:read}', 'x', $4)`, abandoned, tn.WorkspaceID, tn.UserID, now.Add(time.Minute))
	exec(t, pool, `INSERT INTO oauth_grants (id, client_id, workspace_id, user_id, scopes) VALUES ($1, $2, $3, $4, '{links:read}')`, id.New(), used, tn.WorkspaceID, tn.UserID)
	exec(t, pool, `INSERT INTO oauth_grants (id, client_id, workspace_id, user_id, scopes, revoked_at) VALUES ($1, $2, $3, $4, '{links:read}', $5)`,
		id.New(), revokedGrant, tn.WorkspaceID, tn.UserID, old)

	if got := run(t, p, retention.JobCredentials); got["oauth_clients"] != 1 {
		t.Errorf("deleted %d clients, want 1", got["oauth_clients"])
	}
	for id, want := range map[uuid.UUID]int64{abandoned: 0, used: 1, revokedGrant: 1, recent: 1, operator: 1} {
		if n := count(t, pool, `SELECT count(*) FROM oauth_clients WHERE id = $1`, id); n != want {
			t.Errorf("client %s: %d rows, want %d", id, n, want)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM oauth_codes WHERE client_id = $1`, abandoned); n != 0 {
		t.Errorf("the deleted client's code is left")
	}
}

// TestExpiredLinkImportsPurged: a CSV import past its 24 hours goes with
// its row outcomes, by the periodic job (not by the next upload); a fresh
// one stays, and so does an expired one whose job still runs.
func TestExpiredLinkImportsPurged(t *testing.T) {
	t.Parallel()
	p, pool, now := setup(t)
	tn := testkit.NewTenant(t, pool)
	imp := func(state string, expires time.Time) uuid.UUID {
		importID := id.New()
		exec(t, pool, `INSERT INTO link_imports (id, workspace_id, user_id, file_name, content, keep_codes, row_count, state, expires_at)
			VALUES ($1, $2, $3, 'links.csv', $6::bytea, true, 1, $4, $5)`, importID, tn.WorkspaceID, tn.UserID, state, expires, []byte("target_url\nhttps://example.com\n"))
		exec(t, pool, `INSERT INTO link_import_rows (import_id, row_number, outcome, message) VALUES ($1, 2, 'invalid', 'x')`, importID)
		return importID
	}
	expired, done, fresh, running := imp("uploaded", now.Add(-time.Minute)), imp("done", now.Add(-time.Hour)),
		imp("uploaded", now.Add(time.Hour)), imp("queued", now.Add(-time.Minute))
	if got := run(t, p, retention.JobCredentials); got["link_imports"] != 2 {
		t.Errorf("deleted %d imports, want 2", got["link_imports"])
	}
	for id, want := range map[uuid.UUID]int64{expired: 0, done: 0, fresh: 1, running: 1} {
		if n := count(t, pool, `SELECT count(*) FROM link_imports WHERE id = $1`, id); n != want {
			t.Errorf("import %s: %d rows, want %d", id, n, want)
		}
		if n := count(t, pool, `SELECT count(*) FROM link_import_rows WHERE import_id = $1`, id); n != want {
			t.Errorf("import %s: %d outcome rows, want %d", id, n, want)
		}
	}
}
