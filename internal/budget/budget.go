// Package budget admits every expensive request before it spends: the one
// mechanism behind logo decodes, CSV uploads, large QR renders, PDFs, ZIPs,
// exports, analytics reports, argon2id checks and long polls (the table
// of limits is in docs/architecture.md, "Budgets").
//
// Each class of work has a bound per process and a share per workspace,
// in its own unit: requests at once, or bytes of memory estimated before
// the work starts (an image's pixels × channels × bytes per sample from
// its header, an upload's size). A request whose cost fits both is
// admitted at once; otherwise it waits, at most Limit.Wait and only while
// the class's queue has room, for earlier requests to finish. What is
// still refused is a *Refused: 429 when the workspace's share was the
// bound (that workspace should slow down), 503 when the process was (the
// service is busy for everyone), both with Retry-After.
package budget

import (
	"context"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Class is a kind of expensive work with a bound of its own.
type Class int

// The classes; Limits holds the defaults of each.
const (
	Logo       Class = iota // decoding an uploaded logo; bytes of decoded image
	Upload                  // a CSV upload or dry run being read; bytes of upload
	Render                  // a QR render (PNG, SVG, PDF page) or a design's scan check; renders
	Archive                 // a ZIP of QR codes or a QR PDF being written; requests
	Export                  // a CSV export or a workspace export being written; requests
	Analytics               // an analytics report's queries; reports
	Hash                    // an argon2id run (19 MiB each); runs
	Poll                    // a long poll held open; requests
	NumClasses              // how many classes there are
)

var names = [NumClasses]string{"logo", "upload", "render", "archive", "export", "analytics", "hash", "poll"}

// String is the class's name, as in the docs' table and in log lines.
func (c Class) String() string {
	if c < 0 || c >= NumClasses {
		return "class(" + strconv.Itoa(int(c)) + ")"
	}
	return names[c]
}

// Limit bounds one class.
type Limit struct {
	// Process is how many units the whole process admits at once.
	Process int64
	// Workspace is one workspace's share (0: Process). Work that belongs
	// to no workspace (sign-in, sign-up) is bound by Process alone.
	Workspace int64
	// Queue is how many requests may wait for room at once (0: none
	// wait, a request that does not fit is refused at once); one
	// workspace may hold at most half of it (at least one).
	Queue int
	// Wait is the longest a request waits for room.
	Wait time.Duration
	// RetryAfter is what a refusal tells the client to wait.
	RetryAfter time.Duration
	// What is the refusal's wording of the work, e.g. "QR codes being
	// rendered": "too many QR codes being rendered …".
	What string
}

// MiB is a mebibyte, the unit the byte classes are written in.
const MiB = 1 << 20

// Limits are the defaults, sized for the machine: renders and analytics
// leave the redirect at least half the cores (GOMAXPROCS/2, at least
// one), argon2id runs one per core. One workspace may take half of each
// (at least one): on a machine with room for more than one at once,
// another workspace's render or credential check still finds room;
// argon2id runs for no workspace (sign-in, sign-up, a password change)
// are bound by the process alone. The render queue holds 16 per render
// slot, so that one workspace, which may fill half of it, still has the 8
// that a browser loading a page of codes over its connections needs.
// Memory bounds add up to what the docs'
// table says the process may hold for expensive work (about 170 MiB on
// top of its idle size, at most).
func Limits() Table {
	half := int64(max(1, runtime.GOMAXPROCS(0)/2))
	cores := int64(max(1, runtime.GOMAXPROCS(0)))
	return Table{
		Logo:      {Process: 96 * MiB, Workspace: 64 * MiB, Queue: 8, Wait: 2 * time.Second, RetryAfter: 2 * time.Second, What: "images being decoded"},
		Upload:    {Process: 32 * MiB, Workspace: 16 * MiB, Queue: 0, RetryAfter: 5 * time.Second, What: "CSV files being read"},
		Render:    {Process: half, Workspace: max(1, half/2), Queue: int(16 * half), Wait: 2 * time.Second, RetryAfter: time.Second, What: "QR codes being rendered"},
		Archive:   {Process: 4, Workspace: 2, Queue: 0, RetryAfter: 5 * time.Second, What: "QR archives and PDFs being written"},
		Export:    {Process: 4, Workspace: 2, Queue: 0, RetryAfter: 5 * time.Second, What: "exports being written"},
		Analytics: {Process: half, Workspace: 2, Queue: 64, Wait: 2 * time.Second, RetryAfter: time.Second, What: "analytics reports running"},
		Hash:      {Process: cores, Workspace: max(1, cores/2), Queue: int(2 * cores), Wait: 2 * time.Second, RetryAfter: time.Second, What: "credential checks running"},
		Poll:      {Process: 1000, Workspace: 100, Queue: 0, RetryAfter: 5 * time.Second, What: "long polls held open"},
	}
}

// Refused is a request the budget did not admit.
type Refused struct {
	Class Class
	// Status is 429 when the workspace's share was full, 503 when the
	// process's bound was.
	Status     int
	RetryAfter time.Duration
	// Reason is a sentence for the problem's detail.
	Reason string
	// What names the work, as Limit.What ("images being decoded").
	What string
}

func (e *Refused) Error() string { return "budget " + e.Class.String() + ": " + e.Reason }

// Seconds is RetryAfter as Retry-After wants it: whole seconds, at least 1.
func (e *Refused) Seconds() int { return max(1, int(math.Ceil(e.RetryAfter.Seconds()))) }

// SetHeader sets Retry-After on h.
func (e *Refused) SetHeader(h http.Header) { h.Set("Retry-After", strconv.Itoa(e.Seconds())) }

// Budgets is a process's budget for every class.
type Budgets struct {
	limits Table

	mu        sync.Mutex
	used      [NumClasses]int64
	queue     [NumClasses][]*waiter
	ws        map[share]*wsUse
	refusals  [NumClasses]atomic.Int64
	admitted  [NumClasses]atomic.Int64
	peakUsage [NumClasses]int64
}

type share struct {
	class Class
	ws    uuid.UUID
}

type wsUse struct {
	used    int64
	waiting int
}

// New returns budgets with the limits given (Limits() for the defaults).
func New(limits Table) *Budgets {
	for i := range limits {
		l := &limits[i]
		l.Process = max(1, l.Process)
		if l.Workspace <= 0 || l.Workspace > l.Process {
			l.Workspace = l.Process
		}
		if l.RetryAfter <= 0 {
			l.RetryAfter = time.Second
		}
	}
	return &Budgets{limits: limits, ws: map[share]*wsUse{}}
}

// Limit returns c's limit.
func (b *Budgets) Limit(c Class) Limit { return b.limits[c] }

// Admit reserves cost units of class c for workspace ws (uuid.Nil: work
// of no workspace) and returns the function that gives them back, to be
// called exactly once when the work is done (later calls do nothing). A
// cost above the workspace's share (or the process's bound) is charged as
// the whole share: such work runs alone. Waiters are admitted in their
// order of arrival, each as soon as its cost fits (a workspace at its
// share does not hold up the others). It returns a *Refused, or ctx's
// error when the caller went away while waiting.
func (b *Budgets) Admit(ctx context.Context, c Class, ws uuid.UUID, cost int64) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l := &b.limits[c]
	cost = max(1, cost)
	if ws == uuid.Nil {
		cost = min(cost, l.Process)
	} else {
		cost = min(cost, l.Workspace)
	}
	w := &waiter{key: share{c, ws}, cost: cost, ready: make(chan struct{})}
	b.mu.Lock()
	// Whoever is queued does not fit (release admits all that do), so a
	// request that fits takes its room at once.
	if b.fits(w) {
		b.charge(w)
		b.mu.Unlock()
		return b.releaser(w), nil
	}
	u := b.ws[w.key]
	if len(b.queue[c]) >= l.Queue || l.Wait <= 0 || (ws != uuid.Nil && u != nil && u.waiting >= max(1, l.Queue/2)) {
		wsFull := b.wsFull(w)
		b.mu.Unlock()
		return nil, b.refuse(c, wsFull)
	}
	if u == nil {
		u = &wsUse{}
		b.ws[w.key] = u
	}
	u.waiting++
	b.queue[c] = append(b.queue[c], w)
	b.mu.Unlock()

	timer := time.NewTimer(l.Wait)
	defer timer.Stop()
	var end error
	select {
	case <-w.ready:
		return b.releaser(w), nil
	case <-timer.C:
	case <-ctx.Done():
		end = ctx.Err()
	}
	b.mu.Lock()
	select {
	case <-w.ready: // admitted just as the wait ended: take it
		b.mu.Unlock()
		return b.releaser(w), nil
	default:
	}
	b.dequeue(w)
	wsFull := b.wsFull(w)
	b.mu.Unlock()
	if end != nil {
		return nil, end
	}
	return nil, b.refuse(c, wsFull)
}

