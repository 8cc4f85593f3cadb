package event

import (
	"context"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/store"
)

// Channel carries the id of a workspace that has new events: RecordMany
// notifies it in the events' transaction, so the notification arrives
// when they are committed.
const Channel = "linkqr_events"

// notifyRecorded notifies Channel once per workspace of events, in tx.
func notifyRecorded(ctx context.Context, tx pgx.Tx, events []New) error {
	seen := make(map[uuid.UUID]bool, 1)
	for _, e := range events {
		if seen[e.WorkspaceID] {
			continue
		}
		seen[e.WorkspaceID] = true
		if err := store.Notify(ctx, tx, Channel, e.WorkspaceID.String()); err != nil {
			return err
		}
	}
	return nil
}

// Wakeup wakes the long polls of a workspace when the database notifies
// that it has new events, so a waiting poll costs no query. While the
// listener is disconnected a notification may be missed: when it is back
// (Reset), every waiting poll reads once again.
type Wakeup struct {
	mu      sync.Mutex
	waiters map[uuid.UUID]map[*waiter]struct{}
	stopped chan struct{}
	stop    sync.Once
}

type waiter struct{ ch chan struct{} }

// NewWakeup returns a Wakeup; Subscribe connects it to the listener.
func NewWakeup() *Wakeup {
	return &Wakeup{waiters: map[uuid.UUID]map[*waiter]struct{}{}, stopped: make(chan struct{})}
}

// Subscribe wakes the polls on every notification of Channel.
func (w *Wakeup) Subscribe(l *notify.Listener) {
	l.Subscribe(Channel, notify.Handler{Notify: w.notified, Reset: w.all})
}

// Stop ends every long poll now, and those that start later at once (the
// server is draining).
func (w *Wakeup) Stop() { w.stop.Do(func() { close(w.stopped) }) }

// Waiting is how many long polls wait right now.
func (w *Wakeup) Waiting() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, ws := range w.waiters {
		n += len(ws)
	}
	return n
}

// watch registers a poll of ws; its channel receives (without blocking
// the listener) when ws has new events. stop unregisters it.
func (w *Wakeup) watch(ws uuid.UUID) (<-chan struct{}, func()) {
	x := &waiter{ch: make(chan struct{}, 1)}
	w.mu.Lock()
	m := w.waiters[ws]
	if m == nil {
		m = map[*waiter]struct{}{}
		w.waiters[ws] = m
	}
	m[x] = struct{}{}
	w.mu.Unlock()
	return x.ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(m, x)
		if len(m) == 0 && len(w.waiters[ws]) == 0 {
			delete(w.waiters, ws)
		}
	}
}

// notified wakes the polls of the workspace (the notification's payload).
func (w *Wakeup) notified(payload string) {
	ws, err := uuid.Parse(payload)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for x := range w.waiters[ws] {
		select {
		case x.ch <- struct{}{}:
		default: // already woken
		}
	}
}

// all wakes every poll.
func (w *Wakeup) all() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.waiters {
		for x := range m {
			select {
			case x.ch <- struct{}{}:
			default:
			}
		}
	}
}
