// Package strict is the one rule for a test that does not run: it is
// skipped, loudly, with its reason. A test whose machine lacks a
// prerequisite (a binary, a service) is skipped except under
// LINKQR_TEST_STRICT=1 (CI), where it fails, so a green CI run means every
// test ran (Skip). A test too slow for the fast lane, go test -short, is
// skipped there and only there (SkipShort); CI does not run -short. It
// imports nothing of linkqr, so every package's tests can use it.
package strict

import (
	"os"
	"testing"
)

// On reports LINKQR_TEST_STRICT=1.
func On() bool { return os.Getenv("LINKQR_TEST_STRICT") == "1" }

// Skip skips the test with reason, or fails it when strict.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if On() {
		t.Fatalf("LINKQR_TEST_STRICT=1 and %s", reason)
	}
	t.Skipf("SKIPPED (machine lacks a prerequisite): %s", reason)
}

// SkipShort skips the test under go test -short, saying what it is
// ("the hostile-input suite") and that it is "not in the -short lane";
// without -short it does nothing. The -short lane is asked for by name, so
// strict mode does not turn this skip into a failure.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: not in the -short lane", what)
	}
}
