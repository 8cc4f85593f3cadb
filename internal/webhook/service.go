package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/epochcache"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/priority"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/webhook/internal/webhookdb"
)

// DefaultTimeout is how long a receiver has to answer (docs/api.md#webhooks).
const DefaultTimeout = 10 * time.Second

// maxCachedWorkspaces bounds the subscription cache; beyond it an arbitrary
// workspace is evicted (it costs one indexed query to come back).
const maxCachedWorkspaces = 100000

// JobInserter enqueues River jobs on a caller's transaction;
// *river.Client[pgx.Tx] is one. An insert-only client (no workers, never
// started) is enough, but the app gives the one that also works the jobs.
type JobInserter interface {
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Options configure a Service.
type Options struct {
	DB  *store.DB
	Log *slog.Logger
	// Key encrypts signing secrets at rest: 32 bytes, derived from
	// LINKQR_SECRET_KEY (config.DeriveKey(key, "webhook-secrets")).
	Key []byte
	// AllowPrivate is LINKQR_WEBHOOK_ALLOW_PRIVATE: http URLs and
	// loopback/private addresses are accepted (development, tests).
	AllowPrivate bool
	// Resolver resolves webhook hosts, at creation and at connect time;
	// nil means net.DefaultResolver.
	Resolver Resolver
	// Now is the clock of signatures, rotation overlaps, retry times and
	// auto-disable; nil means time.Now.
	Now func() time.Time
	// Timeout bounds one delivery attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// OnAttempt, when set, is told the status ("succeeded" or "failed") and
	// the HTTP round-trip time of every recorded attempt: the metrics hook.
	OnAttempt func(status string, took time.Duration)
	// Pace, when set, paces attempts while the redirect is busy (one unit
	// an attempt): deliveries yield to it and catch up afterwards.
	Pace *priority.Budget
}

// Service manages a deployment's webhook subscriptions and delivers to them.
type Service struct {
	db      *store.DB
	log     *slog.Logger
	sealer  *sealer
	guard   *Guard
	now     func() time.Time
	timeout time.Duration
	client  *http.Client
	cache   *epochcache.Cache[uuid.UUID, []target]
	jobs    JobInserter
	onTry   func(status string, took time.Duration)
	pace    *priority.Budget
	// successes records the automatic schedule's successful attempts.
	successes successBatcher
}

// NewService returns a Service; call UseJobs before events are recorded
// and Subscribe before the notification listener runs.
func NewService(o Options) (*Service, error) {
	sl, err := newSealer(o.Key)
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	g := &Guard{AllowPrivate: o.AllowPrivate, Resolver: o.Resolver}
	s := &Service{
		db: o.DB, log: o.Log, sealer: sl, guard: g, now: o.Now, timeout: o.Timeout,
		client: newHTTPClient(g), onTry: o.OnAttempt, pace: o.Pace,
		cache: epochcache.New[uuid.UUID, []target](maxCachedWorkspaces),
	}
	s.successes.s = s
	return s, nil
}

// UseJobs sets the River client that fan-out and retries insert jobs with.
// It is separate from NewService because the client needs the Worker,
// which needs the Service.
func (s *Service) UseJobs(j JobInserter) { s.jobs = j }

// Create validates in, stores the subscription with a new signing secret
// and returns it; the result's Secret is the only time it is shown.
func (s *Service) Create(ctx context.Context, ws uuid.UUID, in CreateInput) (Resource, error) {
	if err := s.ValidateCreate(ctx, in); err != nil {
		return Resource{}, err
	}
	hookID, secret := id.New(), newSecret()
	createdBy := audit.ActorFrom(ctx).Label()
	var row webhookdb.WebhookSubscription
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, err = webhookdb.New().WebhookSubscriptionCreate(ctx, tx, webhookdb.WebhookSubscriptionCreateParams{
			ID: hookID, WorkspaceID: ws, URL: in.URL, Events: in.Events, Description: text.Ptr(in.Description),
			SecretCiphertext: s.sealer.seal(hookID, secret), CreatedBy: &createdBy,
		})
		if err != nil {
			return store.InterpretError(err)
		}
		if err := audit.Record(ctx, tx, ws, audit.WebhookCreated, auditTarget(hookID), audit.Changes{
			"url": audit.Change(nil, row.URL), "events": audit.Change(nil, row.Events), "description": audit.Change(nil, row.Description),
		}); err != nil {
			return err
		}
		return s.notifyChanged(ctx, tx, ws)
	})
	if err != nil {
		return Resource{}, err
	}
	s.invalidateAfterCommit(ctx, ws)
	res := toResource(row)
	res.Secret = secret
	return res, nil
}

