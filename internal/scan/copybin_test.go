package scan_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestCopyRowsRoundTrip writes hits through the recorder's own binary COPY
// and reads every column back (a batch that PostgreSQL refused would
// find none): ids, the time to the microsecond (before
// and after 2000, where the encoding counts from), a NULL and a non-ASCII
// referrer host, the classification and the visitor hash.
func TestCopyRowsRoundTrip(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	link := insertLink(t, pool, tn.WorkspaceID, "copy1")
	hasher, _ := analytics.NewVisitorHasher(bytes.Repeat([]byte{7}, 32))
	rec := scan.NewRecorder(scan.Options{DB: store.NewDB(pool), Log: slog.New(slog.DiscardHandler), Hasher: hasher})
	go rec.Run()

	ip := netip.MustParseAddr("203.0.113.9")
	hits := []scan.Hit{
		{At: time.Date(2026, 11, 25, 10, 11, 12, 345678999, time.UTC), UserAgent: iPhone, Referer: "https://Bücher.Example/x?y", ClientIP: ip},
		{At: time.Date(2026, 11, 25, 10, 11, 13, 0, time.FixedZone("x", 3600)), UserAgent: googlebot, ClientIP: ip},
		// Header values may carry any byte; PostgreSQL refuses text that is
		// not UTF-8, and would refuse the whole batch with it.
		{At: time.Date(2026, 11, 25, 10, 11, 14, 0, time.UTC), UserAgent: iPhone, Referer: "https://\xff\xfe.example/", ClientIP: ip},
		{At: time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC), UserAgent: "", Referer: "android-app://x", ClientIP: netip.MustParseAddr("2001:db8::1")},
	}
	for _, h := range hits {
		h.LinkID, h.WorkspaceID = link, tn.WorkspaceID
		if err := rec.Record(context.Background(), h); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	for _, h := range hits {
		var (
			ws, lk              uuid.UUID
			at                  time.Time
			referrer            *string
			device, os, browser string
			bot, xidSet         bool
			visitorHash         []byte
		)
		err := pool.QueryRow(context.Background(), `
			SELECT workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash, xid IS NOT NULL
			FROM scans WHERE link_id = $1 AND occurred_at = $2`, link, h.At.Truncate(time.Microsecond)).Scan(&ws, &lk, &at, &referrer, &device, &os, &browser, &bot, &visitorHash, &xidSet)
		if err != nil {
			t.Fatalf("scan %v: %v", h.At, err)
		}
		client := analytics.Classify(h.UserAgent)
		wantHash := hasher.Hash(h.ClientIP, h.UserAgent, h.At)
		wantRef := analytics.ReferrerHost(h.Referer)
		switch {
		case ws != tn.WorkspaceID || lk != link:
			t.Errorf("scan %v: workspace %v, link %v", h.At, ws, lk)
		case !at.Equal(h.At.Truncate(time.Microsecond)):
			t.Errorf("scan %v: occurred_at %v, want %v", h.At, at, h.At.Truncate(time.Microsecond))
		case (referrer == nil) != (wantRef == nil) || referrer != nil && *referrer != *wantRef:
			t.Errorf("scan %v: referrer_host %v, want %v", h.At, referrer, wantRef)
		case device != client.Device || os != client.OS || browser != client.Browser || bot != client.Bot:
			t.Errorf("scan %v: %s/%s/%s bot=%v, want %+v", h.At, device, os, browser, bot, client)
		case !bytes.Equal(visitorHash, wantHash[:]):
			t.Errorf("scan %v: visitor hash %x, want %x", h.At, visitorHash, wantHash)
		case !xidSet:
			t.Errorf("scan %v: xid not set by its default", h.At)
		}
	}
	if ref := analytics.ReferrerHost(hits[0].Referer); ref == nil || *ref != "bücher.example" {
		t.Errorf("the non-ASCII referrer is not exercised: %v", ref)
	}
	if ref := analytics.ReferrerHost(hits[2].Referer); ref != nil {
		t.Errorf("a referrer host that is not UTF-8 is kept: %q", *ref)
	}
}
