package webhook

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/webhook/internal/webhookdb"
)

// maxSuccessBatch bounds how many successes one statement records.
const maxSuccessBatch = 500

// successWriteTimeout bounds one batch's statement. It is not the
// attempt's context: a worker whose own context ends (its job's timeout)
// does not fail the other workers' records with it.
const successWriteTimeout = 30 * time.Second

// success is the delivery row of one successful automatic attempt.
type success struct {
	id, workspaceID, subscriptionID, eventID uuid.UUID
	eventType                                string
	attempt                                  int32
	status                                   int32
	body                                     string // "" for none
	durationMs                               int32
	at                                       time.Time
	signature                                string // "" for none
	headers                                  []byte // nil for none
}

func successOf(a DeliverArgs, attempt int32, out outcome, now time.Time) success {
	r := success{
		id: id.New(), workspaceID: a.WorkspaceID, subscriptionID: a.SubscriptionID, eventID: a.EventID,
		eventType: string(a.EventType), attempt: attempt, durationMs: int32(out.duration.Milliseconds()),
		at: now, signature: out.signature, headers: out.headers,
	}
	if out.status != nil {
		r.status = *out.status
	}
	if out.body != nil {
		r.body = *out.body
	}
	return r
}

// successBatcher records the successful attempts of all of an instance's
// workers with as few statements as it can, by group commit: a worker
// whose success finds no statement in flight writes it at once (with any
// others queued); one that finds a statement in flight queues and waits,
// and the queue is written as one statement (recordSuccesses) as soon as
// that one finishes. A quiet instance so writes each success alone, with
// no added wait; a busy one writes as many as arrived during the previous
// statement, up to maxSuccessBatch.
//
// Every worker waits until its own row has committed (or failed) before it
// returns, so River completes no job whose attempt is unrecorded, and
// nothing waits in memory when the workers stop: River's graceful stop
// waits for the running jobs, and so for their records. A crash loses
// only records whose jobs are still running, which River rescues and
// sends again.
type successBatcher struct {
	s       *Service
	mu      sync.Mutex
	queue   []*queuedSuccess
	writing bool // a worker is writing; the queue waits for it
}

// queuedSuccess is a success waiting in the queue for its result.
type queuedSuccess struct {
	row  success
	done chan batchResult // exactly one result, buffered
}

// batchResult is a queued success's outcome, or lead: the previous writer
// finished with the queue non-empty, and this success (the queue's first)
// writes the next batch.
type batchResult struct {
	err  error
	lead bool
}

// record writes r, and returns once it has committed or failed.
func (b *successBatcher) record(ctx context.Context, r success) error {
	q := &queuedSuccess{row: r, done: make(chan batchResult, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, q)
	if b.writing {
		b.mu.Unlock()
		if res := <-q.done; !res.lead {
			return res.err
		}
	} else {
		b.writing = true
		b.mu.Unlock()
	}
	return b.writeNext(ctx)
}

// writeNext writes the queue's first batch, whose first success is the
// caller's, hands the queue on to its next success when it is not empty,
// and returns the caller's result.
func (b *successBatcher) writeNext(ctx context.Context) error {
	b.mu.Lock()
	n := min(len(b.queue), maxSuccessBatch)
	batch := b.queue[:n:n]
	b.queue = append([]*queuedSuccess(nil), b.queue[n:]...)
	b.mu.Unlock()

	errs := b.write(ctx, batch)
	for i, q := range batch[1:] {
		q.done <- batchResult{err: errs[i+1]}
	}

	b.mu.Lock()
	if len(b.queue) > 0 {
		b.queue[0].done <- batchResult{lead: true}
	} else {
		b.writing = false
	}
	b.mu.Unlock()
	return errs[0]
}

// write records batch with one statement, and returns each success's
// error. When the statement fails (nothing of it is written: it is one
// statement) and it held more than one success, each is written on its
// own, so one that cannot be recorded (its subscription deleted meanwhile)
// fails alone.
func (b *successBatcher) write(ctx context.Context, batch []*queuedSuccess) (errs []error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), successWriteTimeout)
	defer cancel()
	errs = make([]error, len(batch))
	// A panic must not leave the other workers waiting for ever: it fails
	// the batch (nothing of a failed statement is written), and River
	// retries the jobs.
	defer func() {
		if p := recover(); p != nil {
			for i := range errs {
				errs[i] = fmt.Errorf("record webhook successes: panic: %v", p)
			}
		}
	}()
	err := b.s.recordSuccesses(ctx, batch)
	if err == nil || len(batch) == 1 {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i, q := range batch {
		errs[i] = b.s.recordSuccess(ctx, q.row)
	}
	return errs
}

// recordSuccesses writes the batch's delivery rows and marks their
// subscriptions healthy, with one statement (WebhookDeliveryRecordSuccesses),
// its own transaction.
func (s *Service) recordSuccesses(ctx context.Context, batch []*queuedSuccess) error {
	n := len(batch)
	p := webhookdb.WebhookDeliveryRecordSuccessesParams{
		Ids: make([]uuid.UUID, n), WorkspaceIds: make([]uuid.UUID, n), SubscriptionIds: make([]uuid.UUID, n),
		EventIds: make([]uuid.UUID, n), EventTypes: make([]string, n), Attempts: make([]int32, n),
		ResponseStatuses: make([]int32, n), ResponseBodies: make([]string, n), DurationsMs: make([]int32, n),
		CreatedAts: make([]time.Time, n), RequestSignatures: make([]string, n), ResponseHeaders: make([]string, n),
	}
	for i, q := range batch {
		r := q.row
		p.Ids[i], p.WorkspaceIds[i], p.SubscriptionIds[i], p.EventIds[i] = r.id, r.workspaceID, r.subscriptionID, r.eventID
		p.EventTypes[i], p.Attempts[i], p.ResponseStatuses[i], p.ResponseBodies[i] = r.eventType, r.attempt, r.status, r.body
		p.DurationsMs[i], p.CreatedAts[i], p.RequestSignatures[i], p.ResponseHeaders[i] = r.durationMs, r.at, r.signature, string(r.headers)
	}
	return store.InterpretError(webhookdb.New().WebhookDeliveryRecordSuccesses(ctx, s.db.Conn(ctx), p))
}
