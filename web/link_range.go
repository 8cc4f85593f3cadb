package web

import (
	"net/url"
	"time"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/tz"
)

// rangeChoice is the link page's analytics picker: a preset (last 24 h,
// 7, 30 or 90 days) or a custom span of whole UTC days, and the bucket
// width. It is read from the page's query (range, from, to, interval) and
// checked by the analytics service's own rules (analytics.ParseRange).
type rangeChoice struct {
	Preset   string // 24h, 7d, 30d, 90d or custom
	From, To string // custom: YYYY-MM-DD, both days included
	Interval string // hour, day, week, month; "" picks one for the preset
	// Timezone is the zone asked for ("": the workspace's, Default), in
	// which days, the presets and the custom days are cut.
	Timezone string
	Default  string
	Range    analytics.Range
	Errors   FieldErrors // keyed "range", "from", "to", "interval", "timezone"
}

// zoneChoices are the zone picker's options (zoneOptions).
func (c rangeChoice) zoneChoices() []zoneOption {
	asked := c.Timezone
	if c.Errors["timezone"] != "" {
		asked = ""
	}
	return zoneOptions(c.Default, asked)
}

// zoneOption is one option of a time zone picker; Value "" is the
// workspace's zone.
type zoneOption struct{ Value, Label string }

// zoneOptions are a time zone picker's options: the workspace's zone def
// first ("Workspace default (…)", value ""), then the common zones, and
// asked (a zone that parsed, or "") when it is another.
func zoneOptions(def, asked string) []zoneOption {
	out := []zoneOption{{"", "Workspace default (" + def + ")"}}
	known := asked == ""
	for _, z := range tz.Common {
		out = append(out, zoneOption{z, z})
		known = known || z == asked
	}
	if !known {
		out = append(out, zoneOption{asked, asked})
	}
	return out
}

// rangePresets are the picker's ready-made ranges, in the order shown.
var rangePresets = []struct{ Value, Label string }{
	{"24h", "Last 24 hours"}, {"7d", "Last 7 days"}, {"30d", "Last 30 days"}, {"90d", "Last 90 days"}, {"custom", "Custom"},
}

// intervalChoices are the bucket widths of the picker.
var intervalChoices = []struct{ Value, Label string }{
	{"", "Automatic"}, {"hour", "By hour"}, {"day", "By day"}, {"week", "By week"}, {"month", "By month"},
}

const dayLayout = "2006-01-02"

// parseRangeChoice reads the picker from q. Anything it cannot use is
// reported in Errors, and Range then holds the default (the last 7 days by
// day), so the page still shows something.
func parseRangeChoice(q url.Values, now time.Time, def tz.Zone) rangeChoice {
	c := rangeChoice{Preset: q.Get("range"), From: q.Get("from"), To: q.Get("to"), Interval: q.Get("interval"), Timezone: q.Get("timezone"), Default: def.Name(), Errors: FieldErrors{}}
	if c.Preset == "" {
		c.Preset = "7d"
	}
	zone := def
	if c.Timezone != "" {
		z, err := tz.Parse(c.Timezone)
		if err != nil {
			c.Errors["timezone"] = "Choose one of the time zones offered."
		}
		zone = z
	}
	loc := zone.Location()
	now = now.UTC()
	today := analytics.Day.TruncateIn(now, loc)
	var from, to time.Time
	auto := analytics.Day
	switch c.Preset {
	case "24h":
		from, to, auto = analytics.Hour.TruncateIn(now, loc).Add(-23*time.Hour), now, analytics.Hour
	case "7d":
		from, to = today.AddDate(0, 0, -6), now
	case "30d":
		from, to = today.AddDate(0, 0, -29), now
	case "90d":
		from, to = today.AddDate(0, 0, -89), now
	case "custom":
		f, errF := time.ParseInLocation(dayLayout, c.From, loc)
		t, errT := time.ParseInLocation(dayLayout, c.To, loc)
		if errF != nil {
			c.Errors["from"] = "Choose a start day."
		}
		if errT != nil {
			c.Errors["to"] = "Choose an end day."
		}
		if errF == nil && errT == nil {
			from, to = f, t.AddDate(0, 0, 1)
			if to.Sub(from) <= 2*24*time.Hour {
				auto = analytics.Hour
			}
			if !from.Before(to) {
				c.Errors["to"] = "The end day must not be before the start day."
			}
		}
	default:
		c.Errors["range"] = "Choose one of the ranges offered."
	}
	interval := auto
	switch c.Interval {
	case "":
	case "hour", "day", "week", "month":
		interval = analytics.Interval(c.Interval)
	default:
		c.Errors["interval"] = "Choose hour, day, week or month."
	}
	if len(c.Errors) == 0 {
		r, err := analytics.ParseRange(url.Values{
			"from": {from.Format(time.RFC3339Nano)}, "to": {to.Format(time.RFC3339Nano)}, "interval": {string(interval)},
		}, now, zone)
		if errs, ok := fieldErrors(err); ok {
			for _, msg := range errs {
				c.Errors["interval"] = capitalize(msg) + ". Choose a wider interval or a shorter range."
			}
		} else {
			c.Range = r
		}
	}
	if len(c.Errors) > 0 {
		c.Range = analytics.Range{From: today.AddDate(0, 0, -6), To: now, Interval: analytics.Day, Zone: zone}
	}
	return c
}

// query is the picker's state as query parameters, for links that keep it
// (the CSV exports, the QR designer's form).
func (c rangeChoice) query() url.Values {
	q := url.Values{"range": {c.Preset}}
	if c.Preset == "custom" {
		q.Set("from", c.From)
		q.Set("to", c.To)
	}
	if c.Interval != "" {
		q.Set("interval", c.Interval)
	}
	if c.Timezone != "" {
		q.Set("timezone", c.Timezone)
	}
	return q
}

// rangeHidden is the picker's state as hidden fields, for the QR
// designer's form (only when the viewer changed it).
func rangeHidden(c rangeChoice) []HiddenField {
	var out []HiddenField
	q := c.query()
	for _, name := range []string{"range", "from", "to", "interval", "timezone"} {
		if v := q.Get(name); v != "" && !(name == "range" && v == "7d") {
			out = append(out, HiddenField{Name: name, Value: v})
		}
	}
	return out
}
