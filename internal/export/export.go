// Package export writes everything of a workspace as a zip archive: one
// JSON-lines file per kind of object, plus CSV for links and scans. Rows
// are streamed from PostgreSQL into the archive as they arrive (one
// query per file in one REPEATABLE READ snapshot, read row by row), so
// memory stays flat whatever the workspace's size — which is why these
// queries are hand-written here: sqlc's :many returns whole slices.
// Secrets never leave: no key, client secret or webhook signing secret,
// not even as hashes.
package export

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/csvout"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/linkcsv"
	"github.com/linkqr/linkqr/internal/store"
)

// Summary counts the rows written per file.
type Summary struct {
	WorkspaceID string           `json:"workspace_id"`
	Name        string           `json:"name"`
	Files       map[string]int64 `json:"files"`
}

// idCol is a UUID column written as its external "<prefix>_…" id.
type idCol struct {
	name   string
	prefix id.Prefix
}

// jsonFile is one JSON-lines file: each row of inner ($1 is the
// workspace) as an object, the columns in ids as external ids.
type jsonFile struct {
	name  string
	ids   []idCol
	inner string
}

// sql selects the id columns, then the row as JSON without them.
func (f jsonFile) sql() string {
	names := make([]string, len(f.ids))
	for i, c := range f.ids {
		names[i] = "x." + c.name
	}
	drop := strings.Join(names, ",")
	return "SELECT " + drop + ", (to_jsonb(x) - '{" + strings.ReplaceAll(drop, "x.", "") + "}'::text[])::text FROM (" + f.inner + ") x"
}

var jsonFiles = []jsonFile{
	{"workspace.jsonl", []idCol{{"id", id.Workspace}},
		`SELECT id, name, created_at FROM workspaces WHERE id = $1`},
	{"members.jsonl", []idCol{{"user_id", id.User}},
		`SELECT m.user_id, u.email, m.role, m.created_at AS joined_at
		   FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 ORDER BY m.created_at`},
	{"links.jsonl", []idCol{{"id", id.Link}},
		`SELECT id, code, domain, target_url, title, status, expires_at, scan_count, last_scanned_at,
		          created_at, updated_at, deleted_at, tags, rules, split, password_hash IS NOT NULL AS password_protected, max_scans,
		          utm_source, utm_medium, utm_campaign, utm_term, utm_content
		   FROM links WHERE workspace_id = $1 ORDER BY id`},
	{"utm_templates.jsonl", []idCol{{"id", id.UTMTemplate}},
		`SELECT id, name, utm_source, utm_medium, utm_campaign, utm_term, utm_content, created_at, updated_at
		   FROM utm_templates WHERE workspace_id = $1 ORDER BY id`},
	// The workspace default (link_id null) and each link's own design; a
	// logo as the data URI the API takes, so a design can be put back.
	{"qr_designs.jsonl", []idCol{{"link_id", id.Link}},
		`SELECT link_id, fg, bg, ecc, margin, modules,
		          'data:image/png;base64,' || translate(encode(logo_png, 'base64'), E'\n', '') AS logo,
		          frame_text, frame_color, updated_at
		   FROM qr_designs WHERE workspace_id = $1 ORDER BY link_id NULLS FIRST`},
	{"domains.jsonl", []idCol{{"id", id.Domain}},
		`SELECT id, hostname, status, root_url, not_found_url, verified_at, record_missing_since, created_at, updated_at
		   FROM domains WHERE workspace_id = $1 ORDER BY id`},
	{"webhooks.jsonl", []idCol{{"id", id.Webhook}},
		`SELECT id, url, events, description, status, disabled_reason, created_at, updated_at
		   FROM webhook_subscriptions WHERE workspace_id = $1 ORDER BY id`},
	{"api_keys.jsonl", []idCol{{"id", id.APIKey}, {"created_by", id.User}},
		`SELECT id, created_by, name, 'lqk_' || public_id || '_…' AS hint, scopes, rate_limit_per_minute,
		          ip_allowlist, created_at, last_used_at, revoked_at
		   FROM api_keys WHERE workspace_id = $1 ORDER BY id`},
	{"oauth_clients.jsonl", []idCol{{"id", id.OAuthClient}, {"created_by", id.User}},
		`SELECT id, created_by, name, grant_type, scopes, rate_limit_per_minute, ip_allowlist, created_at, revoked_at
		   FROM oauth_clients WHERE workspace_id = $1 ORDER BY id`},
	// The audit log in chain order, each entry the API's audit_event
	// object, so its hash can be checked from the archive alone.
	{"audit_events.jsonl", []idCol{{"id", id.Audit}},
		`SELECT id, 'audit_event' AS object, action,
		          jsonb_build_object('type', actor_type, 'id', actor_id, 'user_id', actor_user_id, 'email', actor_email) AS actor,
		          jsonb_build_object('type', target_type, 'id', target_id) AS target,
		          changes, ip, user_agent, ` + ts("created_at") + ` AS created_at, hash, prev_hash
		   FROM audit_events WHERE workspace_id = $1 ORDER BY seq`},
	{"events.jsonl", []idCol{{"id", id.Event}},
		`SELECT id, type, data, created_at FROM events WHERE workspace_id = $1 ORDER BY id`},
	{"scans.jsonl", []idCol{{"id", id.Scan}, {"link_id", id.Link}},
		scanColumns},
}

