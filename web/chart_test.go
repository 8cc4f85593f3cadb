package web

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/analytics"
)

// renderChart renders the chart component for a series and returns the
// HTML.
func renderChart(t *testing.T, from, to time.Time, interval analytics.Interval, series []analytics.Bucket) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Chart(buildChart(from, to, interval, time.UTC, series)).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var (
	barRE  = regexp.MustCompile(`<rect [^>]*data-testid="chart-bar"[^>]*>`)
	tickRE = regexp.MustCompile(`data-testid="chart-tick">([^<]*)<`)
	attrRE = func(name string) *regexp.Regexp { return regexp.MustCompile(` ` + name + `="([^"]*)"`) }
)

// bars returns each bar's attributes: start, scans, height, and whether it
// is marked as the maximum.
func bars(html string) []map[string]string {
	var out []map[string]string
	for _, tag := range barRE.FindAllString(html, -1) {
		b := map[string]string{"max": "no"}
		for _, a := range []string{"data-start", "data-scans", "height", "y"} {
			if m := attrRE(a).FindStringSubmatch(tag); m != nil {
				b[a] = m[1]
			}
		}
		if strings.Contains(tag, " data-max") {
			b["max"] = "yes"
		}
		out = append(out, b)
	}
	return out
}

func ticks(html string) []string {
	var out []string
	for _, m := range tickRE.FindAllStringSubmatch(html, -1) {
		out = append(out, m[1])
	}
	return out
}

func day(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }

func TestChartZeroFillsGapsAndMarksTheMaximum(t *testing.T) {
	// Three days; the middle one is missing from the series (a gap).
	html := renderChart(t, day(20), day(23), analytics.Day, []analytics.Bucket{
		{Start: day(20), Scans: 3, Unique: 2}, {Start: day(22), Scans: 1, Unique: 1},
	})
	got := bars(html)
	if len(got) != 3 {
		t.Fatalf("%d bars, want 3 (one per day): %s", len(got), html)
	}
	want := []struct{ start, scans, height, max string }{
		{"2026-11-20T00:00:00Z", "3", "100.00", "yes"},
		{"2026-11-21T00:00:00Z", "0", "0.00", "no"},
		{"2026-11-22T00:00:00Z", "1", "33.33", "no"},
	}
	for i, w := range want {
		b := got[i]
		if b["data-start"] != w.start || b["data-scans"] != w.scans || b["height"] != w.height || b["max"] != w.max {
			t.Errorf("bar %d = %v, want %+v", i, b, w)
		}
	}
	if !strings.Contains(html, `data-testid="chart-max">3<`) || strings.Contains(html, "chart-empty") {
		t.Errorf("scale top or empty note wrong: %s", html)
	}
	if !strings.Contains(html, "<title>Sat 21 Nov 2026: 0 scans, 0 unique</title>") || !strings.Contains(html, "<title>Fri 20 Nov 2026: 3 scans, 2 unique</title>") {
		t.Errorf("tooltips: %s", html)
	}
}

func TestChartMaximumIsMarkedOnce(t *testing.T) {
	html := renderChart(t, day(20), day(23), analytics.Day, []analytics.Bucket{
		{Start: day(20), Scans: 5}, {Start: day(21), Scans: 2}, {Start: day(22), Scans: 5},
	})
	got := bars(html)
	if got[0]["max"] != "yes" || got[2]["max"] != "no" || got[2]["height"] != "100.00" || got[1]["height"] != "40.00" {
		t.Errorf("bars %v: the first of equal maxima is marked, both are full height", got)
	}
}

func TestChartBucketLabels(t *testing.T) {
	cases := []struct {
		name     string
		from, to time.Time
		interval analytics.Interval
		bars     int
		ticks    []string
	}{
		{"days", day(20), day(23), analytics.Day, 3, []string{"20 Nov", "21 Nov", "22 Nov"}},
		// 24 hours from 12:00: six labels, every fourth hour; midnight names the day.
		{"hours", day(20).Add(12 * time.Hour), day(21).Add(12 * time.Hour), analytics.Hour, 24, []string{"12:00", "16:00", "20:00", "21 Nov", "04:00", "08:00"}},
		// Weeks start on Monday: 16 Nov 2026 is a Monday.
		{"weeks", day(18), day(30), analytics.Week, 2, []string{"16 Nov", "23 Nov"}},
		{"months", time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), analytics.Month, 3, []string{"Jan 2026", "Feb 2026", "Mar 2026"}},
		// 90 days: at most six labels, spread over the range.
		{"90 days", day(1).AddDate(0, 0, -89), day(1).AddDate(0, 0, 1), analytics.Day, 90, []string{"4 Aug", "19 Aug", "3 Sep", "18 Sep", "3 Oct", "18 Oct"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			html := renderChart(t, c.from, c.to, c.interval, nil)
			if n := len(bars(html)); n != c.bars {
				t.Errorf("%d bars, want %d", n, c.bars)
			}
			if got := ticks(html); strings.Join(got, "|") != strings.Join(c.ticks, "|") {
				t.Errorf("labels %q, want %q", got, c.ticks)
			}
			// Every bar has a label slot, so labels line up with bars.
			if slots := strings.Count(html[strings.Index(html, `class="chart-ticks"`):], "<span"); slots != c.bars {
				t.Errorf("%d label slots for %d bars", slots, c.bars)
			}
		})
	}
}

func TestChartEmptySeries(t *testing.T) {
	html := renderChart(t, day(20), day(27), analytics.Day, nil)
	got := bars(html)
	if len(got) != 7 {
		t.Fatalf("%d bars, want 7 zero bars", len(got))
	}
	for _, b := range got {
		if b["data-scans"] != "0" || b["height"] != "0.00" || b["max"] != "no" {
			t.Errorf("bar %v in an empty series", b)
		}
	}
	if !strings.Contains(html, `data-testid="chart-empty"`) || !strings.Contains(html, `data-testid="chart-max">0<`) {
		t.Errorf("empty series: %s", html)
	}
	// An empty range (nothing to draw) renders without dividing by zero.
	if html := renderChart(t, day(20), day(20), analytics.Day, nil); len(bars(html)) != 0 || !strings.Contains(html, `viewBox="0 0 10 100"`) {
		t.Errorf("no buckets: %s", html)
	}
}

func TestChartSinglePoint(t *testing.T) {
	html := renderChart(t, day(20).Add(15*time.Hour), day(20).Add(16*time.Hour), analytics.Hour, []analytics.Bucket{{Start: day(20).Add(15 * time.Hour), Scans: 7, Unique: 4}})
	got := bars(html)
	if len(got) != 1 || got[0]["data-scans"] != "7" || got[0]["height"] != "100.00" || got[0]["y"] != "0.00" || got[0]["max"] != "yes" {
		t.Fatalf("single bar %v", got)
	}
	if tk := ticks(html); len(tk) != 1 || tk[0] != "15:00" {
		t.Errorf("labels %q", tk)
	}
	if !strings.Contains(html, "<title>20 Nov 2026, 15:00 UTC: 7 scans, 4 unique</title>") || !strings.Contains(html, `viewBox="0 0 10 100"`) {
		t.Errorf("single point: %s", html)
	}
}
