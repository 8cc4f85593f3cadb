package scan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/geo"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/store"
)

// Batching bounds (docs/scan-pipeline.md). A hit accepted by Record is
// committed within about FlushInterval plus one write (a few milliseconds)
// while PostgreSQL keeps up. What a hard crash can lose is bounded by
// count (bound.go): no more hits answered but unwritten than 100 ms of
// the current rate; when the writers are slow (a slow database, a busy
// CPU), redirects wait (backpressure) rather than that growing. When the
// database is unreachable (a write failed), hits go to the outage buffer
// instead (DefaultOutageBufferSize).
const (
	DefaultBufferSize = 1024
	MaxBatch          = 1000
	FlushInterval     = 20 * time.Millisecond
	// DefaultWriters write batches side by side, each on its own
	// connection: one writer spends most of a batch waiting for
	// PostgreSQL while the buffer fills behind it; with two, one batch is
	// prepared and sent while the other commits (docs/scan-pipeline.md).
	DefaultWriters = 2
	// DefaultOutageBufferSize bounds the hits held while the database is
	// unreachable (a write failed): redirects keep being answered without
	// waiting, their scans are kept here and written when a write succeeds
	// again, and past the bound the oldest are dropped and counted
	// (Options.OnDropped; linkqr_scans_dropped_total). 100,000 hits take
	// about 30 MiB with a browser's user agent and a referrer each
	// (TestOutageBufferMemory), and hold 25 s of traffic at 4,000
	// redirects a second. A crash loses them all, as it would any buffer.
	DefaultOutageBufferSize = 100_000
)

// Retry pace of the outage buffer: the first write after a failure is
// tried 50 ms later, then at most every second, so the database's return
// is noticed within a second and a refused connection costs little.
const (
	minRetry = 50 * time.Millisecond
	maxRetry = time.Second
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
	// Country is decided by the redirect from memory (geo.Resolver); the
	// address itself is never stored.
	Country geo.Country
	// QR: the short URL was opened with link.QRQuery, as QR codes encode it.
	QR bool
	// Variant is the destination the redirect chose: "" (the link's
	// target_url), "rule:<n>" or "split:<n>" (docs/targeting.md).
	Variant string
	// VisitorHash is the visitor hash when the redirect already computed
	// it (a split chooses by it; Hashed true), so the writer does not
	// compute it twice.
	VisitorHash [analytics.VisitorHashLen]byte
	Hashed      bool
}

// Options configure a Recorder.
type Options struct {
	DB            *store.DB
	Log           *slog.Logger
	Hasher        *analytics.VisitorHasher
	Origins       link.Origins
	Subscriptions Subscriptions
	Events        *event.Recorder // records scan.created (and fans it out); nil: no fan-out
	BufferSize    int             // default DefaultBufferSize
	Writers       int             // default DefaultWriters; the pool needs as many connections, plus one for the outage buffer
	OnFlushed     func(Flushed)   // metrics hook; may be nil
	OnFlushError  func(err error) // hook for failed writes (kept and retried); may be nil
	// OutageBufferSize bounds the hits kept while writes fail; default
	// DefaultOutageBufferSize.
	OutageBufferSize int
	OnDropped        func(n int) // hook for hits dropped past OutageBufferSize; may be nil
}

// Recorder buffers hits and writes them in batches.
//
// Normally its writers take hits from ch and write them. A write that
// fails starts an outage: the batch, and every batch after it, goes to the
// outage buffer without being tried, so the writers keep draining ch and
// redirects never wait for a database that is not there. One retrier
// writes the outage buffer's oldest batch, again and again with backoff,
// and the first success ends the outage; it then empties the buffer while
// the writers are back to writing directly.
type Recorder struct {
	opts    Options
	ch      chan Hit
	outage  atomic.Bool
	backlog backlog
	wake    chan struct{} // the outage buffer got hits
	// writersDone is closed when the writers have returned (ch closed
	// and drained); giveUp when Close's deadline passed.
	writersDone, giveUp chan struct{}

	mu     sync.RWMutex // Record holds it shared while sending; Close exclusively to close ch
	closed bool
	done   chan struct{}
	once   sync.Once

	copyBufs sync.Pool // *[]byte: the writers' COPY streams (appendCopyRows)

	// flushEvery is how long a writer gathers a batch that is not full:
	// FlushInterval (tests lengthen it).
	flushEvery time.Duration

	// unwritten bounds the hits answered but not committed (bound.go).
	unwritten *unwritten
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
	if o.OutageBufferSize <= 0 {
		o.OutageBufferSize = DefaultOutageBufferSize
	}
	return &Recorder{
		opts: o, ch: make(chan Hit, o.BufferSize), backlog: backlog{max: o.OutageBufferSize},
		wake: make(chan struct{}, 1), writersDone: make(chan struct{}), giveUp: make(chan struct{}), done: make(chan struct{}),
		copyBufs:  sync.Pool{New: func() any { return new([]byte) }},
		unwritten: newUnwritten(), flushEvery: FlushInterval,
	}
}

