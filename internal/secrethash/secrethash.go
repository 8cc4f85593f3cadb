// Package secrethash is the one place where secrets that users present
// (passwords, API keys, later OAuth client secrets) are hashed and checked
// with argon2id, so every such check shares one cost setting and one
// process-wide concurrency cap.
//
// Each argon2id run holds Params.Memory (19 MiB) for its duration, so
// unbounded concurrency turns a burst of sign-ups, sign-ins or unseen API
// keys into gigabytes of memory. Every run therefore takes a slot of one
// Limiter: at most GOMAXPROCS runs at a time (more would only queue for the
// CPU while holding their memory), a short queue of at most twice that many
// callers waiting up to MaxWait for a slot, and ErrBusy for everyone beyond,
// at once — the edges answer 503 with Retry-After (429 where the refusal
// was a workspace's share). A run for a workspace (a link's password, an
// API key or OAuth client secret, new or seen for the first time) takes
// that workspace's share of the slots too; one for no workspace (sign-in,
// sign-up, a person's password) is bound by the process alone.
package secrethash

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
)

// Params are the argon2id costs: OWASP's recommended m=19 MiB, t=2, p=1,
// which keeps a verification in the tens of milliseconds.
var Params = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// ErrBusy means every argon2id slot is taken and the wait queue is full (or
// the wait took longer than MaxWait): the caller should answer 503 with a
// Retry-After of RetryAfter and not count the attempt against anybody.
var ErrBusy = errors.New("too many secret checks in progress")

// RetryAfter is what callers that got ErrBusy tell clients to wait.
const RetryAfter = time.Second

// MaxWait is how long a queued caller waits for a slot before ErrBusy.
const MaxWait = 2 * time.Second

// Limiter caps concurrent argon2id runs: slots run at once, queue more may
// wait (each at most maxWait), the rest get ErrBusy immediately. It is
// the Hash class of a budget.Budgets (internal/budget), the one admission
// mechanism of the process.
type Limiter struct {
	b *budget.Budgets
}

// NewLimiter returns a Limiter with slots concurrent runs (at least 1) and
// room for queue waiters, on budgets of its own; a workspace may take
// every slot.
func NewLimiter(slots, queue int, maxWait time.Duration) *Limiter {
	t := budget.Limits()
	t[budget.Hash] = budget.Limit{Process: int64(max(1, slots)), Queue: max(0, queue), Wait: maxWait,
		RetryAfter: RetryAfter, What: t[budget.Hash].What}
	return &Limiter{b: budget.New(t)}
}

// OnBudgets is a Limiter on the Hash class of b (tests give it bounds of
// their own, a workspace's share among them).
func OnBudgets(b *budget.Budgets) *Limiter { return &Limiter{b: b} }

// Acquire takes a slot for workspace ws (uuid.Nil: a run for no
// workspace, bound by the process alone), waiting in the queue when there
// is room; release must be called exactly once when the run is done. It
// returns ErrBusy (wrapping the *budget.Refused, whose Status tells
// whether the workspace's share or the process's bound refused) when the
// queue is full or the wait exceeds maxWait, and ctx's error when ctx
// ends first.
func (l *Limiter) Acquire(ctx context.Context, ws uuid.UUID) (release func(), err error) {
	release, err = l.b.Admit(ctx, budget.Hash, ws, 1)
	var refused *budget.Refused
	if errors.As(err, &refused) {
		return nil, fmt.Errorf("%w: %w", ErrBusy, refused)
	}
	return release, err
}

// Status is the HTTP status that answers ErrBusy: 429 when a workspace's
// share of the slots was the bound (that workspace should slow down), 503
// when the process's was.
func Status(err error) int {
	var refused *budget.Refused
	if errors.As(err, &refused) {
		return refused.Status
	}
	return http.StatusServiceUnavailable
}

// InUse reports how many runs hold a slot and how many callers wait.
func (l *Limiter) InUse() (running, waiting int) {
	s := l.b.Stats(budget.Hash)
	return int(s.InUse), s.Waiting
}

// Slots is the number of concurrent runs allowed.
func (l *Limiter) Slots() int { return int(l.b.Limit(budget.Hash).Process) }

// process is the process-wide cap that Hash, Compare and Dummy use.
var process atomic.Pointer[Limiter]

func init() { process.Store(DefaultLimiter()) }

// DefaultLimiter is the cap sized for the machine: one slot per usable CPU
// (GOMAXPROCS, which follows the container's CPU limit; set GOMAXPROCS to
// change it) and a queue twice that long: the Hash class of the
// process-wide budget.Process().
func DefaultLimiter() *Limiter {
	return OnBudgets(budget.Process())
}

// Process returns the process-wide limiter.
func Process() *Limiter { return process.Load() }

// SetProcess replaces the process-wide limiter and returns a function that
// restores the previous one. Tests use it to make the cap deterministic.
func SetProcess(l *Limiter) (restore func()) {
	prev := process.Swap(l)
	return func() { process.Store(prev) }
}

// Hash returns an argon2id hash of secret in PHC string form, or ErrBusy;
// the run is ws's (uuid.Nil: no workspace's).
func Hash(ctx context.Context, ws uuid.UUID, secret string) (string, error) {
	release, err := process.Load().Acquire(ctx, ws)
	if err != nil {
		return "", err
	}
	defer release()
	return argon2id.CreateHash(secret, Params)
}

// Compare reports whether secret matches hash; the comparison of the
// derived keys is constant-time. It returns ErrBusy when no slot is free;
// the run is ws's (uuid.Nil: no workspace's).
func Compare(ctx context.Context, ws uuid.UUID, secret, hash string) (bool, error) {
	release, err := process.Load().Acquire(ctx, ws)
	if err != nil {
		return false, err
	}
	defer release()
	return argon2id.ComparePasswordAndHash(secret, hash)
}

// Dummy does the work of a Compare when there is nothing to compare with
// (an unknown address), so that the answer costs the same time and takes a
// slot like a real check; its only error is ErrBusy or ctx's. With
// nothing to compare with there is no workspace either: the run is bound
// by the process alone.
func Dummy(ctx context.Context, secret string) error {
	release, err := process.Load().Acquire(ctx, uuid.Nil)
	if err != nil {
		return err
	}
	defer release()
	_, err = argon2id.CreateHash(secret, Params)
	return err
}
