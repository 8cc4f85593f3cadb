package testkit

import (
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// Eventually is wait.For (cond asked every 50 ms) until it holds, failing the test with
// what (the condition that did not come true) once within has passed.
// It synchronises with work that finishes in the background (a fold, a
// notification reaching another instance) without guessing its duration.
func Eventually(t testing.TB, within time.Duration, cond func() bool, what string) {
	t.Helper()
	wait.For(t, within, cond, what)
}
