// Package metrics owns the process's Prometheus registry and the HTTP
// instrumentation. Every label value comes from a fixed, small set, never
// from what a client sent: route patterns ("/api/v1/links/{id}", or
// Unmatched), the standard methods (or "other") and the status codes
// net/http knows (or "other"). A client inventing methods or paths creates no
// new series, so the registry and /metrics stay the same size however long
// the process runs.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the set of collectors of one process. Domain packages receive
// the collectors they update (scans recorded, deliveries by outcome, queue
// depth) from here rather than registering globals.
type Metrics struct {
	Registry *prometheus.Registry

	// ScansRecorded counts scans committed to the database, by kind
	// ("human" or "bot").
	ScansRecorded *prometheus.CounterVec
	// ScanFlushErrors counts failed (and retried) scan batch writes.
	ScanFlushErrors prometheus.Counter
	// ScanWrite is how long each batch write took, rows prepared to commit;
	// ScanUnwrittenAge how long each batch's oldest scan had been answered
	// when its batch committed (against the crash bound's 100 ms).
	ScanWrite, ScanUnwrittenAge prometheus.Histogram
	// ScansDropped counts scans dropped, oldest first, because the outage
	// buffer was full while the database was unreachable.
	ScansDropped prometheus.Counter
	// ScansFolded counts human scans folded into the analytics rollups;
	// FoldDuration is how long each fold took; FoldErrors counts failed
	// (and later retried) folds.
	ScansFolded  prometheus.Counter
	FoldDuration prometheus.Histogram
	FoldErrors   prometheus.Counter

	// WebhookDeliveries counts recorded delivery attempts by outcome
	// ("succeeded" or "failed").
	WebhookDeliveries *prometheus.CounterVec
	// WebhookLatency is the HTTP round-trip time of delivery attempts.
	WebhookLatency prometheus.Histogram

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	series   sync.Map // httpSeries -> httpCollectors
}

// New registers the HTTP collectors and the Go/process collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkqr_http_requests_total",
			Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "linkqr_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"route", "method"}),
	}
	m.ScansRecorded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "linkqr_scans_recorded_total",
		Help: "Scans written to the database, by kind (human or bot).",
	}, []string{"kind"})
	m.ScanFlushErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "linkqr_scan_flush_errors_total",
		Help: "Scan batch writes that failed and were retried.",
	})
	m.ScanWrite = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "linkqr_scan_write_duration_seconds",
		Help:    "How long each batch of scans took to write: its rows prepared (user agents classified, visitors hashed), the COPY and the commit.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	})
	m.ScanUnwrittenAge = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "linkqr_scan_unwritten_age_seconds",
		Help:    "How long the oldest scan of each written batch had been answered when the batch committed: what a hard crash just before would have lost of it.",
		Buckets: []float64{.005, .01, .025, .05, .075, .1, .15, .25, .5, 1, 2.5},
	})
	m.ScansDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "linkqr_scans_dropped_total",
		Help: "Accepted scans dropped (the oldest first) because the outage buffer was full while the database was unreachable.",
	})
	m.ScansFolded = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "linkqr_scans_folded_total",
		Help: "Human scans added to the analytics rollups and scan_count by the fold.",
	})
	m.FoldDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "linkqr_scan_fold_duration_seconds",
		Help:    "How long each fold of recorded scans into the analytics rollups took.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})
	m.FoldErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "linkqr_scan_fold_errors_total",
		Help: "Folds that failed; their scans stay queued for the next one.",
	})
	m.WebhookDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "linkqr_webhook_deliveries_total",
		Help: "Webhook delivery attempts recorded, by outcome (succeeded or failed).",
	}, []string{"outcome"})
	for _, o := range []string{"succeeded", "failed"} {
		m.WebhookDeliveries.WithLabelValues(o) // present at 0 before the first attempt
	}
	m.WebhookLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "linkqr_webhook_delivery_duration_seconds",
		Help:    "Round-trip time of webhook delivery attempts, from sending the request to the receiver's answer (or the failure).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})
	reg.MustRegister(m.requests, m.latency, m.ScansRecorded, m.ScanFlushErrors, m.ScanWrite, m.ScanUnwrittenAge, m.ScansDropped, m.ScansFolded, m.FoldDuration, m.FoldErrors, m.WebhookDeliveries, m.WebhookLatency,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// GaugeFunc registers a gauge read from fn at scrape time (queue depths).
func (m *Metrics) GaugeFunc(name, help string, fn func() float64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

// Total registers a counter without labels read from fn at scrape time
// (a running total kept elsewhere).
func (m *Metrics) Total(name, help string, fn func() float64) {
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, fn))
}

