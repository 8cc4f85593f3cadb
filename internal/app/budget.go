package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkqr/linkqr/internal/budget"
)

// budgetCollector exports the process's budgets (internal/budget) per
// class: what is in use, waiting, admitted and refused.
type budgetCollector struct {
	inUse, waiting, admitted, refused *prometheus.Desc
}

func registerBudgetMetrics(r *prometheus.Registry) {
	r.MustRegister(&budgetCollector{
		inUse:    prometheus.NewDesc("linkqr_budget_in_use", "Units of a budget class in use now (requests, or bytes for logo and upload).", []string{"class"}, nil),
		waiting:  prometheus.NewDesc("linkqr_budget_waiting", "Requests of a budget class waiting for room now.", []string{"class"}, nil),
		admitted: prometheus.NewDesc("linkqr_budget_admitted_total", "Requests a budget class admitted.", []string{"class"}, nil),
		refused:  prometheus.NewDesc("linkqr_budget_refused_total", "Requests a budget class refused (429 or 503 with Retry-After).", []string{"class"}, nil),
	})
}

func (c *budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.inUse
	ch <- c.waiting
	ch <- c.admitted
	ch <- c.refused
}

func (c *budgetCollector) Collect(ch chan<- prometheus.Metric) {
	b := budget.Process()
	for cl := range budget.NumClasses {
		s, name := b.Stats(cl), cl.String()
		ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(s.InUse), name)
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(s.Waiting), name)
		ch <- prometheus.MustNewConstMetric(c.admitted, prometheus.CounterValue, float64(s.Admitted), name)
		ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(s.Refusals), name)
	}
}
