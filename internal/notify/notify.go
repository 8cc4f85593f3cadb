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

// Handler receives a channel's payloads. Reset is called once LISTEN is
// (again) in effect, at start and after every reconnect: notifications may
// have been missed before it, so the cache must drop everything it holds.
//
// Suspend, when set, is called when the connection is lost, instead of
// Reset: from then until the next Reset notifications may be missed, so the
// cache must no longer trust its entries, but it may keep them to serve
// while the database itself is unreachable (the redirect during an
// outage). A handler without Suspend is Reset at the loss as well.
type Handler struct {
	Notify  func(payload string)
	Reset   func()
	Suspend func()
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

	// heard is when each (channel, payload) was last received, and
	// waiting who waits for one; both for Heard. connected says LISTEN is
	// in effect.
	echoMu    sync.Mutex
	heard     map[echoKey]time.Time
	waiting   map[echoKey][]chan struct{}
	connected bool
}

type echoKey struct{ channel, payload string }

// New returns a listener; call Subscribe for each channel, then Run.
func New(pool *pgxpool.Pool, log *slog.Logger) *Listener {
	return &Listener{pool: pool, log: log, handlers: map[string][]Handler{}, ready: make(chan struct{}),
		heard: map[echoKey]time.Time{}, waiting: map[echoKey][]chan struct{}{}}
}

// Subscribe registers h for channel. Subscriptions must be made before Run.
func (l *Listener) Subscribe(channel string, h Handler) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handlers[channel] = append(l.handlers[channel], h)
}

// Ready is closed once the first LISTEN succeeded.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Run listens until ctx is cancelled, reconnecting with backoff after
// errors. When it returns the caches are suspended: nothing is heard any
// more (a process draining its last requests after StopWorkers must not
// serve what a change since made stale).
func (l *Listener) Run(ctx context.Context) {
	defer l.suspendAll()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("notification listener lost its connection; caches suspended until it is back", "err", err, "retry_in", backoff.String())
		l.suspendAll()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		// At most a second between attempts: until LISTEN is back the
		// caches are suspended (a suspended redirect cache asks the
		// database on every request), so it should not lag the
		// database's return by long.
		backoff = min(backoff*2, time.Second)
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
	l.setConnected(true)
	defer l.setConnected(false)
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
		l.echo(echoKey{n.Channel, n.Payload})
	}
}

// Heard waits until this listener has received payload on channel since
// after (when it already has, it returns at once), ctx ends, or the
// listener is not connected (then nothing would come). A change that
// other instances learn by NOTIFY waits for its own echo before it is
// reported done: PostgreSQL sends a notification to every listening
// session at once, so when it is back here it has reached the other
// instances too, give or take their scheduling (a few milliseconds on a
// loaded machine).
func (l *Listener) Heard(ctx context.Context, channel, payload string, after time.Time) {
	k := echoKey{channel, payload}
	l.echoMu.Lock()
	if !l.connected || !l.heard[k].Before(after) {
		l.echoMu.Unlock()
		return
	}
	ch := make(chan struct{})
	l.waiting[k] = append(l.waiting[k], ch)
	l.echoMu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// echo records that k was received and wakes its waiters. heard keeps
// the last few seconds only.
func (l *Listener) echo(k echoKey) {
	now := time.Now()
	l.echoMu.Lock()
	defer l.echoMu.Unlock()
	l.heard[k] = now
	for _, ch := range l.waiting[k] {
		close(ch)
	}
	delete(l.waiting, k)
	if len(l.heard) > 1024 {
		for key, at := range l.heard {
			if now.Sub(at) > 5*time.Second {
				delete(l.heard, key)
			}
		}
	}
}

// setConnected records whether LISTEN is in effect; on losing it, every
// waiter is released (its echo will not come).
func (l *Listener) setConnected(c bool) {
	l.echoMu.Lock()
	defer l.echoMu.Unlock()
	l.connected = c
	if !c {
		for k, chs := range l.waiting {
			for _, ch := range chs {
				close(ch)
			}
			delete(l.waiting, k)
		}
	}
}

// suspendAll tells every handler that notifications may be missed from now.
func (l *Listener) suspendAll() {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, hs := range l.handlers {
		for _, h := range hs {
			switch {
			case h.Suspend != nil:
				h.Suspend()
			case h.Reset != nil:
				h.Reset()
			}
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
