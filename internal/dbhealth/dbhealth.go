// Package dbhealth knows whether PostgreSQL is reachable, as this process
// last saw it. During an outage every request that needs the database
// would otherwise pay a connection attempt (or a connect timeout) before
// failing; with a shared verdict they fail at once (the API's 503, an
// uncached code's 503) while what can be served from memory (cached codes)
// still is, and /readyz and /metrics say so.
//
// The verdict moves to down on evidence of an outage only: a failed probe
// or a connection error reported by a caller (store.Unreachable), never on
// latency alone, so a slow database keeps being waited for. It moves back
// to up on the first probe that succeeds; while down, probes run every
// DownProbeInterval, so recovery is seen within about that.
package dbhealth

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/linkqr/linkqr/internal/store"
)

// Probe intervals and the timeout of one probe. Up, a probe every 2 s
// notices an outage even when no request does (an idle instance's /readyz);
// down, every 250 ms, so traffic resumes within a quarter second of the
// database's return.
const (
	UpProbeInterval   = 2 * time.Second
	DownProbeInterval = 250 * time.Millisecond
	ProbeTimeout      = time.Second
)

// RetryAfter is what answers refused during an outage tell clients
// (Retry-After, whole seconds).
const RetryAfter = time.Second

// Monitor holds the verdict. The zero value is not usable; use New.
type Monitor struct {
	ping func(context.Context) error
	log  *slog.Logger
	down atomic.Bool
	wake chan struct{} // a reported failure makes Run probe at once
}

// New returns a monitor that probes with ping (a pool's Ping) once Run runs.
func New(ping func(context.Context) error, log *slog.Logger) *Monitor {
	return &Monitor{ping: ping, log: log, wake: make(chan struct{}, 1)}
}

// Up reports whether the database is believed reachable. A nil Monitor
// always says up (tests and tools without one).
func (m *Monitor) Up() bool { return m == nil || !m.down.Load() }

// Observe takes an error of a database call: a connection error marks the
// database down at once (and wakes the prober, which marks it up again as
// soon as it answers); anything else, nil included, is ignored. It
// reports whether err was such an error (a nil Monitor judges too), so an
// edge can answer "database unreachable" without knowing the store.
func (m *Monitor) Observe(err error) bool {
	if !store.Unreachable(err) {
		return false
	}
	if m == nil {
		return true
	}
	m.setDown(true, err)
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return true
}

// Reached says a connection just succeeded (LISTEN was re-established),
// so the database answers: the verdict is up without waiting for the next
// probe.
func (m *Monitor) Reached() {
	if m != nil {
		m.setDown(false, nil)
	}
}

// Run probes until ctx ends.
func (m *Monitor) Run(ctx context.Context) {
	for {
		interval := UpProbeInterval
		if m.down.Load() {
			interval = DownProbeInterval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		case <-m.wake:
		}
		pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
		err := m.ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil:
			m.setDown(false, nil)
		case store.Unreachable(err):
			m.setDown(true, err)
		}
		// A probe that only timed out changes nothing: waiting for a
		// busy pool's connection is slowness, not an outage.
	}
}

func (m *Monitor) setDown(down bool, err error) {
	if m.down.Swap(down) == down {
		return
	}
	if down {
		m.log.Error("database unreachable: serving cached codes, buffering scans, refusing the API with 503", "err", err)
	} else {
		m.log.Info("database reachable again")
	}
}
