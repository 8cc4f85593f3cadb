package testkit

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The CPU time benchmarks report beside wall time: on a shared machine it
// says what the code cost, whatever else ran.

// SelfCPU is this process's user and system CPU time so far.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PostgresCPU is the CPU time so far of the test cluster's postgres
// processes: its postmaster (the parent of this connection's backend) and
// every child of it. Other clusters on the machine (other engineers' test
// runs) are not counted.
func PostgresCPU(b testing.TB, pool *pgxpool.Pool) time.Duration {
	var backend int
	if err := pool.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		b.Fatal(err)
	}
	fields := func(pid int) []string {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || !strings.Contains(string(raw), "(postgres)") {
			return nil
		}
		// After "(comm) ": state, ppid, …, utime (12th), stime (13th).
		return strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	}
	own := fields(backend)
	if own == nil {
		b.Skip("the backend's /proc entry is not readable")
	}
	postmaster := own[1]
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, f := range stats {
		pid, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(f, "/proc/"), "/stat"))
		fs := fields(pid)
		if fs == nil || (fs[1] != postmaster && strconv.Itoa(pid) != postmaster) {
			continue
		}
		ut, _ := strconv.ParseInt(fs[11], 10, 64)
		st, _ := strconv.ParseInt(fs[12], 10, 64)
		ticks += ut + st
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
