package main

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// TestMain lets the test binary serve as the bare child too, so the whole
// harness runs end to end in TestRunBareOnly.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "bare" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		code := bareMain(ctx, os.Args[2:], os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestRunBareOnly runs every round of the bench, and each round first
// waits for the machine to settle (settle.go: up to 30 s when other work
// keeps the cores busy), so it takes from tens of seconds to minutes.
func TestRunBareOnly(t *testing.T) {
	strict.SkipShort(t, "the bench harness end to end (every round waits for the machine to settle)")
	var stdout, stderr strings.Builder
	code := run(context.Background(), []string{"-target-bare-only", "-duration", "300ms", "-warmup", "100ms", "-conns", "4", "-links", "5", "-keys", "2"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	// The custom-domain rounds run against bare#2 too, whose custom links
	// share the default links' codes: a lost Host header would send them
	// to the default targets, which the target check counts as wrong.
	for _, want := range []string{"redirect bare#2", "redirect custom, round 2", "Host go.bench.example", "ratio custom/bare#2", "redirect targets         10 of 10 right",
		"redirect no-geo, round 1", "redirect geo, round 2", "ratio geo/no-geo", "scans with a country     not checked",
		"api GET link bare", "errors (all phases)      0", "not checked", "OK: correct"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, &stdout)
		}
	}
	for _, want := range []string{"load: redirect bare#2", "load: redirect bare#2 on go.bench.example (round 1)", "load: redirect bare#2 geo (round 2)", "country rounds: 1250 public addresses (250 IPv6)", "stopping bare server", "stopping bare#2"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, &stderr)
		}
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if code := run(context.Background(), []string{"-conns", "x"}, &out, &out); code != 2 {
		t.Fatalf("exit %d for a bad flag", code)
	}
	if code := run(context.Background(), []string{"-linkqr", "/nonexistent/linkqr", "-duration", "1s"}, &out, &out); code != 1 || !strings.Contains(out.String(), "make build") {
		t.Fatalf("exit %d for a missing binary:\n%s", code, &out)
	}
}
