package config

import (
	"strings"
	"testing"
	"time"
)

func TestLoadRetention(t *testing.T) {
	t.Parallel()
	c, err := Load(env(), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Retention != DefaultRetention() || c.Retention.Events != 30*24*time.Hour || c.Retention.Audit != 365*24*time.Hour || c.Retention.ScanMonths != 13 || c.Retention.BatchSize != 5000 {
		t.Errorf("defaults: %+v", c.Retention)
	}
	c, err = Load(env(
		"LINKQR_EVENT_RETENTION_DAYS", "7",
		"LINKQR_INVITATION_RETENTION_DAYS", "90",
		"LINKQR_AUDIT_RETENTION_DAYS", "730",
		"LINKQR_SCAN_RETENTION_MONTHS", "24",
		"LINKQR_RETENTION_BATCH_SIZE", "1000",
		"LINKQR_RETENTION_MAX_BATCHES", "10",
		"LINKQR_RETENTION_INTERVAL", "15m",
	), false)
	if err != nil {
		t.Fatal(err)
	}
	want := Retention{Events: 7 * 24 * time.Hour, Invitations: 90 * 24 * time.Hour, Audit: 730 * 24 * time.Hour, ScanMonths: 24, BatchSize: 1000, MaxBatches: 10, Interval: 15 * time.Minute}
	if c.Retention != want {
		t.Errorf("values: %+v, want %+v", c.Retention, want)
	}
	for _, tc := range []struct{ key, value string }{
		{"LINKQR_EVENT_RETENTION_DAYS", "0"},
		{"LINKQR_EVENT_RETENTION_DAYS", "30d"},
		{"LINKQR_INVITATION_RETENTION_DAYS", "3651"},
		{"LINKQR_AUDIT_RETENTION_DAYS", "0"},
		{"LINKQR_AUDIT_RETENTION_DAYS", "a year"},
		{"LINKQR_SCAN_RETENTION_MONTHS", "0"},
		{"LINKQR_RETENTION_BATCH_SIZE", "5001"},
		{"LINKQR_RETENTION_MAX_BATCHES", "-1"},
		{"LINKQR_RETENTION_INTERVAL", "1s"},
	} {
		_, err := Load(env(tc.key, tc.value), false)
		if err == nil || !strings.HasPrefix(err.Error(), tc.key+"=") {
			t.Errorf("%s=%q: error %v, want one naming the variable", tc.key, tc.value, err)
		}
	}
}
