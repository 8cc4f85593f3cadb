package analytics

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
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
// whose query hit the statement timeout; the API answers it with Status
// (503, or 429 when the workspace had its share of reports running) and
// Retry-After.
type BusyError struct {
	RetryAfter time.Duration
	Reason     string
	// Status is the HTTP status to answer (0: 503).
	Status int
}

func (e *BusyError) Error() string { return "analytics: " + e.Reason }

// Seconds is the Retry-After value: whole seconds, at least 1.
func (e *BusyError) Seconds() int { return max(1, int((e.RetryAfter+time.Second-1)/time.Second)) }

// HTTPStatus is Status, 503 when unset.
func (e *BusyError) HTTPStatus() int {
	if e.Status == 0 {
		return http.StatusServiceUnavailable
	}
	return e.Status
}

// limiter is the Analytics class of a budget.Budgets (internal/budget),
// the one admission mechanism of the process: Limits.PerWorkspace reports
// of a workspace and Limits.Global of the process at once, waiting up to
// Limits.Wait for a turn.
type limiter struct {
	b *budget.Budgets
}

func newLimiter(l Limits) *limiter {
	t := budget.Limits()
	def := t[budget.Analytics]
	t[budget.Analytics] = budget.Limit{Process: int64(max(1, l.Global)), Workspace: int64(max(1, l.PerWorkspace)),
		Queue: def.Queue, Wait: l.Wait, RetryAfter: time.Second, What: def.What}
	return &limiter{b: budget.New(t)}
}

// acquire waits up to Wait for a slot of ws and a global one. It returns
// the release function, a *BusyError when the wait ran out, or ctx's error
// when the caller went away.
func (l *limiter) acquire(ctx context.Context, ws uuid.UUID) (func(), error) {
	release, err := l.b.Admit(ctx, budget.Analytics, ws, 1)
	var refused *budget.Refused
	if errors.As(err, &refused) {
		if refused.Status == http.StatusTooManyRequests {
			return nil, &BusyError{RetryAfter: refused.RetryAfter, Status: refused.Status,
				Reason: "this workspace already has the most analytics reports running at once; retry shortly"}
		}
		return nil, &BusyError{RetryAfter: refused.RetryAfter, Reason: "too many analytics reports are running right now; retry shortly"}
	}
	return release, err
}
