package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Settling before a closed-loop round: what the previous round left behind
// (linkqr's PostgreSQL folding, vacuuming and checkpointing its scans) must
// not run during the next one. (It does not explain why bare's second round
// is often slower than its first on the 2-core development machine: that
// happens with the machine idle before it too.)
const (
	settleIdle    = 0.85 // the share of CPU time idle that counts as quiet
	settleWindow  = 500 * time.Millisecond
	settleTimeout = 30 * time.Second // then the round runs anyway, and says so
)

// settle waits until the machine is quiet (idle at least settleIdle over a
// window) or settleTimeout passes. Off Linux it returns at once.
func (b *bench) settle(ctx context.Context, before string) {
	start := time.Now()
	for {
		idle, err := idleShare(ctx, settleWindow)
		if err != nil {
			return // no /proc/stat: nothing to wait for
		}
		if idle >= settleIdle {
			if waited := time.Since(start); waited > 2*settleWindow {
				b.progress("settled after %v before %s", waited.Round(100*time.Millisecond), before)
			}
			return
		}
		if time.Since(start) >= settleTimeout || ctx.Err() != nil {
			b.progress("WARNING: the machine is still busy (%.0f%% of CPU time) after %v; %s runs anyway and its figures are noisy", 100*(1-idle), settleTimeout, before)
			return
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
