// Package wait is how a test waits for something that happens in the
// background: it asks again until the condition holds or the time is up,
// never sleeps a fixed time and hopes. It imports nothing of linkqr, so
// every package's own tests can use it (the test kit, which starts a whole
// server, cannot be imported by the packages the server is made of).
package wait

import (
	"testing"
	"time"
)

// Interval is how often For asks again: often enough that a test waits
// little past the moment, rarely enough that a condition asked through
// the API stays well inside a key's rate limit.
const Interval = 50 * time.Millisecond

// For waits until cond holds, asking every Interval, and fails the test
// naming what did not happen when within passes first.
func For(t testing.TB, within time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(Interval)
	}
}
