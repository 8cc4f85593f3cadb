package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Targets (docs/performance.md "The bench"). Misses are printed as FAIL; they change
// the exit code only under -strict, because a shared or loaded machine
// misses them without any regression. Errors and lost scans always fail
// the run: they are correctness, not speed.
const (
	targetRedirectRatio = 0.8
	targetAPIRatio      = 0.5
	targetP99           = 10 * time.Millisecond
	targetRSS           = 150 << 20
	// targetCustomDomain bounds the redirect on a custom domain against
	// the default one in the same run, either way: it must cost the same
	// (issue #22), and a custom round much faster than the default would
	// say the two are not doing the same work.
	targetCustomDomain = 0.05
)

// phase is one scenario's warm-up and measurement.
type phase struct {
	Warm, Measured loadResult
	// Busy: it started before the machine was quiet (settle gave up), so
	// it ran beside other work; marked in the table.
	Busy bool
	// Ran is when it ran, warm-up included (the country check reads the
	// scans of that time).
	Ran window
}

// Errors counts failures in both parts: an error in the warm-up is an error.
func (p *phase) Errors() uint64 { return p.Warm.Errors + p.Measured.Errors }

// report is everything the bench prints at the end.
type report struct {
	BareOnly                     bool // linkqr was not run: both sides are bare servers
	Links                        int
	RedirectLinkqr, RedirectBare phase // the rounds merged
	// RedirectLinkqrRounds and RedirectBareRounds are the rounds, in order.
	RedirectLinkqrRounds, RedirectBareRounds []phase
	// CustomDomain is the custom domain the RedirectCustom rounds ran on
	// ("": none ran); RedirectCustomRounds are in order, as the others.
	CustomDomain         string
	RedirectCustom       phase
	RedirectCustomRounds []phase
	// Targets is the check before the loads that every link answers 302
	// to its own target.
	Targets            targetCheck
	APILinkqr, APIBare phase
	APISkipped         bool // -redirect-only
	PeakRSS            uint64
	// Scans and CustomScans are the checks that every redirect of the
	// default and the custom-domain rounds was recorded (nil: not checked).
	Scans, CustomScans *scanCheck
	// Geo is the country pair of rounds (nil: -geo=false).
	Geo *geoRounds
	// Visitors are the realistic rounds (nil: -visitors=false).
	Visitors *visitorRounds
	// Fanout is the webhook scenario: alone, then with the redirect load.
	Fanout    []fanoutResult
	KeepPace  *keepPaceResult  // nil: not run
	Bulk      *bulkResult      // nil: not run (-bulk 0)
	Zip       *zipResult       // nil: not run (-zips 0)
	Analytics *analyticsReport // nil: not run (-scans 0)
	Topology  *topologyReport  // -topology: the only scenario run
}

// merge sums each side's redirect rounds into its totals.
func (r *report) merge() {
	r.RedirectBare, r.RedirectLinkqr = mergePhases(r.RedirectBareRounds), mergePhases(r.RedirectLinkqrRounds)
	r.RedirectCustom = mergePhases(r.RedirectCustomRounds)
	if g := r.Geo; g != nil {
		g.Geo, g.NoGeo = mergePhases(g.GeoRounds), mergePhases(g.NoGeoRounds)
	}
	if v := r.Visitors; v != nil {
		v.Merged = mergePhases(v.Rounds)
	}
}

// visitorRounds are the realistic rounds (visitors.go).
type visitorRounds struct {
	Visitors, Browsers, Referrers int // the fixture
	Rounds                        []phase
	Merged                        phase
}

// geoRounds are the country rounds (geo.go): the same redirects with a
// public X-Forwarded-For (geo, looked up) and with a private one (no-geo).
type geoRounds struct {
	Addrs, V6, Countries   int // the fixture: addresses, of which IPv6, and their countries
	GeoRounds, NoGeoRounds []phase
	Geo, NoGeo             phase          // the rounds merged
	GeoScans, NoGeoScans   []countryCheck // per round; nil: not checked (-target-bare-only)
	CheckErr               error
}

// verdict is the country target: the ratio of the geo rounds' throughput
// to the no-geo rounds', both summed over all rounds, and whether the
// lookup costs at most targetGeo. Faster is no failure: the country check
// says whether the lookups were made.
func (g *geoRounds) verdict() (float64, bool) {
	gr := ratio(g.Geo.Measured.Throughput(), g.NoGeo.Measured.Throughput())
	return gr, gr >= 1-targetGeo
}

// scanCheck compares the scans recorded on a set of links with the
// redirects their loads got answered.
type scanCheck struct {
	Want, Got int64
	// Slack is how many more scans than counted answers may be recorded:
	// requests the load generator abandoned in flight.
	Slack int64
	Err   error
}

func (c *scanCheck) ok() bool { return c.Err == nil && c.Got >= c.Want && c.Got <= c.Want+c.Slack }

