package webhook

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/webhook/internal/webhookdb"
)

// target is an enabled subscription as the fan-out needs it.
type target struct {
	id     uuid.UUID
	events []event.Type
}

// targets returns the workspace's enabled subscriptions, from the cache or
// (once per change) with one indexed query on db. An unsubscribed
// workspace is cached too, as an empty list: that is what makes the scan
// hot path free for it.
func (s *Service) targets(ctx context.Context, db webhookdb.DBTX, ws uuid.UUID) ([]target, error) {
	if ts, ok := s.cache.Get(ws); ok {
		return ts, nil
	}
	epoch := s.cache.Epoch()
	rows, err := webhookdb.New().WebhookSubscriptionListEnabled(ctx, db, ws)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	ts := make([]target, len(rows))
	for i, r := range rows {
		ts[i] = target{id: r.ID, events: make([]event.Type, len(r.Events))}
		for j, e := range r.Events {
			ts[i].events[j] = event.Type(e)
		}
	}
	s.cache.Put(ws, ts, epoch)
	return ts, nil
}

// Subscribed reports whether the workspace has an enabled subscription to
// t; it is the scan writer's scan.Subscriptions.
func (s *Service) Subscribed(ctx context.Context, ws uuid.UUID, t event.Type) (bool, error) {
	ts, err := s.targets(ctx, s.db.Conn(ctx), ws)
	if err != nil {
		return false, err
	}
	for _, x := range ts {
		if slices.Contains(x.events, t) {
			return true, nil
		}
	}
	return false, nil
}

// Subscribe connects the cache to subscription changes made by any
// instance.
func (s *Service) Subscribe(l *notify.Listener) {
	l.Subscribe(ChangedChannel, notify.Handler{
		Notify: func(payload string) {
			if ws, err := uuid.Parse(payload); err == nil {
				s.cache.Invalidate(ws)
			} else {
				s.cache.Reset()
			}
		},
		Reset: s.cache.Reset,
	})
}

// notifyChanged queues the NOTIFY that makes every instance reload the
// workspace's subscriptions once tx commits.
func (s *Service) notifyChanged(ctx context.Context, tx pgx.Tx, ws uuid.UUID) error {
	return store.Notify(ctx, tx, ChangedChannel, ws.String())
}

// invalidateAfterCommit drops this instance's copy at once (the NOTIFY
// reaches it a little later), once the change is durable.
func (s *Service) invalidateAfterCommit(ctx context.Context, ws uuid.UUID) {
	store.AfterCommit(ctx, func() { s.cache.Invalidate(ws) })
}
