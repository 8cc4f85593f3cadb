package testkit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
)

// The factory writes rows straight into the database, so a test states
// exactly the data it needs without going through the API (River-style:
// one options struct per fixture, where a zero field means a sensible
// default).

// LinkOpts describe a link row; WorkspaceID is required.
type LinkOpts struct {
	WorkspaceID uuid.UUID
	Code        string // default: a unique code
	TargetURL   string // default: https://example.com/<code>
	Status      string // default: active
	ExpiresAt   time.Time
	Deleted     bool
}

// Link inserts a link and returns its id.
func Link(t testing.TB, pool *pgxpool.Pool, o *LinkOpts) uuid.UUID {
	t.Helper()
	if o.WorkspaceID == uuid.Nil {
		t.Fatal("testkit.Link: WorkspaceID is required")
	}
	if o.Code == "" {
		o.Code = fmt.Sprintf("fx%d%s", fixtureSeq.Add(1), randomHex(3))
	}
	if o.TargetURL == "" {
		o.TargetURL = "https://example.com/" + o.Code
	}
	if o.Status == "" {
		o.Status = "active"
	}
	var expires, deleted *time.Time
	if !o.ExpiresAt.IsZero() {
		expires = &o.ExpiresAt
	}
	if o.Deleted {
		now := time.Now()
		deleted = &now
	}
	linkID := id.New()
	_, err := pool.Exec(context.Background(),
		`INSERT INTO links (id, workspace_id, code, target_url, status, expires_at, deleted_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		linkID, o.WorkspaceID, o.Code, o.TargetURL, o.Status, expires, deleted)
	if err != nil {
		t.Fatalf("testkit.Link: %v", err)
	}
	return linkID
}

// ScanOpts describe a scan row; WorkspaceID and LinkID are required.
type ScanOpts struct {
	WorkspaceID  uuid.UUID
	LinkID       uuid.UUID
	At           time.Time // default: now
	Device       string    // default: mobile
	OS           string    // default: iOS
	Browser      string    // default: Safari
	ReferrerHost string    // default: none (a direct scan)
	Bot          bool
	Visitor      byte // the visitor: its hash is this byte and the UTC day, as real hashes are keyed per day
}

// Scan inserts a scan as bulk-loaded (no xid: no fold takes it) and returns
// its id, and rebuilds the link's analytics
// rollups (and scan_count) from its raw scans so that reports include it.
func Scan(t testing.TB, pool *pgxpool.Pool, o *ScanOpts) uuid.UUID {
	t.Helper()
	if o.WorkspaceID == uuid.Nil || o.LinkID == uuid.Nil {
		t.Fatal("testkit.Scan: WorkspaceID and LinkID are required")
	}
	if o.At.IsZero() {
		o.At = time.Now()
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.Device, "mobile")
	def(&o.OS, "iOS")
	def(&o.Browser, "Safari")
	var referrer *string
	if o.ReferrerHost != "" {
		referrer = &o.ReferrerHost
	}
	scanID := id.New()
	_, err := pool.Exec(context.Background(),
		`INSERT INTO scans (id, workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash, xid)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL)`,
		scanID, o.WorkspaceID, o.LinkID, o.At, referrer, o.Device, o.OS, o.Browser, o.Bot, append([]byte{o.Visitor}, o.At.UTC().Format("20060102")...))
	if err != nil {
		t.Fatalf("testkit.Scan: %v", err)
	}
	if _, err := scan.RebuildRollups(context.Background(), store.NewDB(pool), &o.LinkID); err != nil {
		t.Fatalf("testkit.Scan: rebuilding rollups: %v", err)
	}
	return scanID
}
