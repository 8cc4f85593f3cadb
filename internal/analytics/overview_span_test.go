package analytics

import (
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/tz"
)

// TestOverviewSpanCoversTheRangeOnce: for ranges of whole local days in
// zones west, east and off the whole hour, and across daylight-saving
// changes, the span's whole UTC days and pieces of hours count every
// quarter-hour of the range exactly once and none outside it, and each end
// reads at most 12 whole hours and one part of an hour.
func TestOverviewSpanCoversTheRangeOnce(t *testing.T) {
	t.Parallel()
	zones := []string{"UTC", "America/New_York", "America/Los_Angeles", "Europe/London", "Europe/Berlin",
		"Asia/Kolkata", "Asia/Kathmandu", "Australia/Adelaide", "Pacific/Chatham", "Pacific/Kiritimati", "Pacific/Pago_Pago"}
	for _, name := range zones {
		loc := tz.MustParse(name).Location()
		// Every day of 2026 as a first day, for 1, 2 and 9 days.
		for first := time.Date(2026, 1, 1, 0, 0, 0, 0, loc); first.Year() == 2026; first = first.AddDate(0, 0, 1) {
			for _, n := range []int{1, 2, 9} {
				from, to := first.UTC(), first.AddDate(0, 0, n).UTC()
				checkSpan(t, name, from, to)
			}
		}
	}
}

func checkSpan(t *testing.T, zone string, from, to time.Time) {
	t.Helper()
	s := overviewSpan(from, to)
	lo, hi := Day.Truncate(from).Add(-24*time.Hour), ceilTo(Day, to).Add(24*time.Hour)
	count := make([]int, hi.Sub(lo)/quarterHour)
	for _, d := range s.Days {
		for q := d.Sub(lo) / quarterHour; q < d.Add(24*time.Hour).Sub(lo)/quarterHour; q++ {
			count[q]++
		}
	}
	hours := map[int32]int{}
	for _, p := range s.Pieces {
		if p.Lo < 0 || p.Hi > 4 || p.Lo >= p.Hi || (p.Sign != 1 && p.Sign != -1) {
			t.Fatalf("%s %s..%s: piece %+v", zone, from, to, p)
		}
		e := s.Edges[p.Edge-1]
		if p.Hour.Before(e.From) || !p.Hour.Before(e.To) || !Day.Truncate(p.Hour).Equal(e.Day) {
			t.Fatalf("%s %s..%s: piece %+v outside its edge %+v", zone, from, to, p, e)
		}
		hours[p.Edge]++
		for q := int32(0); q < 4; q++ {
			if q >= p.Lo && q < p.Hi {
				count[p.Hour.Sub(lo)/quarterHour+time.Duration(q)] += int(p.Sign)
			}
		}
	}
	for edge, n := range hours {
		if n > 13 {
			t.Errorf("%s %s..%s: edge %d reads %d hours", zone, from, to, edge, n)
		}
	}
	for q, c := range count {
		at := lo.Add(time.Duration(q) * quarterHour)
		if want := btoi(!at.Before(from) && at.Before(to)); c != want {
			t.Fatalf("%s %s..%s: the quarter at %s is counted %d times, want %d (span %+v)", zone, from, to, at, c, want, s)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
