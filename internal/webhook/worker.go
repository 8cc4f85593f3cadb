package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/webhook/internal/webhookdb"
)

// retryDelays are the waits after each failed attempt (docs/api.md#webhooks:
// attempts at +0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h).
var retryDelays = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// maxPaceWait bounds how long one attempt waits for the pace (see
// Options.Pace) before it goes ahead anyway.
const maxPaceWait = 5 * time.Second

// MaxAttempts is the number of automatic attempts of one event for one
// subscription; after the last the delivery stays failed.
var MaxAttempts = len(retryDelays) + 1

// RetryDelay is the wait after failed attempt number attempt (1-based) of
// job jobID: the schedule's delay with ±10 % jitter. The jitter is derived
// from the job and attempt rather than drawn, so the worker (which records
// next_attempt_at) and River (which asks NextRetry) agree on it, and a
// burst of failures still spreads out.
func RetryDelay(jobID int64, attempt int) time.Duration {
	i := min(max(attempt, 1), len(retryDelays)) - 1
	frac := float64(splitmix(splitmix(uint64(jobID))^uint64(attempt))>>11) / (1 << 53) // [0, 1)
	return time.Duration(math.Round(float64(retryDelays[i]) * (0.9 + 0.2*frac)))
}

// splitmix is SplitMix64's finaliser: a cheap, well-mixed hash of n.
func splitmix(n uint64) uint64 {
	n += 0x9e3779b97f4a7c15
	n = (n ^ (n >> 30)) * 0xbf58476d1ce4e5b9
	n = (n ^ (n >> 27)) * 0x94d049bb133111eb
	return n ^ (n >> 31)
}

// Worker delivers DeliverArgs jobs. River runs each job on exactly one
// instance at a time; a failed attempt returns an error and River
// schedules the next one at NextRetry.
type Worker struct {
	river.WorkerDefaults[DeliverArgs]
	svc *Service
}

// Worker returns the delivery worker to register with River.
func (s *Service) Worker() *Worker { return &Worker{svc: s} }

// Timeout leaves room beyond the HTTP timeout for the database writes.
func (w *Worker) Timeout(*river.Job[DeliverArgs]) time.Duration {
	return w.svc.timeout + 30*time.Second
}

// NextRetry is the schedule of docs/api.md#webhooks, from the service's clock.
func (w *Worker) NextRetry(job *river.Job[DeliverArgs]) time.Time {
	return w.svc.nextAttemptAt(job.JobRow)
}

func (s *Service) nextAttemptAt(job *rivertype.JobRow) time.Time {
	// Microseconds: what PostgreSQL stores, so the row and River agree exactly.
	return s.now().Add(RetryDelay(job.ID, job.Attempt)).UTC().Truncate(time.Microsecond)
}

// Work makes one attempt and records it as one delivery row. On the
// automatic schedule's success path its own database work is a share of
// one statement: the attempt reads nothing (the subscription comes from
// the cache, the event's body from the job's args, the attempt number from
// River's count of attempts), and the success is written by the batcher
// together with the other workers' (recordSuccesses); River fetches and
// completes jobs in batches around it.
//
// The record and River's job state are two commits, deliberately: River's
// JobCompleteTx would put them in one, but at the price of a transaction
// (BEGIN, the job's UPDATE, COMMIT) per attempt where River's completer
// updates dozens of jobs with one statement. Work returns only once its
// record has committed, so River never completes an unrecorded attempt;
// between the two commits only a crash can intervene, and it leaves the
// job running: River rescues it and the event is sent again as the next
// attempt, which at-least-once delivery allows (receivers de-duplicate by
// event id). Nothing is lost, and no attempt is recorded without having
// been sent.
func (w *Worker) Work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	s, a := w.svc, job.Args
	// While the redirect is busy, attempts start at the pace's rate. The
	// wait is bounded, so every worker still makes progress; a cancelled
	// wait (shutdown) leaves the job to River, recording nothing.
	if _, err := s.pace.Acquire(ctx, 1, maxPaceWait); err != nil {
		return err
	}
	at, err := s.attemptOf(ctx, job.JobRow, a)
	if err != nil || at == nil {
		return err
	}
	secrets, err := s.signingSecrets(at.sub, s.now())
	if err != nil {
		return river.JobCancel(err) // the key changed: no attempt could ever be signed
	}
	out := s.post(ctx, at.sub.url, at.body, at.eventID, at.number, secrets)
	if ctx.Err() != nil {
		// Shutdown (or the job's own timeout): nothing is recorded and
		// River makes the job available again.
		return ctx.Err()
	}
	disabled, err := s.record(ctx, job.JobRow, a, at.number, out)
	switch {
	case err != nil:
		return err
	case out.err == nil:
		return nil
	case disabled:
		return river.JobCancel(out.err)
	default:
		return out.err
	}
}

// attempt is what one run of a delivery job sends.
type attempt struct {
	sub     target
	body    []byte // the event envelope, compact JSON
	eventID string // Service-Event-Id
	number  int32  // Service-Delivery-Attempt
}

