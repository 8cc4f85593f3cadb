package oauth

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestGrantToucherDue: an access token's use of a grant is written at most
// once per grantTouchInterval per grant, so a busy app costs one write a
// minute, not one per request; another grant has its own interval.
func TestGrantToucherDue(t *testing.T) {
	t.Parallel()
	var g grantToucher
	a, b := uuid.New(), uuid.New()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		id   uuid.UUID
		at   time.Duration
		want bool
	}{
		{a, 0, true},
		{a, time.Second, false},
		{b, time.Second, true},
		{a, grantTouchInterval - time.Nanosecond, false},
		{a, grantTouchInterval, true},
		{a, grantTouchInterval + 30*time.Second, false},
		{b, grantTouchInterval + 2*time.Second, true},
	}
	for i, s := range steps {
		if got := g.due(s.id, t0.Add(s.at)); got != s.want {
			t.Errorf("step %d (%v at +%v): due %v, want %v", i, s.id == a, s.at, got, s.want)
		}
	}
}

// TestGrantToucherBounded: the map starts over instead of growing past
// maxTouched entries.
func TestGrantToucherBounded(t *testing.T) {
	t.Parallel()
	var g grantToucher
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for range maxTouched + 10 {
		g.due(uuid.New(), now)
	}
	if n := len(g.last); n > maxTouched {
		t.Fatalf("%d entries, want at most %d", n, maxTouched)
	}
}