// scanColumns: every scan of the workspace's links (through the links'
// index), without the visitor hash (a keyed pseudonym with no meaning
// outside this installation).
const scanColumns = `SELECT s.id, s.link_id, s.occurred_at, s.referrer_host, s.device, s.os, s.browser, s.bot, s.country, s.source, s.variant
	FROM links l JOIN scans s ON s.link_id = l.id WHERE l.workspace_id = $1`

// csvFile selects text columns; those named in ids are UUIDs written as
// external ids.
type csvFile struct {
	name    string
	header  []string
	ids     map[int]id.Prefix
	sql     string
	origins bool // sql takes the default short base ($2) and the custom domains' scheme ($3)
}

var csvFiles = []csvFile{
	// links.csv has the links export's columns (linkcsv.ExportColumns),
	// so it re-imports, and then deleted_at: the archive keeps deleted links.
	{"links.csv", append(slices.Clone(linkcsv.ExportColumns), "deleted_at"),
		map[int]id.Prefix{0: id.Link},
		`SELECT id::text, code, domain,
		        CASE WHEN domain IS NULL THEN $2 || '/' || code ELSE $3 || '://' || domain || '/' || code END,
		        target_url, title, array_to_string(tags, '` + linkcsv.TagSeparator + `'), status, ` + ts("expires_at") + `,
		        scan_count::text, ` + ts("last_scanned_at") + `, ` + ts("created_at") + `, ` + ts("updated_at") + `,
		        utm_source, utm_medium, utm_campaign, utm_term, utm_content, ` + ts("deleted_at") + `
		 FROM links WHERE workspace_id = $1 ORDER BY id`, true},
	{"scans.csv", []string{"id", "link_id", "occurred_at", "referrer_host", "device", "os", "browser", "bot", "country", "source", "variant"},
		map[int]id.Prefix{0: id.Scan, 1: id.Link},
		`SELECT id::text, link_id::text, ` + ts("occurred_at") + `, referrer_host, device, os, browser, bot::text, country, source, variant
		 FROM (` + scanColumns + `) x`, false},
}

// ts renders a timestamptz column as RFC 3339 in UTC.
func ts(col string) string {
	return `to_char(` + col + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
}

// Service exports workspaces.
type Service struct {
	db      *store.DB
	origins link.Origins
}

// New returns a Service reading db (the primary: an export is one
// consistent snapshot, never a lagging replica's); origins make the
// links' short URLs.
func New(db *store.DB, origins link.Origins) *Service { return &Service{db: db, origins: origins} }

// Workspace writes the workspace's archive to w. A workspace that does not
// exist (or is being deleted) is id.ErrNotFound, before anything is
// written.
//
// The export records workspace.exported in its own transaction, as its
// first statement: the entry commits when the archive was read whole, and
// the archive holds it. Under REPEATABLE READ, taking the audit chain's
// head after another transaction moved it is a serialization failure;
// nothing has been written then, so the export starts again (a few times).
func (s *Service) Workspace(ctx context.Context, ws uuid.UUID, w io.Writer) (Summary, error) {
	// Admitted by the Export budget (internal/budget) before a byte is
	// written, so its refusal can still be the answer.
	release, err := budget.Admit(ctx, budget.Export, ws, 1)
	if err != nil {
		return Summary{}, err
	}
	defer release()
	for attempt := 1; ; attempt++ {
		sum, started, err := s.workspace(ctx, ws, w)
		if err == nil || started || attempt == 5 || !store.IsSerializationFailure(err) {
			return sum, err
		}
	}
}