// attemptOf is what this run of the job sends. A job of the automatic
// schedule that carries its body reads nothing while its subscription is
// cached and enabled: the attempt number is River's count on the first
// attempt (no row of this event and subscription can exist before it) and
// one more than those recorded on a later one (a manual retry in between
// takes a number too). Anything else — a manual retry, a job without its
// body, a subscription the cache does not hold enabled — is read from the
// database (loadAttempt), which also tells a deleted subscription from a
// disabled one.
func (s *Service) attemptOf(ctx context.Context, job *rivertype.JobRow, a DeliverArgs) (*attempt, error) {
	if a.Body == "" || a.DeliveryID != nil {
		return s.loadAttempt(ctx, a)
	}
	t, ok, err := s.enabledTarget(ctx, a.WorkspaceID, a.SubscriptionID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return s.loadAttempt(ctx, a)
	}
	number := int32(1)
	if job.Attempt > 1 {
		number, err = webhookdb.New().WebhookDeliveryNextAttempt(ctx, s.db.Conn(ctx), webhookdb.WebhookDeliveryNextAttemptParams{
			SubscriptionID: a.SubscriptionID, EventID: a.EventID,
		})
		if err != nil {
			return nil, store.InterpretError(err)
		}
	}
	return &attempt{sub: t, body: []byte(a.Body), eventID: id.Format(id.Event, a.EventID), number: number}, nil
}

// loadAttempt reads the subscription, the event and the attempt number
// with one query (WebhookAttemptLoad); a manual retry also reads its
// pending row. A nil attempt with a nil error means there is nothing to
// send: a manual retry completed already. The attempt number is the
// pending row's for a manual retry, else one more than the attempts
// recorded for this event and subscription.
func (s *Service) loadAttempt(ctx context.Context, a DeliverArgs) (*attempt, error) {
	row, err := webhookdb.New().WebhookAttemptLoad(ctx, s.db.Conn(ctx), webhookdb.WebhookAttemptLoadParams{
		EventID: a.EventID, SubscriptionID: a.SubscriptionID, WorkspaceID: a.WorkspaceID,
	})
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return nil, river.JobCancel(errors.New("webhook subscription was deleted"))
	} else if err != nil {
		return nil, err
	}
	sub := row.WebhookSubscription
	if sub.Status != StatusEnabled {
		if a.DeliveryID != nil {
			if err := s.completePendingAsDisabled(ctx, *a.DeliveryID); err != nil {
				return nil, err
			}
		}
		return nil, river.JobCancel(ErrDisabled)
	}
	if row.EventType == nil || row.EventCreatedAt == nil {
		return nil, river.JobCancel(errors.New("event no longer exists"))
	}
	number := row.NextAttempt
	if a.DeliveryID != nil {
		d, err := webhookdb.New().WebhookDeliveryGetByID(ctx, s.db.Conn(ctx), webhookdb.WebhookDeliveryGetByIDParams{ID: *a.DeliveryID, SubscriptionID: a.SubscriptionID, WorkspaceID: a.WorkspaceID})
		if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
			return nil, river.JobCancel(errors.New("pending delivery no longer exists"))
		} else if err != nil {
			return nil, err
		}
		if d.Status != DeliveryPending {
			return nil, nil
		}
		number = d.Attempt
	}
	env := event.EnvelopeOf(a.EventID, a.WorkspaceID, event.Type(*row.EventType), *row.EventCreatedAt, row.EventData)
	body, err := json.Marshal(env)
	if err != nil {
		return nil, river.JobCancel(fmt.Errorf("encode event: %w", err))
	}
	t := target{
		id: sub.ID, url: sub.URL, secret: sub.SecretCiphertext,
		previousSecret: sub.PreviousSecretCiphertext, previousExpiresAt: sub.PreviousSecretExpiresAt,
	}
	return &attempt{sub: t, body: body, eventID: env.ID, number: number}, nil
}

// record writes the attempt's delivery row and the subscription's health
// atomically: a success of the automatic schedule through the batcher
// (one statement with other workers' successes), anything else in one
// transaction (recordInTx).
func (s *Service) record(ctx context.Context, job *rivertype.JobRow, a DeliverArgs, attempt int32, out outcome) (disabled bool, err error) {
	now := s.now().UTC()
	if out.err == nil && a.DeliveryID == nil {
		err = s.successes.record(ctx, successOf(a, attempt, out, now))
	} else {
		disabled, err = s.recordInTx(ctx, job, a, attempt, out, now)
	}
	if err == nil && s.onTry != nil {
		if out.err == nil {
			s.onTry(DeliverySucceeded, out.duration)
		} else {
			s.onTry(DeliveryFailed, out.duration)
		}
	}
	if err == nil && disabled {
		s.invalidateAfterCommit(ctx, a.WorkspaceID)
		s.log.Warn("webhook subscription disabled after failing deliveries",
			"webhook_id", id.Format(id.Webhook, a.SubscriptionID))
	}
	return disabled, err
}

