package web

import (
	"fmt"
	"strconv"
	"time"

	"github.com/linkqr/linkqr/internal/analytics"
)

// The chart's drawing space: every bucket gets chartSlot units of width
// (the bar and a gap), bars are up to chartHeight units tall. The SVG
// stretches to its box (preserveAspectRatio="none"); labels are HTML around
// it, so text keeps its size on a phone.
const (
	chartSlot   = 10
	chartBar    = 8
	chartHeight = 100
	// chartMaxTicks bounds the bucket labels under the chart.
	chartMaxTicks = 6
)

// ChartView is the scans-over-time chart of the link page: one bar per
// bucket of the range, zeros included.
type ChartView struct {
	Bars     []ChartBar
	Ticks    []ChartTick
	Max      int64 // the tallest bar's scans; the top of the scale
	MaxLabel string
	Total    int64
	ViewBox  string // "0 0 <width> 100"
	// NoUnique leaves unique visitors out of the tooltips and the table
	// (the workspace overview counts scans only).
	NoUnique bool
}

// Empty reports whether no bucket has a scan.
func (c ChartView) Empty() bool { return c.Total == 0 }

// ChartBar is one bucket.
type ChartBar struct {
	Start  string // RFC 3339, for tests and the data table
	Label  string // the bucket as people read it: "2 Jan 2026", "2 Jan, 15:00"
	Scans  int64
	Unique int64
	IsMax  bool
	X, Y   string // SVG user units
	W, H   string
}

// Title is the bar's tooltip.
func (b ChartBar) Title() string {
	return fmt.Sprintf("%s: %s, %s unique", b.Label, plural(b.Scans, "scan", "scans"), strconv.FormatInt(b.Unique, 10))
}

// ChartTick is the label slot under one bar: every bar has one (so the
// labels line up with the bars in a flex row, with no inline styles, which
// the Content-Security-Policy forbids); only every few carry a label.
type ChartTick struct {
	Label string // "" for an unlabelled bar
}

// buildChart lays out series over [from, to) in buckets of interval. Every
// bucket of the range gets a bar: buckets missing from series (a gap) are
// zeros, so a quiet day shows as a gap rather than vanishing from the axis.
//
// The buckets are cut in loc (days at its midnights, 23 or 25 hours long on
// daylight-saving days) and labelled in its clock.
func buildChart(from, to time.Time, interval analytics.Interval, loc *time.Location, series []analytics.Bucket) ChartView {
	byStart := make(map[time.Time]analytics.Bucket, len(series))
	for _, b := range series {
		byStart[b.Start.UTC()] = b
	}
	var c ChartView
	var starts []time.Time
	for start := interval.TruncateIn(from, loc).UTC(); start.Before(to); start = interval.NextIn(start, loc).UTC() {
		b := byStart[start]
		starts = append(starts, start)
		c.Bars = append(c.Bars, ChartBar{Start: start.Format(time.RFC3339), Label: bucketLabel(interval, start.In(loc), true), Scans: b.Scans, Unique: b.Unique})
		c.Total += b.Scans
		c.Max = max(c.Max, b.Scans)
	}
	n := len(c.Bars)
	c.ViewBox = fmt.Sprintf("0 0 %d %d", max(n, 1)*chartSlot, chartHeight)
	c.MaxLabel = strconv.FormatInt(c.Max, 10)
	maxMarked := false
	for i := range c.Bars {
		b := &c.Bars[i]
		h := 0.0
		if c.Max > 0 {
			h = float64(b.Scans) / float64(c.Max) * chartHeight
		}
		if !maxMarked && c.Max > 0 && b.Scans == c.Max {
			b.IsMax, maxMarked = true, true
		}
		b.X = strconv.Itoa(i*chartSlot + (chartSlot-chartBar)/2)
		b.W = strconv.Itoa(chartBar)
		b.Y = strconv.FormatFloat(chartHeight-h, 'f', 2, 64)
		b.H = strconv.FormatFloat(h, 'f', 2, 64)
	}
	if n == 0 {
		return c
	}
	step := (n + chartMaxTicks - 1) / chartMaxTicks
	c.Ticks = make([]ChartTick, n)
	for i := 0; i < n; i += step {
		c.Ticks[i].Label = bucketLabel(interval, starts[i].In(loc), false)
	}
	return c
}

// bucketLabel names the bucket starting at t, on t's clock (its location
// is the report's zone); long is the tooltip's form, the short one fits
// under a bar. An hour names its zone's abbreviation, which tells the two
// 01:00s of a day that turns the clocks back apart (EDT, then EST).
func bucketLabel(interval analytics.Interval, t time.Time, long bool) string {
	switch interval {
	case analytics.Hour:
		if long {
			return t.Format("2 Jan 2006, 15:04 MST")
		}
		if t.Hour() == 0 && t.Minute() == 0 {
			return t.Format("2 Jan")
		}
		return t.Format("15:04")
	case analytics.Week:
		if long {
			return "Week of " + t.Format("2 Jan 2006")
		}
		return t.Format("2 Jan")
	case analytics.Month:
		return t.Format("Jan 2006")
	default:
		if long {
			return t.Format("Mon 2 Jan 2006")
		}
		return t.Format("2 Jan")
	}
}

// plural is "1 scan", "2 scans".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
