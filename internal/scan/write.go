package scan

import (
	"bytes"
	"context"
	"time"

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

// write stores one batch in one transaction: the scans (one COPY; Fold adds
// them to the rollups and scan_count later), and scan.created events for
// human scans of subscribed workspaces. Nothing in it grows with the
// number of links.
func (r *Recorder) write(ctx context.Context, batch []Hit) (human, bots int, err error) {
	rows := make([]row, len(batch))
	for i, h := range batch {
		rows[i] = row{id: h.ID, hit: h, client: analytics.Classify(h.UserAgent), referrer: analytics.ReferrerHost(h.Referer)}
		if h.Hashed {
			rows[i].visitorHash = h.VisitorHash
		} else {
			rows[i].visitorHash = r.opts.Hasher.Hash(h.ClientIP, h.UserAgent, h.At)
		}
		if rows[i].client.Bot {
			bots++
		}
	}
	human = len(rows) - bots

	// The transaction is ambient in ctx, so a cache-miss lookup of the
	// webhook subscriptions runs on this connection too: the writer never
	// waits for a connection of the API's pool.
	err = r.opts.DB.InTxAmbient(ctx, func(ctx context.Context, tx pgx.Tx) error {
		buf := r.copyBufs.Get().(*[]byte)
		*buf = appendCopyRows((*buf)[:0], rows)
		_, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(*buf), copyScansSQL)
		r.copyBufs.Put(buf)
		if err != nil {
			return store.InterpretError(err)
		}
		return r.recordEvents(ctx, tx, rows)
	})
	return human, bots, err
}

// recordEvents writes scan.created for human scans of workspaces with a
// subscription to it, in one RecordMany call so the batch's webhook
// deliveries are enqueued together; bot scans never emit events. The
// event's link is read in this transaction, so its scan_count is as of the
// last fold (docs/scan-pipeline.md).
func (r *Recorder) recordEvents(ctx context.Context, tx pgx.Tx, rows []row) error {
	subscribed := map[uuid.UUID]bool{}
	var wanted []row
	var ids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, x := range rows {
		if x.client.Bot {
			continue
		}
		ws := x.hit.WorkspaceID
		ok, known := subscribed[ws]
		if !known {
			var err error
			if ok, err = r.opts.Subscriptions.Subscribed(ctx, ws, event.ScanCreated); err != nil {
				return err
			}
			subscribed[ws] = ok
		}
		if !ok {
			continue
		}
		wanted = append(wanted, x)
		if !seen[x.hit.LinkID] {
			seen[x.hit.LinkID] = true
			ids = append(ids, x.hit.LinkID)
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	links, err := link.ByIDs(ctx, tx, r.opts.Origins, ids)
	if err != nil {
		return err
	}
	events := make([]event.New, 0, len(wanted))
	for _, x := range wanted {
		// PostgreSQL keeps microseconds (appendCopyRows): the event says
		// what the scans list will say.
		s := Scan{ID: x.id, LinkID: x.hit.LinkID, OccurredAt: x.hit.At.Truncate(time.Microsecond), ReferrerHost: x.referrer, Device: x.client.Device, OS: x.client.OS, Browser: x.client.Browser,
			Country: x.hit.Country, Source: SourceOf(x.hit.QR), Variant: x.hit.Variant}
		events = append(events, event.New{WorkspaceID: x.hit.WorkspaceID, Type: event.ScanCreated, Data: map[string]any{"scan": s.Wire(), "link": links[x.hit.LinkID].Wire()}})
	}
	_, err = r.opts.Events.RecordMany(ctx, tx, events)
	return err
}
