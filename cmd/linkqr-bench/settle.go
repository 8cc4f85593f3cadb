package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Settling before a round: what the previous round left behind must not
// run during the next one. linkqr folds the scans of a saturated round
// only after it (every 30 s while saturated, then on its next 5 s tick),
// so the machine can look idle for a few seconds and then spend several
// on that fold: before settle waited for it, the fold ran inside the bare
// server's second round and made it 25-35 % slower than its first
// (78,000-83,000 against 55,000-60,000 req/s). PostgreSQL's vacuuming and checkpointing
// are waited for as idle time.
const (
	settleIdle    = 0.85 // the share of CPU time idle that counts as quiet
	settleWindow  = 500 * time.Millisecond
	settleTimeout = 30 * time.Second // then the round runs anyway, and says so
	// foldTimeout bounds the wait for linkqr's fold of the last round.
	foldTimeout = 90 * time.Second
)

// settle waits until linkqr has folded the scans of the last load, then
// until the machine is quiet (idle at least settleIdle over a window) or
// settleTimeout passes. Off Linux it does not wait for idleness. It
// reports whether both waits ended in time: if not, what runs next runs
// beside other work and its figures are noisy.
func (b *bench) settle(ctx context.Context, before string) bool {
	folded := b.waitFolded(ctx, before)
	start := time.Now()
	for {
		idle, err := idleShare(ctx, settleWindow)
		if err != nil {
			return folded // no /proc/stat: nothing to wait for
		}
		if idle >= settleIdle {
			if waited := time.Since(start); waited > 2*settleWindow {
				b.progress("settled after %v before %s", waited.Round(100*time.Millisecond), before)
			}
			return folded
		}
		if time.Since(start) >= settleTimeout || ctx.Err() != nil {
			b.progress("WARNING: the machine is still busy (%.0f%% of CPU time) after %v; %s runs anyway and its figures are noisy", 100*(1-idle), settleTimeout, before)
			return false
		}
	}
}

// waitFolded waits until a fold that began after the last load has
// finished: linkqr_scan_fold_lag_seconds (the time since the as_of of the
// last finished fold, which is when that fold began) is then shorter than
// the time since the load ended.
func (b *bench) waitFolded(ctx context.Context, before string) bool {
	if b.linkqrMetrics == "" || b.loadEnded.IsZero() {
		return true
	}
	start := time.Now()
	for {
		lag, ok := metricValue(ctx, b.linkqrMetrics, "linkqr_scan_fold_lag_seconds")
		if !ok {
			return true // not a linkqr that folds (or gone): nothing to wait for
		}
		if time.Duration(lag*float64(time.Second)) < time.Since(b.loadEnded) {
			if waited := time.Since(start); waited > time.Second {
				b.progress("linkqr folded the last load's scans after %v, before %s", waited.Round(100*time.Millisecond), before)
			}
			return true
		}
		if time.Since(start) >= foldTimeout || ctx.Err() != nil {
			b.progress("WARNING: linkqr has not folded the last load's scans after %v; %s runs anyway and may run beside that fold", foldTimeout, before)
			return false
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

// idleShare is the share of CPU time spent idle over window, from
// /proc/stat.
func idleShare(ctx context.Context, window time.Duration) (float64, error) {
	idle0, total0, err := cpuTimes()
	if err != nil {
		return 0, err
	}
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	idle1, total1, err := cpuTimes()
	if err != nil {
		return 0, err
	}
	if total1 <= total0 {
		return 1, nil
	}
	return float64(idle1-idle0) / float64(total1-total0), nil
}

// cpuTimes returns the idle (idle + iowait) and total jiffies of all CPUs.
func cpuTimes() (idle, total uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseCPULine(string(b))
}

// parseCPULine reads the "cpu" line of /proc/stat.
func parseCPULine(stat string) (idle, total uint64, err error) {
	line, _, _ := strings.Cut(stat, "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %q: %w", f, err)
		}
		total += v
		if i == 3 || i == 4 { // idle, iowait
			idle += v
		}
	}
	return idle, total, nil
}
