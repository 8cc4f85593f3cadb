package analytics

import (
	"net/url"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/tz"
)

func TestIntervalTruncate(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	cases := []struct {
		in   string
		i    Interval
		want string
	}{
		{"2026-11-22T23:59:59Z", Week, "2026-11-16T00:00:00Z"}, // Sunday → previous Monday
		{"2026-11-16T00:00:00Z", Week, "2026-11-16T00:00:00Z"}, // Monday
		{"2026-11-18T05:00:00+09:00", Day, "2026-11-17T00:00:00Z"},
		{"2026-11-18T05:59:59Z", Hour, "2026-11-18T05:00:00Z"},
		{"2026-02-28T10:00:00Z", Month, "2026-02-01T00:00:00Z"},
	}
	for _, tc := range cases {
		if got := tc.i.Truncate(at(tc.in)).Format(time.RFC3339); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.i, tc.in, got, tc.want)
		}
	}
	if got := Month.Next(at("2026-01-01T00:00:00Z")).Format(time.RFC3339); got != "2026-02-01T00:00:00Z" {
		t.Errorf("next month %s", got)
	}
}

func TestParseRangeDefaults(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 20, 17, 3, 0, time.UTC)
	r, err := ParseRange(url.Values{}, now, tz.UTC)
	if err != nil || r.Interval != Day || !r.To.Equal(now) || !r.From.Equal(time.Date(2026, 10, 22, 20, 0, 0, 0, time.UTC)) {
		t.Errorf("defaults %+v, %v", r, err)
	}
	if _, err := ParseRange(url.Values{"interval": {"day", "hour"}}, now, tz.UTC); err == nil {
		t.Error("a repeated parameter was accepted")
	}
}
