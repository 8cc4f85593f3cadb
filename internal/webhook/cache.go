package webhook

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/webhook/internal/webhookdb"
)

// target is an enabled subscription as the fan-out and an attempt need it:
// the events it lists, and where and with what secrets it is sent. Every
// change of these (update, disable, delete, secret rotation, a workspace's
// deletion) NOTIFYs ChangedChannel, so every instance drops its copy.
type target struct {
	id     uuid.UUID
	events []event.Type
	url    string
	// The sealed signing secrets, opened at each attempt (signingSecrets).
	secret, previousSecret []byte
	previousExpiresAt      *time.Time
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
		ts[i] = target{
			id: r.ID, events: make([]event.Type, len(r.Events)), url: r.URL,
			secret: r.SecretCiphertext, previousSecret: r.PreviousSecretCiphertext, previousExpiresAt: r.PreviousSecretExpiresAt,
		}
		for j, e := range r.Events {
			ts[i].events[j] = event.Type(e)
		}
	}
	s.cache.Put(ws, ts, epoch)
	return ts, nil
}

// enabledTarget returns the subscription sub of workspace ws from the
// cache (loading the workspace on a miss); false when it is not enabled
// (disabled, deleted, or of another workspace).
func (s *Service) enabledTarget(ctx context.Context, ws, sub uuid.UUID) (target, bool, error) {
	ts, err := s.targets(ctx, s.db.Conn(ctx), ws)
	if err != nil {
		return target{}, false, err
	}
	for _, t := range ts {
		if t.id == sub {
			return t, true, nil
		}
	}
	return target{}, false, nil
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
