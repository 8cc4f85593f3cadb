package qrserve

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"
)

// ErrBusy means every render slot is taken and the wait queue is full, or a
// request waited MaxWait without getting a slot. Test for it with
// errors.Is; the concrete error is a *BusyError with the retry hint.
var ErrBusy = errors.New("qrserve: too many QR codes are being rendered")

// BusyError is ErrBusy with the time after which a retry is sensible, for
// a Retry-After header.
type BusyError struct {
	RetryAfter time.Duration
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

// limiter bounds concurrent renders: slots holds a token per running
// render, queue a token per request waiting for a slot. Both are buffered
// channels so waiting respects ctx and the deadline in one select, and Go
// wakes blocked senders in arrival order.
type limiter struct {
	slots   chan struct{}
	queue   chan struct{}
	maxWait time.Duration
	busy    *BusyError
}

func newLimiter(renders, waiting int, maxWait, retryAfter time.Duration) *limiter {
	return &limiter{
		slots:   make(chan struct{}, renders),
		queue:   make(chan struct{}, waiting),
		maxWait: maxWait,
		busy:    &BusyError{RetryAfter: retryAfter},
	}
}

// acquire takes a render slot, waiting at most maxWait in the queue. It
// returns *BusyError when the queue is full or the wait ran out, ctx.Err()
// when the caller gave up first; the queue place is freed either way.
// release must be called exactly once after a nil error.
func (l *limiter) acquire(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	default:
	}
	select {
	case l.queue <- struct{}{}:
	default:
		return nil, l.busy
	}
	defer func() { <-l.queue }()
	timer := time.NewTimer(l.maxWait)
	defer timer.Stop()
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	case <-timer.C:
		return nil, l.busy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *limiter) release() { <-l.slots }

// waiting is how many requests are queued for a slot right now.
func (l *limiter) waiting() int { return len(l.queue) }
