// Package notify fans PostgreSQL NOTIFY messages out to in-process caches.
// It is how a change committed by one instance (a revoked API key, a
// re-pointed link) reaches every other instance's cache within milliseconds,
// without any shared state outside PostgreSQL.
package notify

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Handler receives a channel's payloads. Reset is called whenever
// notifications may have been missed (at start and after a reconnect), so
// the cache must drop everything it holds.
type Handler struct {
	Notify func(payload string)
	Reset  func()
}

// Listener holds one dedicated connection that LISTENs on every subscribed
// channel.
type Listener struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	mu       sync.RWMutex
	handlers map[string][]Handler
	ready    chan struct{}
	once     sync.Once
}

// New returns a listener; call Subscribe for each channel, then Run.
func New(pool *pgxpool.Pool, log *slog.Logger) *Listener {
	return &Listener{pool: pool, log: log, handlers: map[string][]Handler{}, ready: make(chan struct{})}
}

// Subscribe registers h for channel. Subscriptions must be made before Run.
func (l *Listener) Subscribe(channel string, h Handler) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handlers[channel] = append(l.handlers[channel], h)
}

// Ready is closed once the first LISTEN succeeded.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Run listens until ctx is cancelled, reconnecting with backoff after errors.
func (l *Listener) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("notification listener lost its connection; caches reset", "err", err, "retry_in", backoff.String())
		l.resetAll()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (l *Listener) listenOnce(ctx context.Context) error {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection carries LISTEN state; never hand it back to the pool.
	raw := conn.Hijack()
	defer raw.Close(context.WithoutCancel(ctx))

	l.mu.RLock()
	for channel := range l.handlers {
		if _, err := raw.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
			l.mu.RUnlock()
			return err
		}
	}
	l.mu.RUnlock()
	// Anything committed before LISTEN took effect was missed.
	l.resetAll()
	l.once.Do(func() { close(l.ready) })

	for {
		n, err := raw.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.mu.RLock()
		hs := l.handlers[n.Channel]
		l.mu.RUnlock()
		for _, h := range hs {
			h.Notify(n.Payload)
		}
	}
}

func (l *Listener) resetAll() {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, hs := range l.handlers {
		for _, h := range hs {
			if h.Reset != nil {
				h.Reset()
			}
		}
	}
}
