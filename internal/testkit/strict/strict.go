// Package strict is the one rule for a test whose machine lacks a
// prerequisite (a binary, a service): it is skipped, loudly, except under
// LINKQR_TEST_STRICT=1 (CI), where it fails, so a green CI run means every
// test ran. It imports nothing of linkqr, so every package's tests can use it.
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
