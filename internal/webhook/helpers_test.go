package webhook_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/priority"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
	"github.com/linkqr/linkqr/internal/webhook"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// clock is a controllable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// resolver is a DNS whose answers a test sets (and changes).
type resolver struct {
	mu sync.Mutex
	m  map[string][]netip.Addr
}

func newResolver(pairs ...string) *resolver {
	r := &resolver{m: map[string][]netip.Addr{}}
	for i := 0; i < len(pairs); i += 2 {
		r.set(pairs[i], pairs[i+1])
	}
	return r
}

func (r *resolver) set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[host] = nil
	for _, a := range addrs {
		r.m[host] = append(r.m[host], netip.MustParseAddr(a))
	}
}

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.m[host]; ok {
		return a, nil
	}
	return nil, &netErr{host}
}

type netErr struct{ host string }

func (e *netErr) Error() string { return "no such host " + e.host }

// opts adjust setup.
type opts struct {
	denyPrivate bool // default: private addresses allowed (httptest receivers)
	resolver    webhook.Resolver
	timeout     time.Duration
	pool        *pgxpool.Pool
	key         []byte
	pace        *priority.Budget
}

// env is a webhook service on a fresh database with two workspaces.
type env struct {
	pool      *pgxpool.Pool
	db        *store.DB
	svc       *webhook.Service
	clock     *clock
	ws, other uuid.UUID
	key       []byte
	jobID     atomic.Int64
	succeeded atomic.Int32 // attempts reported to the OnAttempt hook
	failed    atomic.Int32
}

func setup(t testing.TB, o opts) *env {
	t.Helper()
	pool := o.pool
	if pool == nil {
		pool = testkit.DB(t)
	}
	key := o.key
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	e := &env{pool: pool, db: store.NewDB(pool), clock: newClock(), key: key}
	svc, err := webhook.NewService(webhook.Options{
		DB: e.db, Log: testkit.Logger(t), Key: key, AllowPrivate: !o.denyPrivate,
		Resolver: o.resolver, Now: e.clock.Now, Timeout: o.timeout, Pace: o.pace,
		OnAttempt: func(status string, _ time.Duration) {
			map[string]*atomic.Int32{"succeeded": &e.succeeded, "failed": &e.failed}[status].Add(1)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.ws = testkit.NewTenant(t, pool).WorkspaceID
	e.other = testkit.NewTenant(t, pool).WorkspaceID
	return e
}

// create makes a subscription of the test workspace and fails the test on error.
func (e *env) create(t testing.TB, url string, events ...event.Type) webhook.Resource {
	t.Helper()
	in := webhook.CreateInput{URL: url}
	for _, ev := range events {
		in.Events = append(in.Events, string(ev))
	}
	res, err := e.svc.Create(context.Background(), e.ws, in)
	if err != nil {
		t.Fatalf("create subscription: %v", err)
	}
	return res
}

// recordEvent writes an event of the test workspace (without fan-out).
func (e *env) recordEvent(t *testing.T, typ event.Type, data any) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := e.db.InTx(context.Background(), func(tx pgx.Tx) error {
		var err error
		id, err = (*event.Recorder)(nil).Record(context.Background(), tx, e.ws, typ, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// work runs one attempt of the delivery job, as River would.
func (e *env) work(t *testing.T, args webhook.DeliverArgs, attempt int) (*river.Job[webhook.DeliverArgs], error) {
	t.Helper()
	now := e.clock.Now()
	job := &river.Job[webhook.DeliverArgs]{
		JobRow: &rivertype.JobRow{ID: e.jobID.Add(1), Attempt: attempt, MaxAttempts: webhook.MaxAttempts, AttemptedAt: &now, Kind: args.Kind()},
		Args:   args,
	}
	return job, e.svc.Worker().Work(context.Background(), job)
}

func mustID(t *testing.T, p id.Prefix, s string) uuid.UUID {
	t.Helper()
	objID, ok := id.Parse(p, s)
	if !ok {
		t.Fatalf("bad %s id %q", p, s)
	}
	return objID
}

// deliveries lists the subscription's delivery rows, newest first.
func (e *env) deliveries(t *testing.T, sub webhook.Resource) []webhook.Delivery {
	t.Helper()
	ds, _, err := e.svc.ListDeliveries(context.Background(), e.ws, sub.ID, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is an httptest server that records requests and answers with
// handle (default 204).
type receiver struct {
	*httptest.Server
	got chan received
}

func newReceiver(t *testing.T, handle http.HandlerFunc) *receiver {
	t.Helper()
	r := &receiver{got: make(chan received, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.got <- received{header: req.Header.Clone(), body: body}
		if handle != nil {
			handle(w, req)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// next waits (up to a deadline) for the next request.
func (r *receiver) next(t *testing.T) received {
	t.Helper()
	select {
	case g := <-r.got:
		return g
	case <-time.After(15 * time.Second):
		t.Fatal("receiver got no request within 15 s")
		return received{}
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// eventually is wait.For with the arguments in this package's order.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.For(t, within, cond, what)
}

func compactJSON(dst *bytes.Buffer, src []byte) error { return json.Compact(dst, src) }

// twoInstances is two services of one workspace on one database, as two
// instances are: B hears the notifications (l, running until the test
// ends) that A's changes send; ctx ends with the test.
func twoInstances(t *testing.T) (a, b *env, l *notify.Listener, ctx context.Context) {
	t.Helper()
	a = setup(t, opts{})
	b = setup(t, opts{pool: a.pool, key: a.key})
	b.ws = a.ws
	l = notify.New(a.pool, testkit.Logger(t))
	b.svc.Subscribe(l)
	return a, b, l, testkit.RunListener(t, l)
}