// Record queues a hit. It waits while the hits answered but not yet
// written are at the crash bound (bound.go) or the buffer is full
// (backpressure), and fails only when ctx ends or the recorder is
// shutting down, in which case the caller must not report the redirect as
// done.
func (r *Recorder) Record(ctx context.Context, h Hit) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return ErrClosed
	}
	if err := r.unwritten.acquire(ctx); err != nil {
		return err
	}
	h.ID = id.New()
	select {
	case r.ch <- h:
		return nil
	default:
	}
	select {
	case r.ch <- h:
		return nil
	case <-ctx.Done():
		r.unwritten.release(1)
		return ctx.Err()
	}
}

// Unwritten is the number of hits answered but not yet written (nor
// handed to the outage buffer): what a hard crash would lose now.
func (r *Recorder) Unwritten() int { return r.unwritten.held() }

// Backpressure is how many redirects waited at the crash bound for a
// write to commit, and how long they waited in all, since the start.
func (r *Recorder) Backpressure() (waits int64, waited time.Duration) {
	return r.unwritten.backpressure()
}

// Depth is the number of hits waiting to be written.
func (r *Recorder) Depth() int { return len(r.ch) }

// OutageDepth is the number of hits held in the outage buffer.
func (r *Recorder) OutageDepth() int { return r.backlog.len() }

// Run writes batches until Close; it returns when both buffers are
// drained (or Close gave up on the outage buffer). Its writers take hits
// from the one buffer, so batches of different writers may interleave in
// time; nothing depends on their order.
func (r *Recorder) Run() {
	defer close(r.done)
	var wg sync.WaitGroup
	for range r.opts.Writers {
		wg.Go(r.writeLoop)
	}
	retrier := make(chan struct{})
	go func() { defer close(retrier); r.retryLoop() }()
	wg.Wait()
	close(r.writersDone)
	<-retrier
}

// writeLoop is one writer: it gathers a batch and writes it, until the
// buffer is closed and drained.
//
// A batch is written when it is full or flushEvery after its first hit,
// or at once when a redirect waits at the crash bound (hurried): then
// gathering a fuller batch would only make it wait longer.
func (r *Recorder) writeLoop() {
	timer := time.NewTimer(r.flushEvery)
	timer.Stop()
	batch := make([]Hit, 0, MaxBatch)
	for {
		var hurry <-chan struct{} // nil (never ready) while there is nothing to write
		if len(batch) > 0 {
			hurry = r.unwritten.hurried()
		}
		select {
		case h, ok := <-r.ch:
			if !ok {
				r.flush(batch)
				return
			}
			if len(batch) == 0 {
				timer.Reset(r.flushEvery)
			}
			batch = append(batch, h)
			if len(batch) >= MaxBatch {
				timer.Stop()
				r.flush(batch)
				batch = batch[:0]
			}
		case <-hurry:
			timer.Stop()
			var open bool
			batch, open = r.gather(batch)
			r.flush(batch)
			batch = batch[:0]
			if !open {
				return
			}
		case <-timer.C:
			r.flush(batch)
			batch = batch[:0]
		}
	}
}

