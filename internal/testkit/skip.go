package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// Strict reports LINKQR_TEST_STRICT=1, under which CI turns every skip into a
// failure: a green run must mean every test ran.
func Strict() bool { return os.Getenv("LINKQR_TEST_STRICT") == "1" }

// SkipUnlessStrict skips the test with a loud reason, or fails it in strict mode.
func SkipUnlessStrict(t testing.TB, reason string) {
	t.Helper()
	if Strict() {
		t.Fatalf("LINKQR_TEST_STRICT=1 and %s", reason)
	}
	t.Skipf("SKIPPED (machine lacks a prerequisite): %s", reason)
}

// RequireBinary returns the path of an executable, skipping (or failing in
// strict mode) when it is not installed.
func RequireBinary(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		SkipUnlessStrict(t, name+" is not installed")
	}
	return p
}
