package scan

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/store"
)

// Batching bounds (docs/scan-pipeline.md). A hit accepted by Record is
// committed within about FlushInterval plus one write (a few milliseconds)
// while PostgreSQL keeps up, which bounds what a hard crash can lose to
// well under 100 ms of traffic. When it does not, redirects wait
// (backpressure) rather than scans being dropped, and a crash loses at
// most the buffer and the batches in flight (about 3,000 scans): the
// buffer is small on purpose, as every hit in it is a hit a crash loses
// and a redirect that waits behind it.
const (
	DefaultBufferSize = 1024
	MaxBatch          = 1000
	FlushInterval     = 20 * time.Millisecond
	// DefaultWriters write batches side by side, each on its own
	// connection: one writer spends most of a batch waiting for
	// PostgreSQL, and measured alone it capped the redirect at about
	// 20,000 scans a second on 2 cores (docs/scan-pipeline.md).
	DefaultWriters = 2
)

// ErrClosed is returned by Record after Close began.
var ErrClosed = errors.New("scan recorder is shut down")

// Subscriptions tells whether a workspace has a webhook subscription to an
// event type, so scan.created events are written only where someone
// listens. Implementations cache the answer and invalidate it on change.
type Subscriptions interface {
	Subscribed(ctx context.Context, workspaceID uuid.UUID, t event.Type) (bool, error)
}

// NoSubscriptions is the Subscriptions of a deployment without webhooks.
type NoSubscriptions struct{}

// Subscribed always reports false.
func (NoSubscriptions) Subscribed(context.Context, uuid.UUID, event.Type) (bool, error) {
	return false, nil
}

// Hit is one redirect to be counted as a scan. The client IP is used for
// the visitor hash when the hit is written and then forgotten.
type Hit struct {
	// ID is the scan's id, given by Record in arrival order (UUIDv7,
	// monotonic in this process), so that with several writers the ids
	// still sort as the redirects happened.
	ID          uuid.UUID
	LinkID      uuid.UUID
	WorkspaceID uuid.UUID
	At          time.Time
	UserAgent   string
	Referer     string
	ClientIP    netip.Addr
}

// Options configure a Recorder.
type Options struct {
	DB            *store.DB
	Log           *slog.Logger
	Hasher        *analytics.VisitorHasher
	ShortBase     string
	Subscriptions Subscriptions
	Events        *event.Recorder       // records scan.created (and fans it out); nil: no fan-out
	BufferSize    int                   // default DefaultBufferSize
	Writers       int                   // default DefaultWriters; the pool needs as many connections
	OnFlushed     func(human, bots int) // metrics hook; may be nil
	OnFlushError  func(err error)       // metrics hook for failed (retried) writes; may be nil
}

// Recorder buffers hits and writes them in batches.
type Recorder struct {
	opts Options
	ch   chan Hit

	mu     sync.RWMutex // Record holds it shared while sending; Close exclusively to close ch
	closed bool
	done   chan struct{}
}

// NewRecorder returns a Recorder; call Run in a goroutine, and Close to
// drain it.
func NewRecorder(o Options) *Recorder {
	if o.BufferSize <= 0 {
		o.BufferSize = DefaultBufferSize
	}
	if o.Writers <= 0 {
		o.Writers = DefaultWriters
	}
	if o.Subscriptions == nil {
		o.Subscriptions = NoSubscriptions{}
	}
	return &Recorder{opts: o, ch: make(chan Hit, o.BufferSize), done: make(chan struct{})}
}

// Record queues a hit. It waits while the buffer is full (backpressure)
// and fails only when ctx ends or the recorder is shutting down, in which
// case the caller must not report the redirect as done.
func (r *Recorder) Record(ctx context.Context, h Hit) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return ErrClosed
	}
	h.ID = store.NewID()
	select {
	case r.ch <- h:
		return nil
	default:
	}
	select {
	case r.ch <- h:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Depth is the number of hits waiting to be written.
func (r *Recorder) Depth() int { return len(r.ch) }

// Run writes batches until Close; it returns when the buffer is drained.
// Its writers take hits from the one buffer, so batches of different
// writers may interleave in time; nothing depends on their order.
func (r *Recorder) Run() {
	defer close(r.done)
	var wg sync.WaitGroup
	for range r.opts.Writers {
		wg.Go(r.writeLoop)
	}
	wg.Wait()
}

// writeLoop is one writer: it gathers a batch and writes it, until the
// buffer is closed and drained.
func (r *Recorder) writeLoop() {
	timer := time.NewTimer(FlushInterval)
	timer.Stop()
	batch := make([]Hit, 0, MaxBatch)
	for {
		select {
		case h, ok := <-r.ch:
			if !ok {
				r.flush(batch, true)
				return
			}
			if len(batch) == 0 {
				timer.Reset(FlushInterval)
			}
			batch = append(batch, h)
			if len(batch) >= MaxBatch {
				timer.Stop()
				r.flush(batch, false)
				batch = batch[:0]
			}
		case <-timer.C:
			r.flush(batch, false)
			batch = batch[:0]
		}
	}
}

// Close stops accepting hits, waits until every buffered hit is written
// (or ctx ends) and returns.
func (r *Recorder) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.ch)
	}
	r.mu.Unlock()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return errors.New("scan recorder did not drain before the shutdown deadline")
	}
}

// flush writes a batch, retrying with backoff while the database fails:
// the buffer fills meanwhile and redirects wait, but nothing is dropped.
// Only at shutdown, after the retry deadline, is a batch given up (loudly).
func (r *Recorder) flush(batch []Hit, final bool) {
	if len(batch) == 0 {
		return
	}
	backoff := 50 * time.Millisecond
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		human, bots, err := r.write(ctx, batch)
		cancel()
		if err == nil {
			if r.opts.OnFlushed != nil {
				r.opts.OnFlushed(human, bots)
			}
			return
		}
		if final && time.Now().After(deadline) {
			r.opts.Log.Error("scans lost: the database stayed unreachable during shutdown", "count", len(batch), "err", err)
			return
		}
		if r.opts.OnFlushError != nil {
			r.opts.OnFlushError(err)
		}
		r.opts.Log.Warn("writing scans failed; retrying", "count", len(batch), "err", err, "retry_in", backoff.String())
		time.Sleep(backoff)
		backoff = min(backoff*2, 2*time.Second)
	}
}