// Get returns a subscription of the workspace, or id.ErrNotFound.
func (s *Service) Get(ctx context.Context, ws, id uuid.UUID) (Resource, error) {
	row, err := webhookdb.New().WebhookSubscriptionGetByID(ctx, s.db.Conn(ctx), webhookdb.WebhookSubscriptionGetByIDParams{ID: id, WorkspaceID: ws})
	if err != nil {
		return Resource{}, store.InterpretError(err)
	}
	return toResource(row), nil
}

// List returns up to limit subscriptions older than before (nil: the
// newest), and whether more follow.
func (s *Service) List(ctx context.Context, ws uuid.UUID, before *uuid.UUID, limit int) ([]Resource, bool, error) {
	rows, err := webhookdb.New().WebhookSubscriptionListByWorkspace(ctx, s.db.Conn(ctx), webhookdb.WebhookSubscriptionListByWorkspaceParams{
		WorkspaceID: ws, Before: before, Limit: int32(limit + 1),
	})
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	out, more := store.Page(rows, limit, toResource)
	return out, more, nil
}

// Update applies a PATCH. Setting status "enabled" re-enables a disabled
// subscription and clears its failure history; "disabled" stops deliveries
// (queued ones are dropped when they come up).
func (s *Service) Update(ctx context.Context, ws, id uuid.UUID, in UpdateInput) (Resource, error) {
	if err := s.ValidateUpdate(ctx, in); err != nil {
		return Resource{}, err
	}
	var row webhookdb.WebhookSubscription
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := webhookdb.New()
		old, err := q.WebhookSubscriptionGetByIDForUpdate(ctx, tx, webhookdb.WebhookSubscriptionGetByIDForUpdateParams{ID: id, WorkspaceID: ws})
		if err != nil {
			return store.InterpretError(err)
		}
		p := webhookdb.WebhookSubscriptionUpdateParams{
			ID: id, WorkspaceID: ws, URL: old.URL, Events: old.Events, Description: old.Description,
			Status: old.Status, DisabledReason: old.DisabledReason, FailingSince: old.FailingSince,
		}
		if in.URL.Set {
			p.URL = in.URL.Value
		}
		if in.Events.Set {
			p.Events = in.Events.Value
		}
		if in.Description.Set {
			p.Description = text.Ptr(in.Description.Value)
		}
		if in.Status.Set && in.Status.Value != old.Status {
			p.Status = in.Status.Value
			if p.Status == StatusEnabled {
				p.DisabledReason, p.FailingSince = nil, nil
			} else {
				reason := "disabled by the workspace"
				p.DisabledReason = &reason
			}
		}
		if row, err = q.WebhookSubscriptionUpdate(ctx, tx, p); err != nil {
			return store.InterpretError(err)
		}
		if err := recordUpdate(ctx, tx, old, row); err != nil {
			return err
		}
		return s.notifyChanged(ctx, tx, ws)
	})
	if err != nil {
		return Resource{}, err
	}
	s.invalidateAfterCommit(ctx, ws)
	return toResource(row), nil
}

