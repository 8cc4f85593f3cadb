package analytics

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/priority"
)

// Limits bound what analytics reads may take from the shared database, so
// that no tenant can occupy the connection pool or the CPUs the redirect
// and the rest of the API need.
type Limits struct {
	// PerWorkspace is how many reports of one workspace run at once.
	PerWorkspace int
	// Global is how many reports run at once in the process; keep it well
	// below the pool size.
	Global int
	// Wait is how long a request waits for a slot before it is refused
	// with a BusyError.
	Wait time.Duration
	// StatementTimeout cancels a report's query in PostgreSQL.
	StatementTimeout time.Duration
	// Pace, when set, paces reports while the redirect is busy, in
	// milliseconds of report time: reports yield to the redirect, waiting
	// at most Wait for their turn before they are refused.
	Pace *priority.Budget
}

// paceEstimate is what a report is charged up front, in milliseconds;
// the difference to its measured time is settled when it ends.
const paceEstimate = 10

// DefaultLimits: two reports per workspace, and for the whole process one
// per two CPUs, so below saturation, where nothing paces them (see
// Limits.Pace), reports leave the redirect at least half the cores, as QR
// renders do; a report waits at most 2 s for its turn and a query may run
// 5 s. Measured on 2 cores with the redirect at half its capacity and 20
// clients asking back to back: with one report per CPU the redirect kept
// 0.71x its rate. Reports of past ranges asked again take no slot
// (Reports.again). With rollups a report takes milliseconds, so the
// timeout is reached only when something is badly wrong.
func DefaultLimits() Limits {
	return Limits{PerWorkspace: 2, Global: max(1, runtime.GOMAXPROCS(0)/2), Wait: 2 * time.Second, StatementTimeout: 5 * time.Second}
}

// BusyError is the refusal of a report that found no free slot in time or
// whose query hit the statement timeout; the API answers it with 503 and
// Retry-After.
type BusyError struct {
	RetryAfter time.Duration
	Reason     string
}

func (e *BusyError) Error() string { return "analytics: " + e.Reason }

// Seconds is the Retry-After value: whole seconds, at least 1.
func (e *BusyError) Seconds() int { return max(1, int((e.RetryAfter+time.Second-1)/time.Second)) }

// limiter is a semaphore per workspace (created on demand, dropped when
// idle) and one for the process.
type limiter struct {
	limits Limits
	global chan struct{}

	mu   sync.Mutex
	perW map[uuid.UUID]*wsSlots
}

type wsSlots struct {
	sem  chan struct{}
	refs int
}

func newLimiter(l Limits) *limiter {
	return &limiter{limits: l, global: make(chan struct{}, l.Global), perW: map[uuid.UUID]*wsSlots{}}
}

// acquire waits up to Wait for a slot of ws and a global one. It returns
// the release function, a *BusyError when the wait ran out, or ctx's error
// when the caller went away.
func (l *limiter) acquire(ctx context.Context, ws uuid.UUID) (func(), error) {
	l.mu.Lock()
	s := l.perW[ws]
	if s == nil {
		s = &wsSlots{sem: make(chan struct{}, l.limits.PerWorkspace)}
		l.perW[ws] = s
	}
	s.refs++
	l.mu.Unlock()
	unref := func() {
		l.mu.Lock()
		if s.refs--; s.refs == 0 {
			delete(l.perW, ws)
		}
		l.mu.Unlock()
	}

	timer := time.NewTimer(l.limits.Wait)
	defer timer.Stop()
	busy := func(reason string) error {
		unref()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &BusyError{RetryAfter: time.Second, Reason: reason}
	}
	select {
	case s.sem <- struct{}{}:
	case <-timer.C:
		return nil, busy("this workspace already has the most analytics reports running at once; retry shortly")
	case <-ctx.Done():
		return nil, busy("")
	}
	select {
	case l.global <- struct{}{}:
	case <-timer.C:
		<-s.sem
		return nil, busy("too many analytics reports are running right now; retry shortly")
	case <-ctx.Done():
		<-s.sem
		return nil, busy("")
	}
	return func() {
		<-l.global
		<-s.sem
		unref()
	}, nil
}
