package app

import (
	"github.com/linkqr/linkqr/internal/analytics"

	"github.com/linkqr/linkqr/internal/priority"
)

// How work yields to the redirect (internal/priority): not at all until the
// process is saturated (the scheduling-latency p99 of the last second at or
// above LINKQR_SATURATION_LATENCY while the redirect serves at least
// priority.CapacityShare of its measured capacity). While it is:
//   - webhook attempts start at most LINKQR_SATURATED_DELIVERY_PACE a
//     second (burst of one worker set): an attempt costs about a
//     millisecond of CPU across linkqr and PostgreSQL; the queue waits in
//     PostgreSQL and drains at full speed once saturation is over;
//   - analytics reports may take reportPaceMs of report time a second,
//     a tenth of one core, beyond which a report waits (up to the
//     analytics wait, then 503 with Retry-After).
const (
	deliveryBurst = 32
	reportPaceMs  = 100
	reportBurstMs = 200
)

// newPriority builds the governor and the budgets of the yielding work.
func (a *App) newPriority() {
	a.Priority = priority.NewGovernor(a.Config.SaturationLatency)
	a.deliveryPace = priority.NewBudget(a.Priority, float64(a.Config.SaturatedDeliveryPace), deliveryBurst)
	a.reportPace = priority.NewBudget(a.Priority, reportPaceMs, reportBurstMs)
	a.Metrics.GaugeFunc("linkqr_scheduling_latency_p99_seconds", "How long runnable goroutines waited for a CPU, 99th percentile over the last second: the saturation signal.", func() float64 {
		return a.Priority.Latency().Seconds()
	})
	a.Metrics.GaugeFunc("linkqr_redirect_capacity_per_second", "The redirect's measured capacity: the most requests it served in a second while scheduling latency was at LINKQR_SATURATION_LATENCY.", func() float64 {
		return float64(a.Priority.Capacity())
	})
	a.Metrics.GaugeFunc("linkqr_redirect_busy", "1 while the process is saturated (scheduling latency at or above LINKQR_SATURATION_LATENCY while the redirect serves near its measured capacity), so deliveries and analytics yield to the redirect.", func() float64 {
		if a.Priority.Busy() {
			return 1
		}
		return 0
	})
	a.Metrics.CounterFunc("linkqr_yielded_seconds_total", "Time spent waiting for the redirect, by kind of work.", map[string]func() float64{
		"webhook_delivery": func() float64 { return a.deliveryPace.Waited().Seconds() },
		"analytics":        func() float64 { return a.reportPace.Waited().Seconds() },
	})
}

// analyticsLimits are the default limits, paced while the redirect is busy.
func (a *App) analyticsLimits() analytics.Limits {
	l := analytics.DefaultLimits()
	l.Pace = a.reportPace
	return l
}
