package web_test

import (
	"encoding/csv"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
)

// barsOf is the chart's bars: their start (UTC, RFC 3339) → scans.
func barsOf(body string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`data-testid="chart-bar" data-start="([^"]+)" data-scans="(\d+)"`).FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestLinkAnalyticsInATimeZone walks the time-zone switch: the link page's
// picker cuts days at the chosen zone's midnights (New York, Kolkata off
// the whole hour), an admin sets the workspace's zone on Settings →
// Workspace (the page's default from then on, audited), a member cannot,
// and the series CSV writes each bucket on the zone's clock.
func TestLinkAnalyticsInATimeZone(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	ws := admin.WorkspaceExternalID()
	path := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/tz"}})
	// 03:30 UTC on 10 November: still the 9th in New York (22:30 EST), 09:00
	// on the 10th in Kolkata.
	addScans(t, srv, admin.WorkspaceID, linkIDOf(t, path), time.Date(2026, 11, 10, 3, 30, 0, 0, time.UTC), 5, "US", "qr")
	foldScans(t, srv, admin.WorkspaceID, 5)
	days := "?range=custom&from=2026-11-09&to=2026-11-10&interval=day"

	for _, c := range []struct {
		zone string
		want map[string]string
		abbr string
	}{
		{"", map[string]string{"2026-11-09T00:00:00Z": "0", "2026-11-10T00:00:00Z": "5"}, "UTC"},
		{"America/New_York", map[string]string{"2026-11-09T05:00:00Z": "5", "2026-11-10T05:00:00Z": "0"}, "EST"},
		{"Asia/Kolkata", map[string]string{"2026-11-08T18:30:00Z": "0", "2026-11-09T18:30:00Z": "5"}, "IST"},
	} {
		p := b.get(path + days + "&timezone=" + url.QueryEscape(c.zone))
		if p.status != http.StatusOK {
			t.Fatalf("%q: %d %s", c.zone, p.status, excerpt(p.body))
		}
		if got := barsOf(p.body); !maps.Equal(got, c.want) {
			t.Errorf("%q: bars %v, want %v", c.zone, got, c.want)
		}
		period := textOf(t, p.body, "analytics-period")
		if !strings.Contains(period, c.abbr) {
			t.Errorf("%q: period %q does not read on the zone's clock (%s)", c.zone, period, c.abbr)
		}
		// The zone is named once: UTC by its abbreviation, others also by name.
		if named := strings.Contains(period, "("+c.zone+")"); named != (c.zone != "") || strings.Contains(period, "(UTC)") {
			t.Errorf("%q: period %q names its zone wrongly", c.zone, period)
		}
	}
	if p := b.get(path + days + "&timezone=Mars%2FOlympus"); p.status != http.StatusOK || textOf(t, p.body, "range-error-timezone") != "Choose one of the time zones offered." {
		t.Errorf("unknown zone: %d %s", p.status, excerpt(p.body))
	}

	// The workspace's zone: refused with the reason at the field and what was
	// typed kept; then saved, and the page's default from then on.
	settings := "/w/" + ws + "/settings/workspace"
	p := b.post(settings+"/timezone", url.Values{"timezone": {"Eastern"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(textOf(t, p.body, "workspace-timezone-error"), "IANA time zone name") ||
		!strings.Contains(p.body, `value="Eastern"`) {
		t.Fatalf("bad zone: %d %s", p.status, excerpt(p.body))
	}
	p = b.post(settings+"/timezone", url.Values{"timezone": {" America/New_York "}})
	if p.status != http.StatusSeeOther || !strings.Contains(textOf(t, b.follow(p).body, "flash-ok"), "America/New_York") {
		t.Fatalf("save zone: %d %s", p.status, excerpt(p.body))
	}
	page := b.get(path + days)
	if got := barsOf(page.body); got["2026-11-09T05:00:00Z"] != "5" {
		t.Errorf("the workspace's zone is not the default: bars %v", got)
	}
	if !strings.Contains(page.body, `<option value="" selected>Workspace default (America/New_York)</option>`) {
		t.Errorf("the picker does not offer the workspace's zone as its default")
	}
	var audited int
	if err := srv.Pool.QueryRow(t.Context(), `SELECT count(*) FROM audit_events WHERE workspace_id = $1 AND action = 'workspace.timezone_changed'`, admin.WorkspaceID).Scan(&audited); err != nil || audited != 1 {
		t.Errorf("audit entries %d (%v), want 1", audited, err)
	}

	// The series CSV: each bucket on the zone's clock, the zone named.
	series := b.get(path + "/analytics.csv" + days)
	recs, err := csv.NewReader(strings.NewReader(series.body)).ReadAll()
	if err != nil || len(recs) != 3 || strings.Join(recs[0], ",") != "bucket_start,interval,timezone,scans,unique" ||
		strings.Join(recs[1], ",") != "2026-11-09T00:00:00-05:00,day,America/New_York,5,1" {
		t.Errorf("series CSV (%v): %q", err, series.body)
	}

	// A member reads the zone but cannot change it.
	m := newBrowser(t, srv)
	m.mustSignIn(member.Email, member.Password)
	if got := textOf(t, m.get(settings).body, "workspace-readonly-timezone"); got != "America/New_York" {
		t.Errorf("member reads zone %q", got)
	}
	if p := m.post(settings+"/timezone", url.Values{"timezone": {"UTC"}}); p.status != http.StatusForbidden {
		t.Errorf("member sets the zone: %d", p.status)
	}
}