// workspace is one attempt of Workspace; started says whether anything was
// written to w.
func (s *Service) workspace(ctx context.Context, ws uuid.UUID, w io.Writer) (Summary, bool, error) {
	sum := Summary{WorkspaceID: id.Format(id.Workspace, ws), Files: map[string]int64{}}
	started := false
	err := s.db.InTxIsolated(ctx, pgx.RepeatableRead, func(tx pgx.Tx) error {
		// Timestamps in the JSON files read in UTC, whatever the server's zone.
		if _, err := tx.Exec(ctx, `SET LOCAL TimeZone = 'UTC'`); err != nil {
			return store.InterpretError(err)
		}
		err := tx.QueryRow(ctx, `SELECT name FROM workspaces WHERE id = $1 AND deleted_at IS NULL`, ws).Scan(&sum.Name)
		if err != nil {
			return store.InterpretError(err)
		}
		if err := audit.Record(ctx, tx, ws, audit.WorkspaceExported, audit.TargetOf("workspace", id.Workspace, ws), nil); err != nil {
			return err
		}
		started = true
		z := zip.NewWriter(w)
		for _, f := range jsonFiles {
			if sum.Files[f.name], err = writeJSONL(ctx, tx, z, f, ws); err != nil {
				return fmt.Errorf("export %s: %w", f.name, err)
			}
		}
		for _, f := range csvFiles {
			if sum.Files[f.name], err = s.writeCSV(ctx, tx, z, f, ws); err != nil {
				return fmt.Errorf("export %s: %w", f.name, err)
			}
		}
		return z.Close()
	})
	return sum, started, err
}

func create(z *zip.Writer, name string) (io.Writer, error) {
	return z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Now().UTC()})
}

func writeJSONL(ctx context.Context, tx pgx.Tx, z *zip.Writer, f jsonFile, ws uuid.UUID) (int64, error) {
	out, err := create(z, f.name)
	if err != nil {
		return 0, err
	}
	rows, err := tx.Query(ctx, f.sql(), ws)
	if err != nil {
		return 0, store.InterpretError(err)
	}
	defer rows.Close()
	ids := make([]*uuid.UUID, len(f.ids))
	dest := make([]any, len(f.ids)+1)
	for i := range ids {
		dest[i] = &ids[i]
	}
	var rest []byte
	dest[len(ids)] = &rest
	var n int64
	var line []byte
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, err
		}
		line = spliceIDs(line[:0], f.ids, ids, rest)
		if _, err := out.Write(line); err != nil {
			return n, err
		}
		n++
	}
	return n, store.InterpretError(rows.Err())
}

// spliceIDs writes rest (a JSON object) with the id columns in their
// external form (null stays null) added in front, and a newline.
func spliceIDs(buf []byte, cols []idCol, ids []*uuid.UUID, rest []byte) []byte {
	buf = append(buf, '{')
	for i, c := range cols {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = append(buf, c.name...)
		buf = append(buf, `":`...)
		if ids[i] == nil {
			buf = append(buf, "null"...)
		} else {
			buf = append(buf, '"')
			buf = append(buf, id.Format(c.prefix, *ids[i])...)
			buf = append(buf, '"')
		}
	}
	if body := rest[1:]; len(body) > 1 { // rest is not "{}"
		buf = append(buf, ',')
		buf = append(buf, body...)
	} else {
		buf = append(buf, '}')
	}
	return append(buf, '\n')
}

func (s *Service) writeCSV(ctx context.Context, tx pgx.Tx, z *zip.Writer, f csvFile, ws uuid.UUID) (int64, error) {
	out, err := create(z, f.name)
	if err != nil {
		return 0, err
	}
	cw := csvout.New(out)
	if err := cw.Write(f.header...); err != nil {
		return 0, err
	}
	args := []any{ws}
	if f.origins {
		args = append(args, s.origins.ShortBase, s.origins.DomainScheme())
	}
	rows, err := tx.Query(ctx, f.sql, args...)
	if err != nil {
		return 0, store.InterpretError(err)
	}
	defer rows.Close()
	cols := make([]*string, len(f.header))
	dest := make([]any, len(cols))
	for i := range cols {
		dest[i] = &cols[i]
	}
	rec := make([]string, len(cols))
	var n int64
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, err
		}
		for i, c := range cols {
			rec[i] = cell(c, f.ids[i])
		}
		if err := cw.Write(rec...); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, store.InterpretError(err)
	}
	return n, cw.Flush()
}

// cell renders one CSV value, ids in their external form (the writer
// makes every cell formula-safe).
func cell(v *string, p id.Prefix) string {
	switch {
	case v == nil:
		return ""
	case p != "":
		if u, err := uuid.Parse(*v); err == nil {
			return id.Format(p, u)
		}
	}
	return *v
}
