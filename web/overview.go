package web

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/tz"
)

// overviewRanges are the overview's ranges, in the order shown: whole days
// of the chosen time zone ending today.
var overviewRanges = []struct {
	Value, Label string
	Days         int
}{{"7d", "Last 7 days", 7}, {"30d", "Last 30 days", 30}, {"90d", "Last 90 days", 90}}

// overviewDefaultRange is the range without ?range=.
const overviewDefaultRange = "30d"

// OverviewView is the workspace overview.
type OverviewView struct {
	Nav        NavModel
	Range      string // 7d, 30d or 90d
	RangeError string // why ?range= was not used
	// Timezone is the zone asked for ("": the workspace's), Zones the
	// picker's options, TimezoneError why ?timezone= was not used, and
	// ZoneName the zone the days are cut in.
	Timezone      string
	Zones         []zoneOption
	TimezoneError string
	ZoneName      string
	Busy          string // the analytics' limits refused: try again
	Period        string // "1 Jan 2026 – 30 Jan 2026", days of ZoneName
	AsOf          string
	Total         string
	Average       string // scans per day, one decimal
	Busiest       string // the day with most scans, "3 Jan"; "–" without scans
	BusiestOf     string // its scans, "12 scans"
	HasAny        bool
	Chart         ChartView
	TopLinks      []OverviewLinkRow
	Countries     CountriesView
	Sources       SourcesView
}

// OverviewLinkRow is one of the top links.
type OverviewLinkRow struct {
	Rank     string
	Name     string // the title, else the code; "(deleted link)"
	ShortURL string // "" for a deleted link
	Path     string // its page; "" for a deleted link
	Deleted  bool
	Scans    string
	Share    string
}

// overview is the workspace overview (GET /w/{ws}/overview, every member):
// every link's human scans of the last 7, 30 or 90 days (?range=, default
// 30) of a time zone (?timezone=, an IANA name; default the workspace's) —
// total, per day, top links, countries, QR codes against links — from the
// analytics service's overview read, under its limits. An unknown range or
// zone is said at its field, and the default used.
func (u *UI) overview(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	q := r.URL.Query()
	v := OverviewView{Range: q.Get("range"), Timezone: q.Get("timezone")}
	if v.Range == "" {
		v.Range = overviewDefaultRange
	}
	days := 0
	for _, o := range overviewRanges {
		if o.Value == v.Range {
			days = o.Days
		}
	}
	if days == 0 {
		v.RangeError = "Choose one of the ranges offered: the last 7, 30 or 90 days."
		v.Range, days = overviewDefaultRange, 30
	}
	zone := ws.Timezone
	if v.Timezone != "" {
		z, err := tz.Parse(v.Timezone)
		if err != nil {
			v.TimezoneError = unknownZone(v.Timezone, ws.Timezone)
			v.Timezone = ""
		} else {
			zone = z
		}
	}
	v.Zones, v.ZoneName = zoneOptions(ws.Timezone.Name(), v.Timezone), zone.Name()
	loc := zone.Location()
	today := analytics.Day.TruncateIn(time.Now(), loc)
	from, to := today.AddDate(0, 0, 1-days), today.AddDate(0, 0, 1)
	v.Period = from.Format("2 Jan 2006") + " – " + today.Format("2 Jan 2006")
	o, err := u.Analytics.Overview(r.Context(), ws.ID, from, to, zone)
	var busy *analytics.BusyError
	switch {
	case errors.As(err, &busy):
		v.Busy = "The analytics are busy right now; reload the page in a few seconds."
	case err != nil:
		u.serverError(w, r, err)
		return
	default:
		u.fillOverview(&v, o, ws.ExternalID())
	}
	v.Nav = u.nav(w, r, sectionOverview)
	Render(w, r, http.StatusOK, OverviewPage(v))
}

// fillOverview presents the overview o of the workspace wsExt.
func (u *UI) fillOverview(v *OverviewView, o analytics.Overview, wsExt string) {
	v.AsOf = formatTime(o.AsOf)
	v.Total = i64toa(o.Total)
	v.HasAny = o.Total > 0
	v.Average = strconv.FormatFloat(float64(o.Total)/float64(max(1, len(o.Days))), 'f', 1, 64)
	v.Busiest = "–"
	var best analytics.Bucket
	for _, d := range o.Days {
		if d.Scans > best.Scans {
			best = d
		}
	}
	if best.Scans > 0 {
		v.Busiest, v.BusiestOf = best.Start.In(o.Zone.Location()).Format("2 Jan"), plural(best.Scans, "scan", "scans")
	}
	v.Chart = buildChart(o.From, o.To, analytics.Day, o.Zone.Location(), o.Days)
	v.Chart.NoUnique = true
	origins := link.Origins{ShortBase: u.Config.ShortBaseURL.String(), CustomScheme: u.Config.CustomDomainScheme}
	for i, l := range o.TopLinks {
		row := OverviewLinkRow{Rank: strconv.Itoa(i + 1), Scans: i64toa(l.Scans), Share: shareOf(l.Scans, o.Total), Deleted: l.Deleted}
		if l.Deleted {
			row.Name = "(deleted link)"
		} else {
			row.Name = l.Title
			if row.Name == "" {
				row.Name = l.Code
			}
			var domain *hostname.Name
			if l.Domain != "" {
				d := hostname.Stored(l.Domain)
				domain = &d
			}
			code, _ := link.ParseCodeShape(l.Code)
			row.ShortURL = origins.ShortURL(domain, code)
			row.Path = "/w/" + wsExt + "/links/" + id.Format(id.Link, l.ID)
		}
		v.TopLinks = append(v.TopLinks, row)
	}
	v.Countries, v.Sources = countriesView(o.Countries), sourcesView(o.Sources)
}

// unknownZone says why ?timezone=name was not used, quoting what was given
// (when it is short enough to be a name), and which zone is shown instead.
func unknownZone(name string, def tz.Zone) string {
	given := "The time zone given"
	if len(name) <= tz.MaxNameLen {
		given = "“" + name + "”"
	}
	return given + " is not a time zone name we know. Choose one of the zones offered; the overview is shown in the workspace's zone, " + def.Name() + "."
}
