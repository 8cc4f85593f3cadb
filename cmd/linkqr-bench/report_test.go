package main

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func result(ok, errs uint64, lat time.Duration) loadResult {
	r := loadResult{OK: ok, Errors: errs, Elapsed: time.Second}
	for range ok + errs {
		r.Latency.Record(lat)
	}
	return r
}

// goodReport is a run of two rounds that meets every target.
func goodReport() *report {
	r := &report{
		Links:                10,
		RedirectLinkqrRounds: []phase{{Warm: result(100, 0, time.Millisecond), Measured: result(600, 0, 2*time.Millisecond)}, {Measured: result(600, 0, 2*time.Millisecond)}},
		RedirectBareRounds:   []phase{{Measured: result(700, 0, time.Millisecond)}, {Measured: result(700, 0, time.Millisecond)}},
		CustomDomain:         "go.bench.example",
		RedirectCustomRounds: []phase{{Measured: result(590, 0, 2*time.Millisecond)}, {Measured: result(610, 0, 2*time.Millisecond)}},
		Targets:              targetCheck{Checked: 20},
		APILinkqr:            phase{Measured: result(400, 0, 3*time.Millisecond)},
		APIBare:              phase{Measured: result(700, 0, time.Millisecond)},
		PeakRSS:              80 << 20,
		Scans:                &scanCheck{Want: 1300, Got: 1300},
		CustomScans:          &scanCheck{Want: 1200, Got: 1200},
		Geo: &geoRounds{
			Addrs: 1250, V6: 250, Countries: 80,
			NoGeoRounds: []phase{{Measured: result(600, 0, 2*time.Millisecond)}, {Measured: result(600, 0, 2*time.Millisecond)}},
			GeoRounds:   []phase{{Measured: result(590, 0, 2*time.Millisecond)}, {Measured: result(580, 0, 2*time.Millisecond)}},
			GeoScans:    []countryCheck{{Scans: 590, Known: 590}, {Scans: 580, Known: 580}},
			NoGeoScans:  []countryCheck{{Scans: 600}, {Scans: 600}},
		},
	}
	r.merge()
	return r
}

