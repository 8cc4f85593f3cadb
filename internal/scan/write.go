package scan

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/store"
)

// row is a classified hit, ready for COPY. The client IP is used for the
// visitor hash here and then forgotten.
type row struct {
	id          uuid.UUID
	hit         Hit
	client      analytics.Client
	referrer    *string
	visitorHash [16]byte
}

var scanColumns = []string{"id", "workspace_id", "link_id", "occurred_at", "referrer_host", "device", "os", "browser", "bot", "visitor_hash"}

// write stores one batch in one transaction: the scans (COPY), the
// analytics rollups, each link's scan_count and last_scanned_at, and
// scan.created events for human scans of subscribed workspaces.
func (r *Recorder) write(ctx context.Context, batch []Hit) (human, bots int, err error) {
	rows := make([]row, len(batch))
	for i, h := range batch {
		rows[i] = row{id: store.NewID(), hit: h, client: analytics.Classify(h.UserAgent), referrer: analytics.ReferrerHost(h.Referer)}
		rows[i].visitorHash = r.opts.Hasher.Hash(h.ClientIP, h.UserAgent, h.At)
		if rows[i].client.Bot {
			bots++
		}
	}
	human = len(rows) - bots

	// The transaction is ambient in ctx, so a cache-miss lookup of the
	// webhook subscriptions runs on this connection too: the writer never
	// waits for a connection of the API's pool.
	err = r.opts.DB.InTxAmbient(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"scans"}, scanColumns, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			x := rows[i]
			return []any{x.id, x.hit.WorkspaceID, x.hit.LinkID, x.hit.At.UTC(), x.referrer, x.client.Device, x.client.OS, x.client.Browser, x.client.Bot, x.visitorHash[:]}, nil
		}))
		if err != nil {
			return store.InterpretError(err)
		}
		if err := writeRollups(ctx, tx, rows); err != nil {
			return err
		}
		links, err := r.countHumans(ctx, tx, rows)
		if err != nil {
			return err
		}
		return r.recordEvents(ctx, tx, rows, links)
	})
	return human, bots, err
}

// countHumans adds each link's human scans and returns the updated links.
func (r *Recorder) countHumans(ctx context.Context, tx pgx.Tx, rows []row) (map[uuid.UUID]link.Link, error) {
	counts := map[uuid.UUID]link.ScanCount{}
	for _, x := range rows {
		if x.client.Bot {
			continue
		}
		c := counts[x.hit.LinkID]
		c.Scans++
		if x.hit.At.After(c.LastAt) {
			c.LastAt = x.hit.At
		}
		counts[x.hit.LinkID] = c
	}
	return link.AddScans(ctx, tx, r.opts.ShortBase, counts)
}

// recordEvents writes scan.created for human scans of workspaces with a
// subscription to it, in one RecordMany call so the batch's webhook
// deliveries are enqueued together; bot scans never emit events.
func (r *Recorder) recordEvents(ctx context.Context, tx pgx.Tx, rows []row, links map[uuid.UUID]link.Link) error {
	subscribed := map[uuid.UUID]bool{}
	var events []event.New
	for _, x := range rows {
		if x.client.Bot {
			continue
		}
		ws := x.hit.WorkspaceID
		ok, seen := subscribed[ws]
		if !seen {
			var err error
			if ok, err = r.opts.Subscriptions.Subscribed(ctx, ws, event.ScanCreated); err != nil {
				return err
			}
			subscribed[ws] = ok
		}
		if !ok {
			continue
		}
		s := Scan{ID: x.id, LinkID: x.hit.LinkID, OccurredAt: x.hit.At, ReferrerHost: x.referrer, Device: x.client.Device, OS: x.client.OS, Browser: x.client.Browser}
		events = append(events, event.New{WorkspaceID: ws, Type: event.ScanCreated, Data: map[string]any{"scan": s.Wire(), "link": links[x.hit.LinkID].Wire()}})
	}
	_, err := r.opts.Events.RecordMany(ctx, tx, events)
	return err
}
