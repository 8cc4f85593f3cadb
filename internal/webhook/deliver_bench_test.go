package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/webhook"
)

// BenchmarkDelivery is what one scan.created costs from the scan to the
// receiver's 2xx, the way production does it: the recorder writes the scan
// and its event and enqueues the delivery in one transaction, River (the
// production queue settings) fetches it, a worker signs and posts it and
// records the attempt, River completes it. It reports the CPU time per
// delivery of this process (recorder, River, workers and the receiver)
// and of PostgreSQL (every postgres process of the test cluster, none of
// another cluster on the machine), the figures the keep-pace target of
// `make bench` depends on. One op is deliveriesPerOp deliveries, so that
// even the harness's first, shortest runs amortise River's polling and the
// pipeline's fixed latency.
func BenchmarkDelivery(b *testing.B) {
	const deliveriesPerOp = 2000
	e := setup(b, opts{})
	ctx := context.Background()
	var got atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	e.create(b, rcv.URL+"/hook", event.ScanCreated)
	workers := river.NewWorkers()
	river.AddWorker(workers, e.svc.Worker())
	client, err := river.NewClient(riverpgxv5.New(e.pool), &river.Config{
		Logger: discard(), Workers: workers,
		Queues: map[string]river.QueueConfig{webhook.Queue: {MaxWorkers: webhook.Workers, FetchCooldown: 10 * time.Millisecond}},
	})
	if err != nil {
		b.Fatal(err)
	}
	e.svc.UseJobs(client)
	start(b, client)
	hasher, _ := analytics.NewVisitorHasher(make([]byte, 32))
	rec := scan.NewRecorder(scan.Options{
		DB: e.db, Log: discard(), Hasher: hasher,
		Subscriptions: e.svc, Events: &event.Recorder{Fanout: e.svc.Fanout},
	})
	go rec.Run()
	defer func() { _ = rec.Close(ctx) }()
	links := make([]uuid.UUID, 100)
	for i := range links {
		links[i] = testkit.Link(b, e.pool, &testkit.LinkOpts{WorkspaceID: e.ws})
	}

	pg0, self0 := testkit.PostgresCPU(b, e.pool), testkit.SelfCPU()
	b.ResetTimer()
	total := b.N * deliveriesPerOp
	for i := range total {
		hit := scan.Hit{LinkID: links[i%len(links)], WorkspaceID: e.ws, At: time.Now(), UserAgent: iPhone, ClientIP: netip.MustParseAddr("192.0.2.7")}
		if err := rec.Record(ctx, hit); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for got.Load() < int64(total) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d delivered", got.Load(), total)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	n := float64(total)
	b.ReportMetric(float64((testkit.PostgresCPU(b, e.pool)-pg0).Microseconds())/n, "pg-µs/delivery")
	b.ReportMetric(float64((testkit.SelfCPU()-self0).Microseconds())/n, "go-µs/delivery")
}
