package app

import (
	"net"
	"time"
)

// SetBodyReadTimeout shortens BodyReadTimeout for one App, so tests of the
// deadline take a fraction of a second.
func (a *App) SetBodyReadTimeout(d time.Duration) { a.bodyReadTimeout.Store(int64(d)) }

// MetricsListenAddr is where Serve bound LINKQR_METRICS_ADDR, or nil before.
func (a *App) MetricsListenAddr() *net.TCPAddr { return a.metricsAddr.Load() }

// JobsID is the ID of this App's River client (river_job.attempted_by).
func (a *App) JobsID() string { return a.jobs.ID() }

// TLSListenAddr is where Serve bound LINKQR_TLS_ADDR, or nil before.
func (a *App) TLSListenAddr() *net.TCPAddr { return a.tlsAddr.Load() }
