package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/csvout"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/scan"
)

// exportPageSize is how many raw scans one database round trip of the
// export reads; each page is written and flushed before the next is read,
// so memory stays bounded however many scans the range holds.
const exportPageSize = 1000

// exportRange reads the page's range picker for an export; on a bad range
// it answers 422 and reports false.
func (u *UI) exportRange(w http.ResponseWriter, r *http.Request) (rangeChoice, bool) {
	ws, _ := workspaceFrom(r.Context())
	c := parseRangeChoice(r.URL.Query(), time.Now(), ws.Timezone)
	if len(c.Errors) > 0 {
		var msgs []string
		for _, m := range c.Errors {
			msgs = append(msgs, m)
		}
		u.errorPage(w, r, http.StatusUnprocessableEntity, "Invalid range", strings.Join(msgs, " "))
		return c, false
	}
	return c, true
}

// csvHeaders starts a CSV attachment named after the link and the range.
func csvHeaders(w http.ResponseWriter, l link.Link, what string, rg analytics.Range) {
	name := l.Code.String() + "-" + what + "-" + rg.From.UTC().Format("20060102T1504Z") + "-" + rg.To.UTC().Format("20060102T1504Z") + ".csv"
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
}

// linkSeriesCSV exports the chart's series for the chosen range: one row
// per bucket (zeros included) with its start, human scans and unique
// visitors, as the analytics service computes them. A bucket's start is
// written on the chosen zone's clock with its offset (an exact instant a
// spreadsheet shows as the local day), and the zone is named in a column.
func (u *UI) linkSeriesCSV(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	c, ok := u.exportRange(w, r)
	if !ok {
		return
	}
	rep, err := u.Analytics.Compute(r.Context(), ws.ID, l.ID, c.Range)
	if u.analyticsFailed(w, r, err) {
		return
	}
	csvHeaders(w, l, "series", c.Range)
	cw := csvout.New(w)
	_ = cw.Write("bucket_start", "interval", "timezone", "scans", "unique")
	loc := c.Range.Zone.Location()
	for _, b := range rep.Series {
		_ = cw.Write(b.Start.In(loc).Format(time.RFC3339), string(rep.Interval), rep.Timezone, strconv.FormatInt(b.Scans, 10), strconv.FormatInt(b.Unique, 10))
	}
	_ = cw.Flush()
}

// linkScansCSV streams the raw scans of the chosen range, oldest first,
// bots included (marked), in the scan object's fields. Rows are written
// page by page as they are read; nothing holds the whole range.
func (u *UI) linkScansCSV(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	c, ok := u.exportRange(w, r)
	if !ok {
		return
	}
	var after *scan.Scan
	page, more, err := u.Scans.InRange(r.Context(), ws.ID, l.ID, c.Range.From, c.Range.To, after, exportPageSize)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	csvHeaders(w, l, "scans", c.Range)
	cw := csvout.New(w)
	_ = cw.Write("id", "occurred_at", "referrer_host", "device", "os", "browser", "bot", "country", "source", "variant")
	for {
		for _, s := range page {
			ref := ""
			if s.ReferrerHost != nil {
				ref = *s.ReferrerHost
			}
			wire := s.Wire()
			_ = cw.Write(wire.ID, wire.OccurredAt.Format(time.RFC3339Nano), ref, s.Device, s.OS, s.Browser, strconv.FormatBool(s.Bot), s.Country.String(), string(s.Source), s.Variant)
		}
		_ = cw.Flush()
		if !more || len(page) == 0 {
			return
		}
		after = &page[len(page)-1]
		page, more, err = u.Scans.InRange(r.Context(), ws.ID, l.ID, c.Range.From, c.Range.To, after, exportPageSize)
		if err != nil {
			// The header is out: end the body early and log; the file is
			// visibly cut short rather than silently complete.
			u.Log.Error("scans CSV export failed mid-stream", "path", r.URL.Path, "err", err)
			return
		}
	}
}

// analyticsFailed answers for a failed report: a 503 page with Retry-After
// when the analytics are busy, the 500 page otherwise.
func (u *UI) analyticsFailed(w http.ResponseWriter, r *http.Request, err error) bool {
	var busy *analytics.BusyError
	switch {
	case err == nil:
		return false
	case errors.As(err, &busy):
		w.Header().Set("Retry-After", strconv.Itoa(busy.Seconds()))
		if busy.HTTPStatus() == http.StatusTooManyRequests {
			u.errorPage(w, r, busy.HTTPStatus(), "Too many reports at once", "This workspace already has as many analytics reports running as it may at once. Please try again in a few seconds.")
			break
		}
		u.errorPage(w, r, http.StatusServiceUnavailable, "Analytics busy", "The analytics are busy right now. Please try again in a few seconds.")
	default:
		u.serverError(w, r, err)
	}
	return true
}
