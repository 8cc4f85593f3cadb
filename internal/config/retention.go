package config

import (
	"fmt"
	"strconv"
	"time"
)

// Retention is how long linkqr keeps what it no longer needs and how much
// the retention jobs (internal/retention) delete at a time.
type Retention struct {
	// Events (LINKQR_EVENT_RETENTION_DAYS, 30) is how long webhook delivery
	// attempts and events are kept.
	Events time.Duration
	// Invitations (LINKQR_INVITATION_RETENTION_DAYS, 30) is how long an
	// accepted, declined, revoked or expired invitation is kept.
	Invitations time.Duration
	// Audit (LINKQR_AUDIT_RETENTION_DAYS, 365) is how long a workspace's
	// audit log entries are kept.
	Audit time.Duration
	// ScanMonths (LINKQR_SCAN_RETENTION_MONTHS, 13) is how many whole
	// months of raw scans a workspace without a setting of its own keeps.
	ScanMonths int
	// BatchSize (LINKQR_RETENTION_BATCH_SIZE, 5000) bounds the rows one
	// DELETE statement removes, MaxBatches (LINKQR_RETENTION_MAX_BATCHES,
	// 50) the statements of one run of one job.
	BatchSize  int
	MaxBatches int
	// Interval (LINKQR_RETENTION_INTERVAL, 1h) is how often the jobs run.
	Interval time.Duration
}

// DefaultRetention is the retention of a deployment that sets nothing.
func DefaultRetention() Retention {
	return Retention{
		Events: 30 * 24 * time.Hour, Invitations: 30 * 24 * time.Hour, Audit: 365 * 24 * time.Hour, ScanMonths: 13,
		BatchSize: 5000, MaxBatches: 50, Interval: time.Hour,
	}
}

func loadRetention(getenv func(string) string) (Retention, error) {
	r := DefaultRetention()
	for _, v := range []struct {
		name   string
		dst    *int
		lo, hi int
		unit   string
	}{
		{"LINKQR_SCAN_RETENTION_MONTHS", &r.ScanMonths, 1, 1200, "months"},
		{"LINKQR_RETENTION_BATCH_SIZE", &r.BatchSize, 1, 5000, "rows"},
		{"LINKQR_RETENTION_MAX_BATCHES", &r.MaxBatches, 1, 1000, "statements"},
	} {
		if err := intVar(getenv, v.name, v.dst, v.lo, v.hi, v.unit); err != nil {
			return r, err
		}
	}
	for _, v := range []struct {
		name string
		dst  *time.Duration
	}{{"LINKQR_EVENT_RETENTION_DAYS", &r.Events}, {"LINKQR_INVITATION_RETENTION_DAYS", &r.Invitations}, {"LINKQR_AUDIT_RETENTION_DAYS", &r.Audit}} {
		days := int(*v.dst / (24 * time.Hour))
		if err := intVar(getenv, v.name, &days, 1, 3650, "days"); err != nil {
			return r, err
		}
		*v.dst = time.Duration(days) * 24 * time.Hour
	}
	var err error
	r.Interval, err = durationVar(getenv, "LINKQR_RETENTION_INTERVAL", r.Interval, time.Minute, 24*time.Hour)
	return r, err
}

// intVar reads a whole number within [lo, hi] into dst when the variable is set.
func intVar(getenv func(string) string, name string, dst *int, lo, hi int, unit string) error {
	v := getenv(name)
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return &Error{name, v, fmt.Sprintf("must be a whole number of %s from %d to %d", unit, lo, hi)}
	}
	*dst = n
	return nil
}