// customVerdict is the custom-domain target: the ratio of the custom
// rounds' throughput to the default rounds', both summed over all rounds
// (so with roundOrder a steady drift weighs on both alike), and whether
// it is within targetCustomDomain of 1.
func (r *report) customVerdict() (float64, bool) {
	cr := ratio(r.RedirectCustom.Measured.Throughput(), r.RedirectLinkqr.Measured.Throughput())
	return cr, cr >= 1-targetCustomDomain && cr <= 1+targetCustomDomain
}

// verdict says whether the run is correct (no errors, no lost scans) and
// whether it met every performance target.
type verdict struct{ Correct, Fast bool }

func mark(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// print writes the table and returns the verdict.
func (r *report) print(w io.Writer) verdict {
	v := verdict{Correct: true, Fast: true}
	if t := r.Topology; t != nil {
		t.print(w)
		v.Correct = t.Two.Errors()+t.One.Errors()+t.Direct.Errors()+t.API.Errors() == 0 && (t.Fanout == nil || (t.Fanout.Err == nil && t.Fanout.Delivered == t.Fanout.Events))
		return v
	}
	check := func(ok, correctness bool) string {
		if !ok {
			if correctness {
				v.Correct = false
			} else {
				v.Fast = false
			}
		}
		return mark(ok)
	}
	left := "linkqr"
	if r.BareOnly {
		left = "bare#2" // -target-bare-only: a second bare server stands in
	}
	busy := false
	row := func(name string, p *phase) {
		m := &p.Measured
		mark := ""
		if p.Busy {
			mark, busy = "  *", true
		}
		fmt.Fprintf(w, "%-26s %10.0f %10s %10s %8d%s\n", name, m.Throughput(), ms(m.Latency.Percentile(0.5)), ms(m.Latency.Percentile(0.99)), p.Errors(), mark)
	}
	target := func(name, value, goal string, ok, correctness bool) {
		fmt.Fprintf(w, "  %-24s %-22s %-18s %s\n", name, value, goal, check(ok, correctness))
	}

	custom, g, vis := r.CustomDomain != "", r.Geo, r.Visitors
	fmt.Fprintf(w, "\n%-26s %10s %10s %10s %8s\n", "scenario", "req/s", "p50", "p99", "errors")
	for i := range r.RedirectLinkqrRounds {
		for _, side := range roundOrder(i, custom, g != nil, vis != nil) { // in the order they ran
			switch side {
			case sideBare:
				row(fmt.Sprintf("redirect bare, round %d", i+1), &r.RedirectBareRounds[i])
			case sideDefault:
				row(fmt.Sprintf("redirect %s, round %d", left, i+1), &r.RedirectLinkqrRounds[i])
			case sideCustom:
				row(fmt.Sprintf("redirect custom, round %d", i+1), &r.RedirectCustomRounds[i])
			case sideNoGeo:
				row(fmt.Sprintf("redirect no-geo, round %d", i+1), &g.NoGeoRounds[i])
			case sideGeo:
				row(fmt.Sprintf("redirect geo, round %d", i+1), &g.GeoRounds[i])
			case sideVisitors:
				row(fmt.Sprintf("redirect visitors, round %d", i+1), &vis.Rounds[i])
			}
		}
	}
	fmt.Fprintf(w, "  (%d links in rotation", r.Links)
	if custom {
		fmt.Fprintf(w, "; custom: %s with Host %s, through %d links of its own", left, r.CustomDomain, r.Links)
	}
	if g != nil {
		fmt.Fprintf(w, ";\n   geo: X-Forwarded-For from %d public addresses (%d IPv6) in %d countries, no-geo: their private twins", g.Addrs, g.V6, g.Countries)
	}
	if vis != nil {
		fmt.Fprintf(w, ";\n   visitors: each request a visitor of its own, %d of them, %d browsers and devices, %d referrers or none", vis.Visitors, vis.Browsers, vis.Referrers)
	}
	fmt.Fprintln(w, ")")
	row("redirect "+left+", all rounds", &r.RedirectLinkqr)
	if vis != nil {
		row("redirect visitors, all rounds", &vis.Merged)
	}
	if custom {
		row("redirect custom, all rounds", &r.RedirectCustom)
	}
	if g != nil {
		row("redirect no-geo, all rounds", &g.NoGeo)
		row("redirect geo, all rounds", &g.Geo)
	}
	row("redirect bare, all rounds", &r.RedirectBare)
	rr := ratio(r.RedirectLinkqr.Measured.Throughput(), r.RedirectBare.Measured.Throughput())
	target("ratio "+left+"/bare", fmt.Sprintf("%.2f", rr), fmt.Sprintf("target ≥ %.1f", targetRedirectRatio), rr >= targetRedirectRatio, false)
	p99 := r.RedirectLinkqr.Measured.Latency.Percentile(0.99)
	target("p99 redirect "+left, ms(p99), "target ≤ "+ms(targetP99), p99 <= targetP99, false)
	if custom {
		cr, ok := r.customVerdict()
		fmt.Fprintf(w, "  redirect on a custom domain within %.0f %% of the default\n", 100*targetCustomDomain)
		target("ratio custom/"+left, fmt.Sprintf("%.3f", cr), fmt.Sprintf("target %.2f–%.2f", 1-targetCustomDomain, 1+targetCustomDomain), ok, false)
		var byRound []string
		for i := range r.RedirectCustomRounds {
			byRound = append(byRound, fmt.Sprintf("%.3f", ratio(r.RedirectCustomRounds[i].Measured.Throughput(), r.RedirectLinkqrRounds[i].Measured.Throughput())))
		}
		fmt.Fprintf(w, "  %-24s %s\n", "  by round", strings.Join(byRound, " / "))
	}
	if vis != nil {
		vr := ratio(vis.Merged.Measured.Throughput(), r.RedirectLinkqr.Measured.Throughput())
		fmt.Fprintf(w, "  realistic visitors nearly as cheap as one\n")
		target("ratio visitors/one", fmt.Sprintf("%.3f", vr), fmt.Sprintf("target ≥ %.2f", targetVisitors), vr >= targetVisitors, false)
		var byRound []string
		for i := range vis.Rounds {
			byRound = append(byRound, fmt.Sprintf("%.3f", ratio(vis.Rounds[i].Measured.Throughput(), r.RedirectLinkqrRounds[i].Measured.Throughput())))
		}
		fmt.Fprintf(w, "  %-24s %s\n", "  by round", strings.Join(byRound, " / "))
		vp99 := vis.Merged.Measured.Latency.Percentile(0.99)
		target("p99 redirect visitors", ms(vp99), "target ≤ "+ms(targetP99), vp99 <= targetP99, false)
	}
	if g != nil {
		gr, ok := g.verdict()
		fmt.Fprintf(w, "  redirect with a country lookup at most %.0f %% slower than without\n", 100*targetGeo)
		target("ratio geo/no-geo", fmt.Sprintf("%.3f", gr), fmt.Sprintf("target ≥ %.2f", 1-targetGeo), ok, false)
		var byRound []string
		for i := range g.GeoRounds {
			byRound = append(byRound, fmt.Sprintf("%.3f", ratio(g.GeoRounds[i].Measured.Throughput(), g.NoGeoRounds[i].Measured.Throughput())))
		}
		fmt.Fprintf(w, "  %-24s %s\n", "  by round", strings.Join(byRound, " / "))
	}
	if busy {
		fmt.Fprintf(w, "  (* started before the machine was quiet, beside other work or linkqr's fold: its figures are noisy)\n")
	}
	if r.APISkipped {
		fmt.Fprintf(w, "%-26s %s\n", "api GET link", "not run (-redirect-only)")
	} else {
		row("api GET link "+left, &r.APILinkqr)
		row("api GET link bare", &r.APIBare)
		ar := ratio(r.APILinkqr.Measured.Throughput(), r.APIBare.Measured.Throughput())
		target("ratio "+left+"/bare", fmt.Sprintf("%.2f", ar), fmt.Sprintf("target ≥ %.1f", targetAPIRatio), ar >= targetAPIRatio, false)
	}

	for _, f := range r.Fanout {
		fmt.Fprintf(w, "\n%-26s %10s %10s %10s %8s\n", "webhook fan-out", "deliv/s", "p50", "p99", "dups")
		fmt.Fprintf(w, "%-26s %10.0f %10s %10s %8d\n", fmt.Sprintf("%d of %d events", f.Delivered, f.Events), f.Rate(),
			ms(f.Latency.Percentile(0.5)), ms(f.Latency.Percentile(0.99)), f.Duplicates)
		target("deliveries/s", fmt.Sprintf("%.0f", f.Rate()), fmt.Sprintf("target ≥ %d", targetDeliveries), f.Rate() >= targetDeliveries, false)
		fmt.Fprintf(w, "  %-24s %s\n", "yielded (saturated)", formatYielded(f.Yielded))
		target("every event delivered", fmt.Sprintf("%d of %d", f.Delivered, f.Events), "target: all", f.Err == nil && f.Delivered == f.Events, true)
		if f.Err != nil {
			fmt.Fprintf(w, "    %v\n", f.Err)
		}
	}

	if k := r.KeepPace; k != nil {
		fmt.Fprintf(w, "\n%-26s %10s %10s %10s %8s\n", "deliveries keeping pace", "req/s", "p50", "p99", "errors")
		fmt.Fprintf(w, "  (redirect paced at %.0f req/s, half the capacity above, %d a second of it on links subscribed to scan.created)\n", k.Rate, keepPaceHookRate)
		row("redirect, other links", &k.Redirect)
		row("redirect, subscribed links", &k.Hooks)
		target("backlog when load stopped", fmt.Sprintf("%v (%d of %d)", k.Backlog().Round(time.Millisecond), int64(k.Caused)-int64(k.AtEnd), k.Caused), "target ≤ "+targetBacklog.String(), k.Backlog() <= targetBacklog, false)
		fmt.Fprintf(w, "  %-24s %s\n", "yielded (saturated)", formatYielded(k.Yielded))
		target("every event delivered", fmt.Sprintf("%d of %d", k.Delivered, k.Caused), "target: all", k.Err == nil && uint64(k.Delivered) >= k.Caused, true)
		if k.Err != nil {
			fmt.Fprintf(w, "    %v\n", k.Err)
		}
		errs := k.Redirect.Errors() + k.Hooks.Errors()
		target("errors (keeping pace)", fmt.Sprint(errs), "target 0", errs == 0, true)
	}

	if r.Bulk != nil {
		r.Bulk.print(w, row, target)
	}
	if r.Zip != nil {
		r.Zip.print(w, row, target)
	}

	fmt.Fprintln(w)
	target(left+" peak RSS", fmt.Sprintf("%.0f MiB", float64(r.PeakRSS)/(1<<20)), fmt.Sprintf("target ≤ %d MiB", targetRSS>>20), r.PeakRSS > 0 && r.PeakRSS <= targetRSS, false)
	phases := []*phase{&r.RedirectLinkqr, &r.RedirectCustom, &r.RedirectBare, &r.APILinkqr, &r.APIBare}
	if g != nil {
		phases = append(phases, &g.NoGeo, &g.Geo)
	}
	var errs uint64
	for _, p := range phases {
		errs += p.Errors()
	}
	target("errors (all phases)", fmt.Sprint(errs), "target 0", errs == 0, true)
	for _, p := range phases {
		for _, s := range append(append([]string(nil), p.Warm.Samples...), p.Measured.Samples...) {
			fmt.Fprintf(w, "    e.g. %s\n", s)
		}
	}
	t := r.Targets
	target("redirect targets", fmt.Sprintf("%d of %d right", t.Checked-t.Wrong, t.Checked), "target: all", t.Checked > 0 && t.Wrong == 0, true)
	for _, s := range t.Samples {
		fmt.Fprintf(w, "    e.g. %s\n", s)
	}
	scans := func(name string, c *scanCheck) {
		switch {
		case c == nil:
			fmt.Fprintf(w, "  %-24s %s\n", name, "not checked (-target-bare-only)")
		case c.Err != nil:
			target(name, "unknown", "target: every 302", false, true)
			fmt.Fprintf(w, "    %v\n", c.Err)
		default:
			got := fmt.Sprintf("%d of %d", c.Got, c.Want)
			if lost := c.Want - c.Got; lost > 0 {
				got += fmt.Sprintf(" (%d lost)", lost)
			} else if lost < 0 {
				got += fmt.Sprintf(" (%d extra, in flight when the generator stopped; at most %d allowed)", -lost, c.Slack)
			}
			target(name, got, "target: every 302", c.ok(), true)
		}
	}
	scans("scans recorded", r.Scans)
	if custom {
		scans("scans recorded (custom)", r.CustomScans)
	}
	if g != nil {
		g.printCountries(w, target)
	}
	if r.Analytics != nil {
		r.Analytics.print(w, &v)
	}
	return v
}

// printCountries prints the country check: per round, the share of the
// geo round's human scans with a country (at least targetGeoKnown) and the
// no-geo round's scans with one (none).
func (g *geoRounds) printCountries(w io.Writer, target func(name, value, goal string, ok, correctness bool)) {
	switch {
	case g.CheckErr != nil:
		target("scans with a country", "unknown", "target: geo only", false, true)
		fmt.Fprintf(w, "    %v\n", g.CheckErr)
		return
	case g.GeoScans == nil:
		fmt.Fprintf(w, "  %-24s %s\n", "scans with a country", "not checked (-target-bare-only)")
		return
	}
	for i, c := range g.GeoScans {
		ok := c.Scans > 0 && float64(c.Known) >= targetGeoKnown*float64(c.Scans)
		target(fmt.Sprintf("country, geo %d", i+1), fmt.Sprintf("%d of %d (%s)", c.Known, c.Scans, c.knownShare()), fmt.Sprintf("target ≥ %.0f %%", 100*targetGeoKnown), ok, true)
	}
	for i, c := range g.NoGeoScans {
		target(fmt.Sprintf("country, no-geo %d", i+1), fmt.Sprintf("%d of %d", c.Known, c.Scans), "target: none", c.Scans > 0 && c.Known == 0, true)
	}
}