// Delete removes a subscription and its delivery history; its queued
// deliveries are dropped when they come up.
func (s *Service) Delete(ctx context.Context, ws, sub uuid.UUID) error {
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		n, err := webhookdb.New().WebhookSubscriptionDelete(ctx, tx, webhookdb.WebhookSubscriptionDeleteParams{ID: sub, WorkspaceID: ws})
		if err != nil {
			return store.InterpretError(err)
		}
		if n == 0 {
			return id.ErrNotFound
		}
		if err := audit.Record(ctx, tx, ws, audit.WebhookDeleted, auditTarget(sub), nil); err != nil {
			return err
		}
		return s.notifyChanged(ctx, tx, ws)
	})
	if err != nil {
		return err
	}
	s.invalidateAfterCommit(ctx, ws)
	return nil
}

// RotateSecret gives the subscription a new signing secret, returned once
// in the result. The previous secret keeps signing alongside it (a second
// v1 entry) for SecretOverlap, so receivers can switch without a gap.
func (s *Service) RotateSecret(ctx context.Context, ws, id uuid.UUID) (Resource, error) {
	secret := newSecret()
	var row webhookdb.WebhookSubscription
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, err = webhookdb.New().WebhookSubscriptionRotateSecret(ctx, tx, webhookdb.WebhookSubscriptionRotateSecretParams{
			ID: id, WorkspaceID: ws, PreviousExpiresAt: s.now().Add(SecretOverlap).UTC(),
			SecretCiphertext: s.sealer.seal(id, secret),
		})
		if err != nil {
			return store.InterpretError(err)
		}
		// Only that it happened: never the secret.
		if err := audit.Record(ctx, tx, ws, audit.WebhookSecretRotated, auditTarget(id), nil); err != nil {
			return err
		}
		// The cache holds the sealed secrets attempts sign with.
		return s.notifyChanged(ctx, tx, ws)
	})
	if err != nil {
		return Resource{}, err
	}
	s.invalidateAfterCommit(ctx, ws)
	res := toResource(row)
	res.Secret = secret
	return res, nil
}

// signingSecrets returns the secrets a delivery at now is signed with:
// the current one, then the previous one while its overlap lasts.
func (s *Service) signingSecrets(t target, now time.Time) ([]string, error) {
	cur, err := s.sealer.open(t.id, t.secret)
	if err != nil {
		return nil, err
	}
	out := []string{cur}
	if t.previousSecret != nil && t.previousExpiresAt != nil && now.Before(*t.previousExpiresAt) {
		prev, err := s.sealer.open(t.id, t.previousSecret)
		if err != nil {
			return nil, err
		}
		out = append(out, prev)
	}
	return out, nil
}

// ListDeliveries returns up to limit delivery attempts of a subscription
// older than before (nil: the newest), and whether more follow.
func (s *Service) ListDeliveries(ctx context.Context, ws, id uuid.UUID, before *uuid.UUID, limit int) ([]Delivery, bool, error) {
	if _, err := s.Get(ctx, ws, id); err != nil {
		return nil, false, err
	}
	rows, err := webhookdb.New().WebhookDeliveryListBySubscription(ctx, s.db.Conn(ctx), webhookdb.WebhookDeliveryListBySubscriptionParams{
		SubscriptionID: id, WorkspaceID: ws, Before: before, Limit: int32(limit + 1),
	})
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	out, more := store.Page(rows, limit, toDelivery)
	return out, more, nil
}

// lockEnabled locks the workspace's subscription for the transaction, so
// a concurrent disable or delete waits; a disabled one is ErrDisabled.
func lockEnabled(ctx context.Context, tx pgx.Tx, ws, subID uuid.UUID) (webhookdb.WebhookSubscription, error) {
	sub, err := webhookdb.New().WebhookSubscriptionGetByIDForUpdate(ctx, tx, webhookdb.WebhookSubscriptionGetByIDForUpdateParams{ID: subID, WorkspaceID: ws})
	if err != nil {
		return sub, store.InterpretError(err)
	}
	if sub.Status != StatusEnabled {
		return sub, ErrDisabled
	}
	return sub, nil
}