// gather adds the hits already buffered to batch, up to MaxBatch, without
// waiting for more; open is false once the buffer is closed and drained.
func (r *Recorder) gather(batch []Hit) (_ []Hit, open bool) {
	for len(batch) < MaxBatch {
		select {
		case h, ok := <-r.ch:
			if !ok {
				return batch, false
			}
			batch = append(batch, h)
		default:
			return batch, true
		}
	}
	return batch, true
}

// Close stops accepting hits and waits until every buffered hit is
// written. When ctx ends first (the database stayed unreachable), it gives
// up: the hits still held are lost, and it logs how many, loudly.
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
	}
	r.once.Do(func() { close(r.giveUp) })
	select {
	case <-r.done: // the retrier stops at once; the writers within a write
	case <-time.After(15 * time.Second):
	}
	lost := r.backlog.len() + len(r.ch)
	r.opts.Log.Error("SCANS LOST: the database stayed unreachable until the shutdown deadline; these accepted scans were not written", "count", lost)
	return fmt.Errorf("scan recorder did not drain before the shutdown deadline: %d scans not written", lost)
}

// flush writes a batch, or during an outage keeps it in the outage
// buffer; a failed write starts an outage.
func (r *Recorder) flush(batch []Hit) {
	if len(batch) == 0 {
		return
	}
	// Written or kept for the retrier, the batch no longer holds
	// redirects back: during an outage they must not wait.
	defer r.unwritten.release(len(batch))
	if !r.outage.Load() {
		err := r.writeBatch(batch)
		if err == nil {
			return
		}
		if !r.outage.Swap(true) {
			r.opts.Log.Warn("writing scans failed; keeping them in the outage buffer until the database takes them", "count", len(batch), "err", err)
		}
	}
	r.keep(batch)
}

// keep puts hits in the outage buffer and wakes the retrier.
func (r *Recorder) keep(hits []Hit) {
	r.dropped(r.backlog.push(hits))
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Recorder) dropped(n int) {
	if n > 0 && r.opts.OnDropped != nil {
		r.opts.OnDropped(n)
	}
}

// Flushed is one batch written, for OnFlushed: its human and bot scans,
// how long the write took (its rows prepared, COPY and commit), and how long its oldest scan
// had been answered when it committed: what a hard crash just before the
// commit would have lost of it, against CrashWindow.
type Flushed struct {
	Human, Bots int
	Took        time.Duration
	Oldest      time.Duration
}

// writeBatch writes one batch with a deadline and reports the outcome to
// the hooks.
func (r *Recorder) writeBatch(batch []Hit) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	began := time.Now()
	human, bots, err := r.write(ctx, batch)
	if err != nil {
		if r.opts.OnFlushError != nil {
			r.opts.OnFlushError(err)
		}
		return err
	}
	if r.opts.OnFlushed != nil {
		now := time.Now()
		oldest := batch[0].At
		for _, h := range batch[1:] {
			if h.At.Before(oldest) {
				oldest = h.At
			}
		}
		r.opts.OnFlushed(Flushed{Human: human, Bots: bots, Took: now.Sub(began), Oldest: now.Sub(oldest)})
	}
	return nil
}

// retryLoop empties the outage buffer, oldest first, one batch at a time:
// a failure puts the batch back and waits (minRetry, doubling to
// maxRetry); the first success ends the outage. It returns once the
// writers are done and the buffer is empty, or when Close gives up.
func (r *Recorder) retryLoop() {
	wait := minRetry
	for {
		batch := r.backlog.take(MaxBatch)
		if len(batch) == 0 {
			select {
			case <-r.wake:
				continue
			case <-r.writersDone:
				if r.backlog.len() == 0 {
					return
				}
				continue
			case <-r.giveUp:
				return
			}
		}
		if err := r.writeBatch(batch); err != nil {
			r.dropped(r.backlog.putBack(batch))
			r.opts.Log.Debug("writing kept scans failed; retrying", "held", r.backlog.len(), "err", err, "retry_in", wait.String())
			select {
			case <-time.After(wait):
			case <-r.giveUp:
				return
			}
			wait = min(wait*2, maxRetry)
			continue
		}
		wait = minRetry
		if r.outage.Swap(false) {
			r.opts.Log.Info("writing scans again; emptying the outage buffer", "held", r.backlog.len())
		}
	}
}
