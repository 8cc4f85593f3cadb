package app

import (
	"runtime"

	"github.com/linkqr/linkqr/internal/analytics"

	"github.com/linkqr/linkqr/internal/priority"
)

// How work yields to the redirect (internal/priority). The redirect is busy
// from 1,000 requests a second per core: on 2 cores that is about a
// fifteenth of what this instance can serve (30,000 a second in make
// bench), so below it deliveries and reports run unpaced. While it is busy:
//   - webhook attempts start at most deliveryPace a second (burst of one
//     worker set): an attempt costs about a millisecond of CPU across
//     linkqr and PostgreSQL, and at 100 a second the redirect during the
//     bench's fan-out measured 0.49x bare, at 50 0.55-0.61x; the queue
//     waits in PostgreSQL and drains at full speed once the burst is over;
//   - analytics reports may take reportPaceMs of report time a second,
//     a tenth of one core, beyond which a report waits (up to the
//     analytics wait, then 503 with Retry-After).
const (
	busyRedirectsPerCore = 1000
	deliveryPace         = 50
	deliveryBurst        = 32
	reportPaceMs         = 100
	reportBurstMs        = 200
)

// newPriority builds the governor and the budgets of the yielding work.
func (a *App) newPriority() {
	a.Priority = priority.NewGovernor(int64(busyRedirectsPerCore * runtime.GOMAXPROCS(0)))
	a.deliveryPace = priority.NewBudget(a.Priority, deliveryPace, deliveryBurst)
	a.reportPace = priority.NewBudget(a.Priority, reportPaceMs, reportBurstMs)
	a.Metrics.GaugeFunc("linkqr_redirect_busy", "1 while the redirect serves enough requests that deliveries and analytics yield to it.", func() float64 {
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
