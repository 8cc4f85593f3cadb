package qrserve

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
)

// ErrBusy means every render slot is taken and the wait queue is full, or a
// request waited MaxWait without getting a slot. Test for it with
// errors.Is; the concrete error is a *BusyError with the retry hint.
var ErrBusy = errors.New("qrserve: too many QR codes are being rendered")

// BusyError is ErrBusy with the time after which a retry is sensible, for
// a Retry-After header.
type BusyError struct {
	RetryAfter time.Duration
	// Workspace: the workspace's share of the render slots was the bound
	// (answer 429), not the process's (503).
	Workspace bool
}

// Status is the answer's status: 429 when the workspace's share was the
// bound, 503 when the process's was.
func (e *BusyError) Status() int {
	if e.Workspace {
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

// Error says how long to wait, so a log line alone explains the 503.
func (e *BusyError) Error() string {
	return ErrBusy.Error() + "; retry in " + strconv.Itoa(e.Seconds()) + "s"
}

// Unwrap makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Unwrap() error { return ErrBusy }

// Seconds is RetryAfter rounded up to whole seconds, at least 1: the form
// Retry-After takes (docs/api.md#responses-and-headers).
func (e *BusyError) Seconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

// limiter bounds concurrent renders: the Render class of a
// budget.Budgets (internal/budget), the one admission mechanism of the
// process; a refusal becomes a *BusyError.
type limiter struct {
	b            *budget.Budgets
	slots, queue int
	maxWait      time.Duration
	busy         *BusyError
}

// newLimiter is a limiter on budgets of its own.
func newLimiter(renders, waiting int, maxWait, retryAfter time.Duration) *limiter {
	t := budget.Limits()
	t[budget.Render] = budget.Limit{Process: int64(renders), Queue: waiting, Wait: maxWait, RetryAfter: retryAfter, What: t[budget.Render].What}
	return onBudgets(budget.New(t))
}

// onBudgets is a limiter on b's Render class.
func onBudgets(b *budget.Budgets) *limiter {
	l := b.Limit(budget.Render)
	return &limiter{b: b, slots: int(l.Process), queue: l.Queue, maxWait: l.Wait, busy: &BusyError{RetryAfter: l.RetryAfter}}
}

// acquire takes a render slot for workspace ws (uuid.Nil: no workspace's
// share, the process's bound alone), waiting at most maxWait in the
// queue. It returns *BusyError when the queue is full or the wait ran
// out, ctx.Err() when the caller gave up first; the queue place is freed
// either way. release must be called exactly once after a nil error.
func (l *limiter) acquire(ctx context.Context, ws uuid.UUID) (release func(), err error) {
	release, err = l.b.Admit(ctx, budget.Render, ws, 1)
	var refused *budget.Refused
	if errors.As(err, &refused) {
		if refused.Status == http.StatusTooManyRequests {
			return nil, &BusyError{RetryAfter: l.busy.RetryAfter, Workspace: true}
		}
		return nil, l.busy
	}
	return release, err
}

// waiting is how many requests are queued for a slot right now.
func (l *limiter) waiting() int { return l.b.Stats(budget.Render).Waiting }