// waiter is one request, queued or admitted.
type waiter struct {
	key   share
	cost  int64
	ready chan struct{} // closed when admitted from the queue
}

// fits reports whether w can be admitted now; b.mu held.
func (b *Budgets) fits(w *waiter) bool {
	return b.used[w.key.class]+w.cost <= b.limits[w.key.class].Process && !b.wsFull(w)
}

// wsFull reports whether w's workspace share is what keeps it out; b.mu held.
func (b *Budgets) wsFull(w *waiter) bool {
	if w.key.ws == uuid.Nil {
		return false
	}
	u := b.ws[w.key]
	return u != nil && u.used+w.cost > b.limits[w.key.class].Workspace
}

// charge admits w; b.mu held.
func (b *Budgets) charge(w *waiter) {
	u := b.ws[w.key]
	if u == nil {
		u = &wsUse{}
		b.ws[w.key] = u
	}
	u.used += w.cost
	c := w.key.class
	b.used[c] += w.cost
	b.peakUsage[c] = max(b.peakUsage[c], b.used[c])
	b.admitted[c].Add(1)
}

// dequeue takes a waiter off its class's queue; b.mu held.
func (b *Budgets) dequeue(w *waiter) {
	q := b.queue[w.key.class]
	for i, x := range q {
		if x == w {
			b.queue[w.key.class] = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if u := b.ws[w.key]; u != nil {
		u.waiting--
		b.forget(w.key, u)
	}
}

func (b *Budgets) forget(key share, u *wsUse) {
	if u.used == 0 && u.waiting == 0 {
		delete(b.ws, key)
	}
}

func (b *Budgets) releaser(w *waiter) func() {
	var once sync.Once
	return func() { once.Do(func() { b.release(w) }) }
}

// release gives w's units back and admits the queued requests that now
// fit, in their order of arrival.
func (b *Budgets) release(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := w.key.class
	b.used[c] -= w.cost
	if u := b.ws[w.key]; u != nil {
		u.used -= w.cost
		b.forget(w.key, u)
	}
	q := b.queue[c]
	for i := 0; i < len(q); {
		x := q[i]
		if !b.fits(x) {
			i++
			continue
		}
		q = append(q[:i:i], q[i+1:]...)
		b.queue[c] = q
		b.ws[x.key].waiting--
		b.charge(x)
		close(x.ready)
	}
}

func (b *Budgets) refuse(c Class, wsFull bool) *Refused {
	b.refusals[c].Add(1)
	l := b.limits[c]
	if wsFull {
		return &Refused{Class: c, Status: http.StatusTooManyRequests, RetryAfter: l.RetryAfter, What: l.What,
			Reason: "this workspace already has its share of " + l.What + "; retry in " + strconv.Itoa(secs(l.RetryAfter)) + " s"}
	}
	return &Refused{Class: c, Status: http.StatusServiceUnavailable, RetryAfter: l.RetryAfter, What: l.What,
		Reason: "the server has too many " + l.What + " right now; retry in " + strconv.Itoa(secs(l.RetryAfter)) + " s"}
}

func secs(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

// Stats are a class's counters since the process started.
type Stats struct {
	InUse, Peak        int64
	Waiting            int
	Admitted, Refusals int64
}

// Stats returns c's counters.
func (b *Budgets) Stats(c Class) Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{InUse: b.used[c], Peak: b.peakUsage[c], Waiting: len(b.queue[c]), Admitted: b.admitted[c].Load(), Refusals: b.refusals[c].Load()}
}

// process is the process-wide budget that Admit uses.
var process atomic.Pointer[Budgets]

func init() { process.Store(New(Limits())) }

// Process returns the process-wide budgets.
func Process() *Budgets { return process.Load() }

// SetProcess replaces the process-wide budgets and returns the function
// that restores the previous ones (tests make bounds small and exact).
func SetProcess(b *Budgets) (restore func()) {
	prev := process.Swap(b)
	return func() { process.Store(prev) }
}

// Admit is Process().Admit.
func Admit(ctx context.Context, c Class, ws uuid.UUID, cost int64) (release func(), err error) {
	return process.Load().Admit(ctx, c, ws, cost)
}

// Table holds a Limit per class.
type Table [NumClasses]Limit