// recordSuccess records one successful automatic attempt with one
// statement (WebhookDeliveryRecordSuccess), which is its own transaction:
// the delivery row and the subscription's health change together or not
// at all. The batcher falls back to it when a batch fails.
func (s *Service) recordSuccess(ctx context.Context, r success) error {
	ms := r.durationMs
	err := webhookdb.New().WebhookDeliveryRecordSuccess(ctx, s.db.Conn(ctx), webhookdb.WebhookDeliveryRecordSuccessParams{
		ID: r.id, WorkspaceID: r.workspaceID, SubscriptionID: r.subscriptionID, EventID: r.eventID,
		EventType: r.eventType, Attempt: r.attempt, ResponseStatus: &r.status, ResponseBody: nonEmpty(r.body),
		DurationMs: &ms, CreatedAt: r.at, RequestSignature: nonEmpty(r.signature), ResponseHeaders: r.headers,
	})
	return store.InterpretError(err)
}

// recordInTx records a failed attempt, or completes a manual retry's
// pending row, in one transaction with the subscription's health. A
// failure that extends a streak of failures without success past
// DisableAfterFailures disables the subscription (reported as disabled, so
// no further attempt is scheduled).
func (s *Service) recordInTx(ctx context.Context, job *rivertype.JobRow, a DeliverArgs, attempt int32, out outcome, now time.Time) (disabled bool, err error) {
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := webhookdb.New()
		status := DeliverySucceeded
		var next *time.Time
		if out.err == nil {
			if err := q.WebhookSubscriptionMarkHealthy(ctx, tx, a.SubscriptionID); err != nil {
				return store.InterpretError(err)
			}
		} else {
			status = DeliveryFailed
			since, err := q.WebhookSubscriptionMarkFailing(ctx, tx, webhookdb.WebhookSubscriptionMarkFailingParams{ID: a.SubscriptionID, At: now})
			if err != nil {
				return store.InterpretError(err)
			}
			if since != nil && now.Sub(*since) >= DisableAfterFailures {
				if disabled, err = s.autoDisable(ctx, tx, a.WorkspaceID, a.SubscriptionID, *since); err != nil {
					return err
				}
			}
			if !disabled && job.Attempt < job.MaxAttempts {
				t := s.nextAttemptAt(job)
				next = &t
			}
		}
		errText := errString(out.err)
		code, ms := out.status, int32(out.duration.Milliseconds())
		if a.DeliveryID != nil {
			_, err := q.WebhookDeliveryComplete(ctx, tx, webhookdb.WebhookDeliveryCompleteParams{
				ID: *a.DeliveryID, Status: status, ResponseStatus: code, ResponseBody: out.body,
				Error: errText, DurationMs: &ms, NextAttemptAt: next,
				RequestSignature: nonEmpty(out.signature), ResponseHeaders: out.headers,
			})
			return store.InterpretError(err)
		}
		_, err := q.WebhookDeliveryInsert(ctx, tx, webhookdb.WebhookDeliveryInsertParams{
			ID: id.New(), WorkspaceID: a.WorkspaceID, SubscriptionID: a.SubscriptionID, EventID: a.EventID,
			EventType: string(a.EventType), Attempt: attempt, Status: status, ResponseStatus: code,
			ResponseBody: out.body, Error: errText, DurationMs: &ms, CreatedAt: now, NextAttemptAt: next,
			RequestSignature: nonEmpty(out.signature), ResponseHeaders: out.headers,
		})
		return store.InterpretError(err)
	})
	return disabled, err
}

// autoDisable sets the subscription disabled with the reason, and tells
// every instance's cache.
func (s *Service) autoDisable(ctx context.Context, tx pgx.Tx, ws, sub uuid.UUID, since time.Time) (bool, error) {
	reason := fmt.Sprintf("deliveries failed without a success since %s", since.UTC().Format(time.RFC3339))
	n, err := webhookdb.New().WebhookSubscriptionDisable(ctx, tx, webhookdb.WebhookSubscriptionDisableParams{ID: sub, DisabledReason: &reason})
	if err != nil {
		return false, store.InterpretError(err)
	}
	if n > 0 {
		// The system disables it: a job, never a person.
		sys := audit.WithActor(ctx, audit.Actor{Type: audit.ActorSystem})
		if err := audit.Record(sys, tx, ws, audit.WebhookDisabled, auditTarget(sub), audit.Changes{
			"status": audit.Change(StatusEnabled, StatusDisabled), "disabled_reason": audit.Change(nil, reason),
		}); err != nil {
			return false, err
		}
	}
	return true, s.notifyChanged(ctx, tx, ws)
}

// completePendingAsDisabled closes a manual retry that came up after its
// subscription was disabled: nothing was sent.
func (s *Service) completePendingAsDisabled(ctx context.Context, sub uuid.UUID) error {
	msg := "not sent: the subscription is disabled"
	_, err := webhookdb.New().WebhookDeliveryComplete(ctx, s.db.Conn(ctx), webhookdb.WebhookDeliveryCompleteParams{ID: sub, Status: DeliveryFailed, Error: &msg})
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return nil // completed already
	}
	return err
}

func errString(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	if len(s) > 500 {
		s = s[:500]
	}
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "?")
	return &s
}
