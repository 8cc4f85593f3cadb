package retention

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/retention/internal/retentiondb"
	"github.com/linkqr/linkqr/internal/webhook"
)

// webhooks deletes delivery attempts older than Policy.Events, then the
// events older than it that nothing needs any more: no delivery row left
// (deleting an event would cascade to them) and no unfinished delivery
// job, whose args name the event: its attempts' rows reference it, and a
// job without the body in its args (a manual retry) renders it from the
// row.
func (r *run) webhooks(ctx context.Context) error {
	before := r.now.Add(-r.p.Policy.Events)
	idBelow := uuidV7Floor(before)
	err := r.batches(ctx, "webhook_deliveries", r.budget(), func(ctx context.Context, lim int32) (int64, error) {
		return retentiondb.New().RetentionWebhookDeliveriesBefore(ctx, r.p.DB.Conn(ctx), retentiondb.RetentionWebhookDeliveriesBeforeParams{
			IDBelow: idBelow, Before: before, Lim: lim,
		})
	})
	if err != nil {
		return err
	}
	return r.batches(ctx, "events", r.budget(), func(ctx context.Context, lim int32) (int64, error) {
		tag, err := r.p.DB.Conn(ctx).Exec(ctx, eventsBeforeSQL, idBelow, before, lim, webhook.Queue, webhook.DeliverArgs{}.Kind())
		return tag.RowsAffected(), err
	})
}

// eventsBeforeSQL deletes at most $3 events created before $2 (ids below
// $1, through the primary key: event ids are UUIDv7). It is not an sqlc
// query because it reads River's job table, which River's own migrations
// create, outside the schema sqlc reads; the unfinished jobs of the
// webhooks queue are found through River's (state, queue, …) index, as
// webhook.QueueStats finds them.
const eventsBeforeSQL = `
DELETE FROM events WHERE id IN (
    SELECT e.id FROM events e
    WHERE e.id < $1 AND e.created_at < $2
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
      AND NOT EXISTS (
          SELECT 1 FROM river_job j
          WHERE j.state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
            AND j.queue = $4 AND j.kind = $5 AND j.args->>'event_id' = e.id::text)
    ORDER BY e.id LIMIT $3)`

// uuidV7Floor is the lowest UUIDv7 of t's millisecond: every UUIDv7 made
// before t sorts below it (id.New makes the ids of events and
// deliveries), so "made before t" is a range of the primary key.
func uuidV7Floor(t time.Time) uuid.UUID {
	var id uuid.UUID
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(id[:6], ms[2:])
	return id
}
