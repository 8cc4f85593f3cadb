package testkit

import (
	"os/exec"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// Strict reports LINKQR_TEST_STRICT=1 (internal/testkit/strict: the one
// rule), under which CI turns every skip into a failure.
func Strict() bool { return strict.On() }

// SkipUnlessStrict skips the test with a loud reason, or fails it in strict
// mode (strict.Skip).
func SkipUnlessStrict(t testing.TB, reason string) {
	t.Helper()
	strict.Skip(t, reason)
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
