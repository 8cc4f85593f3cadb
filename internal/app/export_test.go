package app

import "net"

// MetricsListenAddr is where Serve bound LINKQR_METRICS_ADDR, or nil before.
func (a *App) MetricsListenAddr() *net.TCPAddr { return a.metricsAddr.Load() }