// QueueSnapshot is one reading of a job queue: unfinished jobs by state,
// and how long the oldest due job has waited.
type QueueSnapshot struct {
	Depth     map[string]int64
	OldestAge time.Duration
}

// WebhookQueue registers the webhook queue's gauges, read from read at
// scrape time with one call (one query) per scrape, bounded by a 2 s
// timeout: linkqr_webhook_queue_depth{state} for every state in states,
// and linkqr_webhook_oldest_pending_seconds. A failed reading reports
// nothing for that scrape rather than stale or zero values.
func (m *Metrics) WebhookQueue(states []string, read func(ctx context.Context) (QueueSnapshot, error)) {
	m.Registry.MustRegister(&queueCollector{
		states: states, read: read,
		depth: prometheus.NewDesc("linkqr_webhook_queue_depth",
			"Unfinished webhook delivery jobs in the River queue, by state.", []string{"state"}, nil),
		oldest: prometheus.NewDesc("linkqr_webhook_oldest_pending_seconds",
			"How long the oldest webhook delivery that is due has waited for a worker (0 when none waits).", nil, nil),
	})
}

type queueCollector struct {
	states        []string
	read          func(ctx context.Context) (QueueSnapshot, error)
	depth, oldest *prometheus.Desc
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.depth; ch <- c.oldest }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	snap, err := c.read(ctx)
	if err != nil {
		return
	}
	for _, s := range c.states { // only the known states: a bounded label set
		ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(snap.Depth[s]), s)
	}
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, snap.OldestAge.Seconds())
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// Unmatched is the route label of every request no route matched (unknown
// paths, unknown methods), however many different ones clients send.
const Unmatched = "unmatched"

// OtherLabel stands for every method or status code outside the known set.
const OtherLabel = "other"

// ObserveHTTP counts and times one finished request. route is the matched
// chi route pattern, or "" (counted as Unmatched) when none matched; the
// caller must never pass a raw path. method and status are reduced to their
// bounded label sets here.
func (m *Metrics) ObserveHTTP(route, method string, status int, d time.Duration) {
	if route == "" {
		route = Unmatched
	}
	k := httpSeries{route, MethodLabel(method), CodeLabel(status)}
	s, ok := m.series.Load(k)
	if !ok {
		// Labels are bounded (route patterns, known methods and codes),
		// so the cache is too; it spares the redirect two label hashes.
		s, _ = m.series.LoadOrStore(k, httpCollectors{m.requests.WithLabelValues(k.route, k.method, k.code), m.latency.WithLabelValues(k.route, k.method)})
	}
	c := s.(httpCollectors)
	c.count.Inc()
	c.latency.Observe(d.Seconds())
}

// httpSeries is one labelled series of the HTTP metrics.
type httpSeries struct{ route, method, code string }

type httpCollectors struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// MethodLabel is method when it is one of the nine methods of RFC 9110 and
// RFC 5789 (case-sensitive, as HTTP methods are), else OtherLabel: net/http
// accepts any token as a method, so the raw value is unbounded.
func MethodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return OtherLabel
}

// codeLabels holds the label of every status code net/http has a name for,
// built once so labelling a request allocates nothing.
var codeLabels = func() map[int]string {
	m := map[int]string{}
	for code := 100; code < 600; code++ {
		if http.StatusText(code) != "" {
			m[code] = strconv.Itoa(code)
		}
	}
	return m
}()

// CodeLabel is the status code as a label when net/http knows the code,
// else OtherLabel; handlers only send known codes, so "other" flags a bug.
func CodeLabel(status int) string {
	if l, ok := codeLabels[status]; ok {
		return l
	}
	return OtherLabel
}

// CounterFunc registers a counter with one label, "work", whose values are
// read from fns at scrape time.
func (m *Metrics) CounterFunc(name, help string, fns map[string]func() float64) {
	for work, fn := range fns {
		m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: name, Help: help, ConstLabels: prometheus.Labels{"work": work},
		}, fn))
	}
}
