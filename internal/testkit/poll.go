package testkit

import (
	"testing"
	"time"
)

// Eventually polls cond every 50 ms (an API poll stays well inside a
// key's rate limit) until it holds, failing the test with
// what (the condition that did not come true) once within has passed.
// It synchronises with work that finishes in the background (a fold, a
// notification reaching another instance) without guessing its duration.
func Eventually(t testing.TB, within time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
