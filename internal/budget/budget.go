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
	Logo      Class = iota // decoding an uploaded logo; bytes of decoded image
	Upload                 // a CSV upload or dry run being read; bytes of upload
	Render                 // a QR render (PNG, SVG, PDF page) or a design's scan check; renders
	Archive                // a ZIP of QR codes or a QR PDF being written; requests
	Export                 // a CSV export or a workspace export being written; requests
	Analytics              // an analytics report's queries; reports
	Hash                   // an argon2id run (19 MiB each); runs
	Poll                   // a long poll held open; requests
	NumClasses // how many classes there are
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
// one), argon2id runs one per core. Memory bounds add up to what the
// docs' table says the process may hold for expensive work (about
// 200 MiB on top of its idle size, at most).
func Limits() Table {
	half := int64(max(1, runtime.GOMAXPROCS(0)/2))
	cores := int64(max(1, runtime.GOMAXPROCS(0)))
	return Table{
		Logo:      {Process: 96 * MiB, Workspace: 64 * MiB, Queue: 8, Wait: 2 * time.Second, RetryAfter: 2 * time.Second, What: "images being decoded"},
		Upload:    {Process: 8, Workspace: 2, Queue: 0, RetryAfter: 5 * time.Second, What: "CSV files being uploaded"},
		Render:    {Process: half, Workspace: half, Queue: int(8 * half), Wait: 2 * time.Second, RetryAfter: time.Second, What: "QR codes being rendered"},
		Archive:   {Process: 4, Workspace: 2, Queue: 0, RetryAfter: 5 * time.Second, What: "QR archives and PDFs being written"},
		Export:    {Process: 4, Workspace: 2, Queue: 0, RetryAfter: 5 * time.Second, What: "exports being written"},
		Analytics: {Process: half, Workspace: 2, Queue: 64, Wait: 2 * time.Second, RetryAfter: time.Second, What: "analytics reports running"},
		Hash:      {Process: cores, Queue: int(2 * cores), Wait: 2 * time.Second, RetryAfter: time.Second, What: "credential checks running"},
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
	// Reason is a sentence for the problem's detail or the error page.
	Reason string
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
	waiting   [NumClasses]int
	ws        map[share]*wsUse
	changed   chan struct{} // closed and replaced whenever something is released
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
	return &Budgets{limits: limits, ws: map[share]*wsUse{}, changed: make(chan struct{})}
}

// Limit returns c's limit.
func (b *Budgets) Limit(c Class) Limit { return b.limits[c] }

// Admit reserves cost units of class c for workspace ws (uuid.Nil: work
// of no workspace) and returns the function that gives them back, to be
// called exactly once when the work is done. A cost above the
// workspace's share (or the process's bound) is charged as the whole
// share: such work runs alone. It returns a *Refused, or ctx's error
// when the caller went away while waiting.
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
	key := share{c, ws}
	var timer *time.Timer
	b.mu.Lock()
	for {
		w := b.ws[key]
		wsFull := ws != uuid.Nil && w != nil && w.used+cost > l.Workspace
		procFull := b.used[c]+cost > l.Process
		if !wsFull && !procFull {
			if w == nil {
				w = &wsUse{}
				b.ws[key] = w
			}
			w.used += cost
			b.used[c] += cost
			b.peakUsage[c] = max(b.peakUsage[c], b.used[c])
			b.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			b.admitted[c].Add(1)
			var once sync.Once
			return func() { once.Do(func() { b.release(key, cost) }) }, nil
		}
		if timer == nil { // first try: join the queue, if there is room
			wsQueue := max(1, l.Queue/2)
			if b.waiting[c] >= l.Queue || (ws != uuid.Nil && w != nil && w.waiting >= wsQueue) || l.Wait <= 0 {
				b.mu.Unlock()
				return nil, b.refuse(c, wsFull)
			}
			if w == nil {
				w = &wsUse{}
				b.ws[key] = w
			}
			b.waiting[c]++
			w.waiting++
			timer = time.NewTimer(l.Wait)
			defer b.unwait(key)
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			b.mu.Lock()
			w := b.ws[key]
			wsFull := ws != uuid.Nil && w != nil && w.used+cost > l.Workspace
			b.mu.Unlock()
			return nil, b.refuse(c, wsFull)
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		}
		b.mu.Lock()
	}
}

// unwait leaves the queue.
func (b *Budgets) unwait(key share) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting[key.class]--
	if w := b.ws[key]; w != nil {
		w.waiting--
		if w.used == 0 && w.waiting == 0 {
			delete(b.ws, key)
		}
	}
}

func (b *Budgets) release(key share, cost int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used[key.class] -= cost
	if w := b.ws[key]; w != nil {
		w.used -= cost
		if w.used == 0 && w.waiting == 0 {
			delete(b.ws, key)
		}
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *Budgets) refuse(c Class, wsFull bool) *Refused {
	b.refusals[c].Add(1)
	l := b.limits[c]
	if wsFull {
		return &Refused{Class: c, Status: http.StatusTooManyRequests, RetryAfter: l.RetryAfter,
			Reason: "this workspace already has its share of " + l.What + "; retry in " + strconv.Itoa(secs(l.RetryAfter)) + " s"}
	}
	return &Refused{Class: c, Status: http.StatusServiceUnavailable, RetryAfter: l.RetryAfter,
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
	return Stats{InUse: b.used[c], Peak: b.peakUsage[c], Waiting: b.waiting[c], Admitted: b.admitted[c].Load(), Refusals: b.refusals[c].Load()}
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
