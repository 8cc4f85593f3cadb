package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func result(ok, errs uint64, lat time.Duration) loadResult {
	r := loadResult{OK: ok, Errors: errs, Elapsed: time.Second}
	for range ok + errs {
		r.Latency.Record(lat)
	}
	return r
}

func goodReport() *report {
	return &report{
		RedirectLinkqr: phase{Warm: result(100, 0, time.Millisecond), Measured: result(600, 0, 2*time.Millisecond)},
		RedirectBare:   phase{Measured: result(1000, 0, time.Millisecond)},
		APILinkqr:      phase{Measured: result(400, 0, 3*time.Millisecond)},
		APIBare:        phase{Measured: result(1000, 0, time.Millisecond)},
		PeakRSS:        80 << 20,
		ScansChecked:   true, ScansWant: 700, ScansGot: 700,
	}
}

func TestReportVerdicts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(*report)
		want   verdict
		output string
	}{
		{"all good", func(*report) {}, verdict{true, true}, "0.60"},
		{"lost scans", func(r *report) { r.ScansGot = 690 }, verdict{false, true}, "(10 lost)"},
		{"extra scans", func(r *report) { r.ScansGot = 701 }, verdict{false, true}, "(1 extra"},
		{"extra scans in flight", func(r *report) { r.ScansGot, r.ScansSlack = 764, 64 }, verdict{true, true}, "(64 extra, in flight"},
		{"more extra than in flight", func(r *report) { r.ScansGot, r.ScansSlack = 765, 64 }, verdict{false, true}, "(65 extra"},
		{"scan check failed", func(r *report) { r.ScanErr = errors.New("boom") }, verdict{false, true}, "boom"},
		{"warm-up error", func(r *report) { r.RedirectLinkqr.Warm = result(99, 1, time.Millisecond) }, verdict{false, true}, "errors (all phases)      1"},
		{"slow redirect", func(r *report) { r.RedirectLinkqr.Measured = result(400, 0, time.Millisecond) }, verdict{true, false}, "0.40"},
		{"slow p99", func(r *report) { r.RedirectLinkqr.Measured = result(600, 0, 30*time.Millisecond) }, verdict{true, false}, "FAIL"},
		{"slow API", func(r *report) { r.APILinkqr.Measured = result(200, 0, time.Millisecond) }, verdict{true, false}, "0.20"},
		{"fat", func(r *report) { r.PeakRSS = 200 << 20 }, verdict{true, false}, "200 MiB"},
		{"bare only", func(r *report) { r.BareOnly, r.ScansChecked = true, false }, verdict{true, true}, "not checked"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := goodReport()
			tc.change(r)
			var out strings.Builder
			if got := r.print(&out); got != tc.want {
				t.Errorf("verdict %+v, want %+v\n%s", got, tc.want, out.String())
			}
			if !strings.Contains(out.String(), tc.output) {
				t.Errorf("output lacks %q:\n%s", tc.output, out.String())
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	t.Parallel()
	var sink strings.Builder
	o, err := parseOptions(nil, &sink)
	if err != nil || o.Conns != 64 || o.Duration != 10*time.Second || o.Warmup != 2*time.Second || o.Links != 10_000 || o.Rounds != 2 || o.Strict {
		t.Fatalf("defaults %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-conns", "0"}, {"-duration", "0s"}, {"extra"}, {"-links", "-1"}, {"-rounds", "0"}, {"-nope"}} {
		if _, err := parseOptions(bad, &sink); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