func TestReportVerdicts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(*report)
		want   verdict
		output string
	}{
		{"all good", func(*report) {}, verdict{true, true}, "0.86"},
		{"lost scans", func(r *report) { r.Scans.Got = 1290 }, verdict{false, true}, "(10 lost)"},
		{"extra scans", func(r *report) { r.Scans.Got = 1301 }, verdict{false, true}, "(1 extra"},
		{"extra scans in flight", func(r *report) { r.Scans.Got, r.Scans.Slack = 1364, 64 }, verdict{true, true}, "(64 extra, in flight"},
		{"more extra than in flight", func(r *report) { r.Scans.Got, r.Scans.Slack = 1365, 64 }, verdict{false, true}, "(65 extra"},
		{"scan check failed", func(r *report) { r.Scans.Err = errors.New("boom") }, verdict{false, true}, "boom"},
		{"custom scans lost", func(r *report) { r.CustomScans.Got = 1199 }, verdict{false, true}, "scans recorded (custom)  1199 of 1200 (1 lost)"},
		{"warm-up error", func(r *report) { r.RedirectLinkqr.Warm = result(99, 1, time.Millisecond) }, verdict{false, true}, "errors (all phases)      1"},
		{"custom error", func(r *report) { r.RedirectCustom.Warm = result(99, 1, time.Millisecond) }, verdict{false, true}, "errors (all phases)      1"},
		{"wrong target", func(r *report) { r.Targets.add(targetCheck{Checked: 1, Wrong: 1, Samples: []string{"HEAD /x: 404"}}) }, verdict{false, true}, "20 of 21 right"},
		{"no target checked", func(r *report) { r.Targets = targetCheck{} }, verdict{false, true}, "0 of 0 right"},
		{"slow redirect", func(r *report) { r.RedirectLinkqr.Measured = result(400, 0, time.Millisecond) }, verdict{true, false}, "0.57"},
		{"slow p99", func(r *report) { r.RedirectLinkqr.Measured = result(600, 0, 30*time.Millisecond) }, verdict{true, false}, "FAIL"},
		{"slow API", func(r *report) { r.APILinkqr.Measured = result(200, 0, time.Millisecond) }, verdict{true, false}, "0.29"},
		{"API skipped", func(r *report) { r.APISkipped, r.APILinkqr = true, phase{} }, verdict{true, true}, "not run (-redirect-only)"},
		{"fat", func(r *report) { r.PeakRSS = 200 << 20 }, verdict{true, false}, "200 MiB"},
		{"bare only", func(r *report) { r.BareOnly, r.Scans, r.CustomScans = true, nil, nil }, verdict{true, true}, "not checked"},
		{"busy round", func(r *report) { r.RedirectCustomRounds[1].Busy = true }, verdict{true, true}, "redirect custom, round 2          610     2.00ms     2.00ms        0  *\n"},
		{"no custom domain", func(r *report) { r.CustomDomain, r.RedirectCustomRounds, r.RedirectCustom = "", nil, phase{} }, verdict{true, true}, "0.86"},
		{"no country rounds", func(r *report) { r.Geo = nil }, verdict{true, true}, "0.86"},
		{"geo error", func(r *report) { r.Geo.Geo.Warm = result(99, 1, time.Millisecond) }, verdict{false, true}, "errors (all phases)      1"},
		{"geo scans without a country", func(r *report) { r.Geo.GeoScans[1].Known = 574 }, verdict{false, true}, "country, geo 2           574 of 580 (98.97 %)   target ≥ 99 %      FAIL"},
		{"geo scans 99 % with a country", func(r *report) { r.Geo.GeoScans[0] = countryCheck{Scans: 1000, Known: 990} }, verdict{true, true}, "country, geo 1           990 of 1000 (99.00 %)"},
		{"no geo scans", func(r *report) { r.Geo.GeoScans[0] = countryCheck{} }, verdict{false, true}, "0 of 0 (–)"},
		{"no-geo scan with a country", func(r *report) { r.Geo.NoGeoScans[0].Known = 1 }, verdict{false, true}, "country, no-geo 1        1 of 600               target: none       FAIL"},
		{"no no-geo scans", func(r *report) { r.Geo.NoGeoScans[1] = countryCheck{} }, verdict{false, true}, "country, no-geo 2        0 of 0"},
		{"country check failed", func(r *report) { r.Geo.CheckErr = errors.New("no database") }, verdict{false, true}, "no database"},
		{"countries not checked", func(r *report) { r.Geo.GeoScans, r.Geo.NoGeoScans = nil, nil }, verdict{true, true}, "scans with a country     not checked (-target-bare-only)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := goodReport()
			tc.change(r)
			var out strings.Builder
			if got := r.print(&out); got != tc.want {
				t.Errorf("verdict %+v, want %+v\n%s", got, tc.want, out.String())
			}
			if !strings.Contains(out.String(), tc.output) {
				t.Errorf("output lacks %q:\n%s", tc.output, out.String())
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	t.Parallel()
	var sink strings.Builder
	o, err := parseOptions(nil, &sink)
	if err != nil || o.Conns != 64 || o.Duration != 10*time.Second || o.Warmup != 2*time.Second || o.Links != 10_000 || o.Rounds != 2 || o.Strict {
		t.Fatalf("defaults %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-conns", "0"}, {"-duration", "0s"}, {"extra"}, {"-links", "-1"}, {"-rounds", "0"}, {"-nope"}} {
		if _, err := parseOptions(bad, &sink); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The custom-domain target is the ratio of the rounds' summed throughputs,
// within 5 % either way; the rows come in the order the rounds ran.
func TestReportCustomDomain(t *testing.T) {
	t.Parallel()
	cases := []struct {
		custom [2]uint64 // requests in each custom round (default: 600 each)
		ratio  string
		fast   bool
	}{
		{[2]uint64{600, 600}, "1.000", true},
		{[2]uint64{570, 570}, "0.950", true},
		{[2]uint64{569, 569}, "0.948", false},
		{[2]uint64{630, 630}, "1.050", true},
		{[2]uint64{640, 640}, "1.067", false},
		// One slow round and one fast one: the sum decides, not the worse.
		{[2]uint64{540, 660}, "1.000", true},
	}
	for _, tc := range cases {
		r := goodReport()
		r.RedirectCustomRounds = []phase{{Measured: result(tc.custom[0], 0, time.Millisecond)}, {Measured: result(tc.custom[1], 0, time.Millisecond)}}
		r.merge()
		var out strings.Builder
		v := r.print(&out)
		if v != (verdict{true, tc.fast}) {
			t.Errorf("custom %v: verdict %+v, want fast %v\n%s", tc.custom, v, tc.fast, &out)
		}
		want := "ratio custom/linkqr      " + tc.ratio + " "
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "redirect on a custom domain within 5 % of the default") {
			t.Errorf("custom %v: output lacks %q:\n%s", tc.custom, want, &out)
		}
	}
	var out strings.Builder
	goodReport().print(&out)
	rows := regexp.MustCompile(`(?m)^redirect (\S+), round (\d)`).FindAllStringSubmatch(out.String(), -1)
	var order []string
	for _, m := range rows {
		order = append(order, m[1]+m[2])
	}
	if got := strings.Join(order, " "); got != "bare1 linkqr1 custom1 no-geo1 geo1 geo2 no-geo2 custom2 linkqr2 bare2" {
		t.Errorf("rows in the order %s:\n%s", got, &out)
	}
	if !strings.Contains(out.String(), "by round               0.983 / 1.017") {
		t.Errorf("no ratios by round:\n%s", &out)
	}
}

// The country target is the ratio of the geo rounds' summed throughput to
// the no-geo rounds', at least 0.95 (faster passes); the ratio of each
// round is printed beside it.
func TestReportGeo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		geo   [2]uint64 // requests in each geo round (no-geo: 600 each)
		ratio string
		fast  bool
	}{
		{[2]uint64{600, 600}, "1.000", true},
		{[2]uint64{570, 570}, "0.950", true},
		{[2]uint64{569, 569}, "0.948", false},
		{[2]uint64{700, 700}, "1.167", true},
		// One slow round and one fast one: the sum decides, not the worse.
		{[2]uint64{540, 600}, "0.950", true},
		{[2]uint64{500, 620}, "0.933", false},
	}
	for _, tc := range cases {
		r := goodReport()
		r.Geo.GeoRounds = []phase{{Measured: result(tc.geo[0], 0, time.Millisecond)}, {Measured: result(tc.geo[1], 0, time.Millisecond)}}
		r.merge()
		var out strings.Builder
		v := r.print(&out)
		if v != (verdict{true, tc.fast}) {
			t.Errorf("geo %v: verdict %+v, want fast %v\n%s", tc.geo, v, tc.fast, &out)
		}
		want := "ratio geo/no-geo         " + tc.ratio + "                  target ≥ 0.95      " + mark(tc.fast)
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "redirect with a country lookup at most 5 % slower than without") {
			t.Errorf("geo %v: output lacks %q:\n%s", tc.geo, want, &out)
		}
	}
	var out strings.Builder
	goodReport().print(&out)
	for _, want := range []string{"by round               0.983 / 0.967", "redirect geo, all rounds", "redirect no-geo, all rounds",
		"geo: X-Forwarded-For from 1250 public addresses (250 IPv6) in 80 countries", "country, geo 1           590 of 590 (100.00 %)  target ≥ 99 %      PASS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, &out)
		}
	}
}

