// Package metrics owns the process's Prometheus registry and the HTTP
// instrumentation. Labels use chi route patterns ("/api/v1/links/{id}"),
// never raw paths, so cardinality stays bounded whatever clients request.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
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

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
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
	reg.MustRegister(m.requests, m.latency, m.ScansRecorded, m.ScanFlushErrors,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// GaugeFunc registers a gauge read from fn at scrape time (queue depths).
func (m *Metrics) GaugeFunc(name, help string, fn func() float64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// ObserveHTTP counts and times one finished request by its matched route
// pattern; call it after the router has run so the pattern is known.
func (m *Metrics) ObserveHTTP(r *http.Request, status int, d time.Duration) {
	route := "unmatched"
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
		route = rc.RoutePattern()
	}
	m.requests.WithLabelValues(route, r.Method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route, r.Method).Observe(d.Seconds())
}