// RetryDelivery queues one more attempt of a delivery's event now, outside
// the automatic schedule: it returns the new attempt as a pending delivery,
// which the worker completes. A disabled subscription gives ErrDisabled.
func (s *Service) RetryDelivery(ctx context.Context, ws, subID, deliveryID uuid.UUID) (Delivery, error) {
	if s.jobs == nil {
		return Delivery{}, errors.New("webhook: no job client configured")
	}
	var row webhookdb.WebhookDelivery
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := webhookdb.New()
		if _, err := lockEnabled(ctx, tx, ws, subID); err != nil {
			return err
		}
		orig, err := q.WebhookDeliveryGetByID(ctx, tx, webhookdb.WebhookDeliveryGetByIDParams{ID: deliveryID, SubscriptionID: subID, WorkspaceID: ws})
		if err != nil {
			return store.InterpretError(err)
		}
		attempt, err := q.WebhookDeliveryNextAttempt(ctx, tx, webhookdb.WebhookDeliveryNextAttemptParams{SubscriptionID: subID, EventID: orig.EventID})
		if err != nil {
			return store.InterpretError(err)
		}
		now := s.now().UTC()
		row, err = q.WebhookDeliveryInsert(ctx, tx, webhookdb.WebhookDeliveryInsertParams{
			ID: id.New(), WorkspaceID: ws, SubscriptionID: subID, EventID: orig.EventID,
			EventType: orig.EventType, Attempt: attempt, Status: DeliveryPending, CreatedAt: now, NextAttemptAt: &now,
		})
		if err != nil {
			return store.InterpretError(err)
		}
		args := DeliverArgs{SubscriptionID: subID, WorkspaceID: ws, EventID: orig.EventID, DeliveryID: &row.ID}
		_, err = s.jobs.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: args, InsertOpts: &river.InsertOpts{Queue: Queue, MaxAttempts: 1}}})
		if err != nil {
			return fmt.Errorf("enqueue webhook retry: %w", err)
		}
		return nil
	})
	if err != nil {
		return Delivery{}, err
	}
	return toDelivery(row), nil
}

// auditTarget is a subscription as an audit entry names it.
func auditTarget(sub uuid.UUID) audit.Target {
	return audit.TargetOf("webhook", id.Webhook, sub)
}

// recordUpdate writes the audit entries of a PATCH in tx: webhook.disabled
// when it disabled the subscription, webhook.updated with every other
// field it changed (re-enabling included).
func recordUpdate(ctx context.Context, tx pgx.Tx, old, cur webhookdb.WebhookSubscription) error {
	changes := audit.Changes{}
	if old.URL != cur.URL {
		changes["url"] = audit.Change(old.URL, cur.URL)
	}
	if !slices.Equal(old.Events, cur.Events) {
		changes["events"] = audit.Change(old.Events, cur.Events)
	}
	if !equalPtr(old.Description, cur.Description) {
		changes["description"] = audit.Change(old.Description, cur.Description)
	}
	disabled := old.Status != cur.Status && cur.Status == StatusDisabled
	if old.Status != cur.Status && !disabled {
		changes["status"] = audit.Change(old.Status, cur.Status)
	}
	if disabled {
		if err := audit.Record(ctx, tx, cur.WorkspaceID, audit.WebhookDisabled, auditTarget(cur.ID), audit.Changes{
			"status": audit.Change(old.Status, cur.Status), "disabled_reason": audit.Change(nil, cur.DisabledReason),
		}); err != nil {
			return err
		}
	}
	if len(changes) == 0 {
		return nil
	}
	return audit.Record(ctx, tx, cur.WorkspaceID, audit.WebhookUpdated, auditTarget(cur.ID), changes)
}

func equalPtr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