// Each round alternates direction; geo and no-geo are always next to each
// other, as are custom and default.
func TestRoundOrder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		i           int
		custom, geo bool
		want        []redirectSide
	}{
		{0, false, false, []redirectSide{sideBare, sideDefault}},
		{1, false, false, []redirectSide{sideDefault, sideBare}},
		{0, true, true, []redirectSide{sideBare, sideDefault, sideCustom, sideNoGeo, sideGeo}},
		{1, true, true, []redirectSide{sideGeo, sideNoGeo, sideCustom, sideDefault, sideBare}},
		{2, false, true, []redirectSide{sideBare, sideDefault, sideNoGeo, sideGeo}},
		{3, false, true, []redirectSide{sideGeo, sideNoGeo, sideDefault, sideBare}},
	}
	if got, want := roundOrder(1, true, false, true), []redirectSide{sideCustom, sideDefault, sideVisitors, sideBare}; !slices.Equal(got, want) {
		t.Errorf("with visitors, round 2: %v, want %v", got, want)
	}
	for _, tc := range cases {
		if got := roundOrder(tc.i, tc.custom, tc.geo, false); !slices.Equal(got, tc.want) {
			t.Errorf("roundOrder(%d, %v, %v) = %v, want %v", tc.i, tc.custom, tc.geo, got, tc.want)
		}
	}
}

// The realistic rounds are printed beside the one-visitor rounds and held
// to targetVisitors of them, round by round and summed.
func TestReportVisitors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		visitors [2]uint64 // one visitor: 600 each
		ratio    string
		fast     bool
	}{
		{[2]uint64{540, 540}, "0.900", true},
		{[2]uint64{510, 510}, "0.850", true},
		{[2]uint64{500, 510}, "0.842", false},
	} {
		r := goodReport()
		r.Visitors = &visitorRounds{Visitors: 400_000, Browsers: 8, Referrers: 20,
			Rounds: []phase{{Measured: result(tc.visitors[0], 0, 2*time.Millisecond)}, {Measured: result(tc.visitors[1], 0, 2*time.Millisecond)}}}
		r.merge()
		var out strings.Builder
		if v := r.print(&out); v != (verdict{true, tc.fast}) {
			t.Errorf("visitors %v: verdict %+v, want fast %v\n%s", tc.visitors, v, tc.fast, &out)
		}
		for _, want := range []string{"ratio visitors/one       " + tc.ratio, "redirect visitors, round 1", "redirect visitors, all rounds", "each request a visitor of its own, 400000 of them"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("visitors %v: output lacks %q:\n%s", tc.visitors, want, &out)
			}
		}
	}
}

// Every request of a realistic round is a visitor of its own: no address
// repeats, and the browsers and referrers are mixed.
func TestVisitorHeadersAreDistinctAndMixed(t *testing.T) {
	t.Parallel()
	addrs, uas, refs := visitorHeaders(20_000)
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a.String()] || !a.IsGlobalUnicast() || a.IsPrivate() {
			t.Fatalf("address %s repeated or not public", a)
		}
		seen[a.String()] = true
	}
	browsers, sources, none := map[string]int{}, map[string]int{}, 0
	for i := range uas {
		browsers[uas[i]]++
		if refs[i] == "" {
			none++
		} else {
			sources[refs[i]]++
		}
	}
	if len(browsers) != len(browserMix) || len(sources) != len(referrers) || none < 5000 || none > 8000 {
		t.Errorf("%d browsers, %d referrers, %d without: want %d, %d and about a third", len(browsers), len(sources), none, len(browserMix), len(referrers))
	}
}
