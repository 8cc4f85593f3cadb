package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linkqr/linkqr/internal/dnsserver"
	"github.com/linkqr/linkqr/internal/geo"
)

// chromeUA is sent on every request: a human desktop browser, because bots
// are not counted as scans and the scan check needs every redirect counted.
const chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"

// bench is one run: its children, temporary files and results.
type bench struct {
	opts     options
	log      io.Writer
	tmp      string
	children []*child
	bin      string     // the linkqr binary, for admin commands
	wrk      *wrkRunner // nil: the Go generator drives the closed-loop loads
	env      []string   // its environment
	// linkqrMetrics is the base URL of the measured linkqr's private
	// metrics listener (LINKQR_METRICS_ADDR), and loadEnded when its last
	// load stopped: settle waits for its fold (settle.go).
	linkqrMetrics string
	loadEnded     time.Time
	// dns answers the custom domain's verification record; nil when no
	// custom domain is measured.
	dns *dnsserver.Server
}

func (b *bench) progress(format string, args ...any) {
	fmt.Fprintf(b.log, "linkqr-bench: "+format+"\n", args...)
}

// cleanup stops the children, newest first (linkqr last, so its flush and
// PostgreSQL stop are not hurried), and removes the temporary directory.
func (b *bench) cleanup() error {
	var errs []error
	for i := len(b.children) - 1; i >= 0; i-- {
		c := b.children[i]
		b.progress("stopping %s", c.name)
		if err := c.stop(60 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	b.children = nil
	if b.dns != nil {
		errs = append(errs, b.dns.Close())
		b.dns = nil
	}
	if b.tmp != "" {
		if err := os.RemoveAll(b.tmp); err != nil {
			errs = append(errs, err)
		}
		b.tmp = ""
	}
	return errors.Join(errs...)
}

func (b *bench) run(ctx context.Context) (*report, error) {
	var err error
	if b.tmp, err = os.MkdirTemp("", "lqbench"); err != nil {
		return nil, err
	}
	rep := &report{BareOnly: b.opts.BareOnly, Links: b.opts.Links, APISkipped: b.opts.RedirectOnly}
	var warning string
	if b.wrk, warning = findWrk(b.tmp); warning != "" {
		b.progress("WARNING: %s", warning)
	} else {
		b.progress("load generator: %s (closed loop, %d threads)", b.wrk.bin, b.wrk.threads)
	}
	if b.opts.Topology {
		rep.Topology, err = b.topology(ctx)
		return rep, err
	}

	left, fx, err := b.startLeft(ctx)
	if err != nil {
		return nil, err
	}
	sampler := &rssSampler{pid: left.child.Pid()}
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go sampler.run(sctx, 100*time.Millisecond)

	bare, err := b.startBare(ctx, "bare server", fx)
	if err != nil {
		return nil, err
	}

	redirect, api := fx.redirect, fx.apiGet
	rep.CustomDomain = fx.Domain
	var visitors, twins []netip.Addr
	if b.opts.Geo {
		var countries int
		visitors, twins, countries = visitorAddrs(geoAddrs)
		rep.Geo = &geoRounds{Addrs: len(visitors), Countries: countries}
		for _, a := range visitors {
			if a.Is6() {
				rep.Geo.V6++
			}
		}
		b.progress("country rounds: %d public addresses (%d IPv6) in %d countries by the built-in data %s, and as many private twins", len(visitors), rep.Geo.V6, countries, geo.BuiltinDate())
	}

	var many []netip.Addr
	var uas, refs []string
	if b.opts.Visitors {
		many, uas, refs = visitorHeaders(visitorsPerRound)
		rep.Visitors = &visitorRounds{Visitors: len(many), Browsers: len(browserMix), Referrers: len(referrers)}
		b.progress("realistic rounds: %d visitors, one a request, %d browsers and devices, %d referrers (or none)", len(many), len(browserMix), len(referrers))
	}

	// Every link answers 302 to its own target (HEAD: no scans), on
	// both domains, before anything is timed: wrk sees status classes only.
	rep.Targets = checkTargets(ctx, fx.redirect(left.url))
	if fx.Domain != "" {
		rep.Targets.add(checkTargets(ctx, fx.redirectCustom(left.url)))
	}
	b.progress("redirect targets: %d checked, %d wrong", rep.Targets.Checked, rep.Targets.Wrong)

	// Bare, linkqr, linkqr on the custom domain and the country pair take
	// turns, round by round, each second round in reverse (roundOrder), so
	// that a change in the machine's speed during the run (another
	// process, thermal limits) shows as a difference between rounds
	// instead of skewing a ratio.
	for round := 1; round <= b.opts.Rounds; round++ {
		for _, side := range roundOrder(round-1, fx.Domain != "", b.opts.Geo, b.opts.Visitors) {
			var sc scenario
			var into *[]phase
			switch side {
			case sideBare:
				sc, into = redirect(bare.url), &rep.RedirectBareRounds
			case sideDefault:
				sc, into = redirect(left.url), &rep.RedirectLinkqrRounds
			case sideCustom:
				sc, into = fx.redirectCustom(left.url), &rep.RedirectCustomRounds
			case sideNoGeo:
				sc, into = fx.redirectFrom(left.url, twins), &rep.Geo.NoGeoRounds
			case sideGeo:
				sc, into = fx.redirectFrom(left.url, visitors), &rep.Geo.GeoRounds
			case sideVisitors:
				sc, into = fx.redirectVisitors(left.url, many, uas, refs), &rep.Visitors.Rounds
			}
			p, err := b.load(ctx, fmt.Sprintf("redirect %s (round %d)", side.label(left.name, fx.Domain), round), sc)
			if err != nil {
				return nil, err
			}
			*into = append(*into, p)
		}
	}
	rep.merge()
	if !b.opts.BareOnly {
		// A linkqr load may have run last (an odd -rounds): its scans are
		// counted once folded, which at saturation can take longer than
		// -verify-timeout, so wait for that fold as before a round.
		b.waitFolded(ctx, "the scan check")
		// The country rounds request the default domain's links too.
		onDefault := []*phase{&rep.RedirectLinkqr}
		if g := rep.Geo; g != nil {
			onDefault = append(onDefault, &g.NoGeo, &g.Geo)
		}
		if v := rep.Visitors; v != nil {
			onDefault = append(onDefault, &v.Merged)
		}
		rep.Scans = b.checkScans(ctx, left, fx.Tokens[0], fx.Links, "", onDefault...)
		if fx.Domain != "" {
			rep.CustomScans = b.checkScans(ctx, left, fx.Tokens[0], fx.Custom, fx.Domain, &rep.RedirectCustom)
		}
		if g := rep.Geo; g != nil {
			// Once every scan is counted, each country round's scans are
			// in the table: those of the geo rounds must carry a country,
			// those of the no-geo rounds none.
			var windows []window
			for i := range g.GeoRounds {
				windows = append(windows, g.GeoRounds[i].Ran, g.NoGeoRounds[i].Ran)
			}
			b.progress("verifying countries: the scans of %d country rounds", len(windows))
			checks, err := b.countryScans(ctx, windows)
			g.CheckErr = err
			for i := 0; i+1 < len(checks); i += 2 {
				g.GeoScans, g.NoGeoScans = append(g.GeoScans, checks[i]), append(g.NoGeoScans, checks[i+1])
			}
		}
	}
	if !b.opts.RedirectOnly {
		if rep.APILinkqr, err = b.load(ctx, "api GET link "+left.name, api(left.url)); err != nil {
			return nil, err
		}
		if rep.APIBare, err = b.load(ctx, "api GET link bare", api(bare.url)); err != nil {
			return nil, err
		}
	}
	if !b.opts.BareOnly && !b.opts.RedirectOnly && b.opts.Events > 0 {
		hooks, err := setupFanout(ctx, b.bin, b.env, left.url)
		if err != nil {
			return nil, err
		}
		alone, err := b.runFanout(ctx, left.url, left.url, left.metrics, hooks, b.opts.Events)
		if err != nil {
			return nil, err
		}
		rep.Fanout = []fanoutResult{alone}
		if b.opts.KeepPace > 0 {
			kp, err := b.runKeepPace(ctx, left.url, left.metrics, hooks, redirect(left.url), rep.RedirectLinkqr.Measured.Throughput()/2)
			if err != nil {
				return nil, err
			}
			rep.KeepPace = &kp
		}
	}
	if !b.opts.BareOnly && !b.opts.RedirectOnly && b.opts.Bulk > 0 {
		if rep.Bulk, err = b.bulk(ctx, left.url, fx.Tokens[0], redirect(left.url), rep.RedirectLinkqr.Measured.Throughput()/2); err != nil {
			return nil, err
		}
	}
	rep.PeakRSS = sampler.Peak()
	if !b.opts.BareOnly && !b.opts.RedirectOnly && b.opts.Zips > 0 {
		// After the peak RSS: the archives' memory has its own figure.
		if rep.Zip, err = b.zips(ctx, left.url, fx.Tokens[0], left.child.Pid(), redirect(left.url), rep.RedirectLinkqr.Measured.Throughput()/2); err != nil {
			return nil, err
		}
	}
	if !b.opts.BareOnly && !b.opts.RedirectOnly && b.opts.Scans > 0 {
		if rep.Analytics, err = b.analytics(ctx, left, fx, rep.RedirectLinkqr.Measured.Throughput()/2); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// checkScans waits until the scans of links (on domain, "" for the
// default one) add up to the redirects the phases' requests got answered
// (each phase the merged rounds of one side), and says whether they did.
func (b *bench) checkScans(ctx context.Context, left *server, token string, links []fixtureLink, domain string, phases ...*phase) *scanCheck {
	c := &scanCheck{}
	for _, p := range phases {
		c.Want += int64(p.Warm.OK + p.Measured.OK)
	}
	b.progress("verifying scans: %d redirects answered, polling scan_count of %d links (up to %v)", c.Want, len(links), b.opts.VerifyTimeout)
	if b.wrk != nil {
		// wrk stops with requests in flight and does not count their
		// answers, which the server may have sent (and recorded) all
		// the same: at most one per connection per wrk run.
		runs := int64(b.opts.Rounds * len(phases))
		if b.opts.Warmup > 0 {
			runs *= 2
		}
		c.Slack = runs * int64(b.opts.Conns)
	}
	c.Got, c.Err = verifyScans(ctx, left.url, token, links, domain, c.Want, b.opts.VerifyTimeout)
	if !c.ok() {
		b.progress("scans recorded: %d of %d; linkqr's last lines:\n%s", c.Got, c.Want, left.child.Output())
	}
	return c
}

// redirectSide is one side of the redirect rounds.
type redirectSide int

const (
	sideBare     redirectSide = iota
	sideDefault               // linkqr on its default domain
	sideCustom                // linkqr on the custom domain
	sideNoGeo                 // linkqr, each request with a private X-Forwarded-For
	sideGeo                   // linkqr, each request with a public X-Forwarded-For
	sideVisitors              // linkqr, each request a visitor of its own (visitors.go)
)

// label names the side in progress lines and the report.
func (s redirectSide) label(left, domain string) string {
	switch s {
	case sideBare:
		return "bare"
	case sideCustom:
		return left + " on " + domain
	case sideNoGeo:
		return left + " no-geo"
	case sideGeo:
		return left + " geo"
	case sideVisitors:
		return left + " visitors"
	}
	return left
}

// roundOrder is the order of the loads in round i (from 0): bare, the
// realistic visitors (with visitors), linkqr, linkqr on the custom domain
// (when there is one), then the country pair no-geo and geo (with geo),
// every second round reversed. Over each pair of rounds every side then
// sits at the same average place in time, so a steady drift of the
// machine's speed (thermal limits, another engineer's job starting) weighs
// on all sides alike; the one-visitor rounds are always next to both the
// realistic and the custom ones, and geo next to no-geo.
func roundOrder(i int, custom, geo, visitors bool) []redirectSide {
	order := []redirectSide{sideBare}
	if visitors {
		order = append(order, sideVisitors)
	}
	order = append(order, sideDefault)
	if custom {
		order = append(order, sideCustom)
	}
	if geo {
		order = append(order, sideNoGeo, sideGeo)
	}
	if i%2 == 1 {
		slices.Reverse(order)
	}
	return order
}

// redirect is the redirect scenario: a browser's GET of every link's code
// on base, in turn.
func (fx fixtures) redirect(base string) scenario {
	return redirectScenario(base, "", fx.Links)
}

// redirectCustom is the redirect scenario on the custom domain: the same
// connections to base, with the domain's Host, through its own links.
func (fx fixtures) redirectCustom(base string) scenario {
	return redirectScenario(base, fx.Domain, fx.Custom)
}

// redirectFrom is the redirect scenario of the country rounds: the
// default domain's links, each request forwarded for the next of addrs
// (geo.go).
func (fx fixtures) redirectFrom(base string, addrs []netip.Addr) scenario {
	s := redirectScenario(base, "", fx.Links)
	s.ForwardedFor = forwardedFor(addrs, len(s.URLs))
	return s
}

func redirectScenario(base, host string, links []fixtureLink) scenario {
	s := scenario{Host: host, Header: http.Header{"User-Agent": {chromeUA}}, WantCode: http.StatusFound}
	for _, l := range links {
		s.URLs = append(s.URLs, base+"/"+l.Code)
		s.Targets = append(s.Targets, l.TargetURL)
	}
	return s
}

// apiGet is the API scenario: GET /api/v1/links/{id} of every link on
// base, in turn, each connection with its own key.
func (fx fixtures) apiGet(base string) scenario {
	s := scenario{
		Header:   http.Header{"User-Agent": {chromeUA}, "Accept": {"application/json"}},
		WantCode: http.StatusOK,
		ConnHeader: func(c int) http.Header {
			return http.Header{"Authorization": {"Bearer " + fx.Tokens[c%len(fx.Tokens)]}}
		},
	}
	for _, l := range fx.Links {
		s.URLs = append(s.URLs, base+"/api/v1/links/"+l.ID)
	}
	return s
}

// server is a started child with its base URL.
type server struct {
	name    string
	url     string
	metrics string // base URL of linkqr's metrics listener; "" for a bare server
	child   *child
}

// startLeft starts the measured server — linkqr with fresh data, or a
// second bare server under -target-bare-only — and returns the fixtures.
func (b *bench) startLeft(ctx context.Context) (*server, fixtures, error) {
	if b.opts.BareOnly {
		fx := syntheticFixtures(b.opts.Links, b.opts.Keys, b.opts.CustomDomain)
		s, err := b.startBare(ctx, "bare#2 (standing in for linkqr)", fx)
		if s != nil {
			s.name = "bare#2"
		}
		return s, fx, err
	}
	bin, err := filepath.Abs(b.opts.Linkqr)
	if err != nil {
		return nil, fixtures{}, err
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fixtures{}, fmt.Errorf("%w (build it first: make build)", err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, fixtures{}, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, fixtures{}, err
	}
	env := linkqrEnv(filepath.Join(b.tmp, "data"), addr, metricsAddr)
	if b.opts.CustomDomain != "" {
		// Verifying the domain looks its TXT record up here; its short
		// URLs are http, as the bench speaks to linkqr.
		if b.dns, err = dnsserver.Start(); err != nil {
			return nil, fixtures{}, err
		}
		env = append(env, "LINKQR_DNS_RESOLVER="+b.dns.Addr, "LINKQR_CUSTOM_DOMAIN_SCHEME=http")
	}
	b.bin, b.env = bin, env
	b.progress("starting linkqr serve on %s (embedded PostgreSQL in %s)", addr, b.tmp)
	start := time.Now()
	c, err := startChild("linkqr", `"msg":"listening"`, bin, []string{"serve"}, env)
	if err != nil {
		return nil, fixtures{}, err
	}
	b.children = append(b.children, c)
	s := &server{name: "linkqr", url: "http://" + addr, metrics: "http://" + metricsAddr, child: c}
	b.linkqrMetrics = s.metrics
	if err := c.waitReady(ctx, 3*time.Minute, healthy(s.url)); err != nil {
		return nil, fixtures{}, err
	}
	b.progress("linkqr ready after %v; creating a workspace, %d API keys and %d links", time.Since(start).Round(time.Millisecond), b.opts.Keys, b.opts.Links)
	if b.opts.CustomDomain != "" {
		b.progress("and the custom domain %s, verified through the bench's DNS server on %s, with %d links of its own", b.opts.CustomDomain, b.dns.Addr, b.opts.Links)
	}
	fx, err := setupLinkqr(ctx, bin, env, s.url, b.opts.Links, b.opts.Keys, b.opts.CustomDomain, b.dns)
	return s, fx, err
}

// startBare starts a bare baseline server serving fx.
func (b *bench) startBare(ctx context.Context, name string, fx fixtures) (*server, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	file := filepath.Join(b.tmp, fmt.Sprintf("fixtures-%d.json", len(b.children)))
	if err := writeFixtures(file, fx); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	b.progress("starting %s on %s", name, addr)
	c, err := startChild(name, "listening", self, []string{"bare", "--addr", addr, "--fixtures", file}, os.Environ())
	if err != nil {
		return nil, err
	}
	b.children = append(b.children, c)
	if err := c.waitReady(ctx, 30*time.Second, nil); err != nil {
		return nil, err
	}
	return &server{name: "bare", url: "http://" + addr, child: c}, nil
}

func (b *bench) load(ctx context.Context, name string, sc scenario) (phase, error) {
	sc.Name = name
	quiet := b.settle(ctx, name)
	b.progress("load: %s — %v warm-up + %v, %d connections", name, b.opts.Warmup, b.opts.Duration, b.opts.Conns)
	began := time.Now()
	var warm, measured loadResult
	var err error
	var writes scanWrites
	if b.wrk != nil {
		if b.opts.Warmup > 0 {
			warm, err = b.wrk.run(ctx, sc, b.opts.Conns, b.opts.Warmup)
		}
		writes = b.readScanWrites(ctx)
		if err == nil {
			measured, err = b.wrk.run(ctx, sc, b.opts.Conns, b.opts.Duration)
		}
	} else {
		warm, measured, err = runLoad(ctx, sc, loadOptions{Conns: b.opts.Conns, Warmup: b.opts.Warmup, Duration: b.opts.Duration})
	}
	b.loadEnded = time.Now()
	if err == nil {
		err = ctx.Err() // Ctrl-C: stop here rather than report a cut-short run
	}
	// A request in the kernel's buffers when the generator stopped is
	// answered a moment later; the next load starts after settle's
	// half-second window at the earliest.
	p := phase{Warm: warm, Measured: measured, Busy: !quiet, Ran: window{From: began, To: b.loadEnded.Add(250 * time.Millisecond)}}
	if err == nil {
		b.loaded(ctx, name, p, writes)
	}
	return p, err
}

// loadPaced runs sc at about rate requests a second: the scenarios at a
// share of the measured capacity. Both generators keep a schedule, so the
// rate reached falls short of rate only when linkqr cannot keep up.
func (b *bench) loadPaced(ctx context.Context, name string, sc scenario, rate float64, d time.Duration) (phase, error) {
	sc.Name = name
	var warm, measured loadResult
	var err error
	var writes scanWrites
	if b.wrk != nil {
		conns := pacedConns(rate)
		b.progress("load: %s — %.0f req/s for %v warm-up + %v, on a schedule over %d connections (wrk)", name, rate, b.opts.Warmup, d, conns)
		if b.opts.Warmup > 0 {
			warm, err = b.wrk.runPaced(ctx, sc, conns, rate, b.opts.Warmup)
		}
		writes = b.readScanWrites(ctx)
		if err == nil {
			measured, err = b.wrk.runPaced(ctx, sc, conns, rate, d)
		}
	} else {
		b.progress("load: %s — %.0f req/s for %v warm-up + %v, %d connections", name, rate, b.opts.Warmup, d, b.opts.Conns)
		warm, measured, err = runLoad(ctx, sc, loadOptions{Conns: b.opts.Conns, Warmup: b.opts.Warmup, Duration: d, Rate: rate})
	}
	b.loadEnded = time.Now()
	if err == nil {
		err = ctx.Err()
	}
	p := phase{Warm: warm, Measured: measured}
	if err == nil {
		b.loaded(ctx, name, p, writes)
	}
	return p, err
}

// loaded prints a load's line: its rate, p99 and errors, and what
// linkqr's scan writers did since before.
func (b *bench) loaded(ctx context.Context, name string, p phase, before scanWrites) {
	b.progress("      %s: %.0f req/s, p99 %s, %d errors%s", name, p.Measured.Throughput(), ms(p.Measured.Latency.Percentile(0.99)), p.Errors(), b.readScanWrites(ctx).since(before))
}

// scanWrites is one reading of linkqr's scan writers
// (docs/scan-pipeline.md): how many redirects its crash bound had made
// wait, and for how long, in all, and the histogram of how long the oldest
// scan of each written batch had been unwritten. Read before a measured
// load and after it, it says how much of the load's tail was redirects
// waiting for a scan write to commit, and how close the writers came to
// the bound's 100 ms. ok is false when it could not be read (the bench
// runs the bare server alone, or the metric is missing).
type scanWrites struct {
	n, seconds float64
	age        histogram // linkqr_scan_unwritten_age_seconds
	ok         bool
}

// unwrittenAge is the histogram of the written batches' oldest scans.
const unwrittenAge = "linkqr_scan_unwritten_age_seconds"

func (b *bench) readScanWrites(ctx context.Context) scanWrites {
	if b.linkqrMetrics == "" {
		return scanWrites{}
	}
	lines := scrapeMetrics(ctx, b.linkqrMetrics)
	n, okN := valueIn(lines, "linkqr_scan_bound_waits_total")
	s, okS := valueIn(lines, "linkqr_scan_bound_wait_seconds_total")
	return scanWrites{n: n, seconds: s, age: histogramIn(lines, unwrittenAge), ok: okN && okS}
}

// since is the waits between before and w, and the p99 of the batches'
// oldest unwritten scans, as the end of a load's progress line ("" when
// there was nothing to say or either reading failed).
func (w scanWrites) since(before scanWrites) string {
	if !w.ok || !before.ok {
		return ""
	}
	var out string
	if w.n > before.n {
		out = fmt.Sprintf(", %.0f redirects waited at the crash bound (%.2f s in all)", w.n-before.n, w.seconds-before.seconds)
	}
	if le, batches, ok := w.age.quantileSince(before.age, 0.99); ok {
		out += fmt.Sprintf("; of %.0f scan batches 99 %% committed within %s of their oldest redirect", batches, ms(time.Duration(le*float64(time.Second))))
	}
	return out
}

// histogram is one reading of an unlabelled Prometheus histogram: its
// finite cumulative buckets in ascending order, and its count.
type histogram struct {
	buckets []bucket
	count   float64
}

// bucket holds the observations at or below le seconds.
type bucket struct{ le, count float64 }

// histogramIn reads the histogram name from the lines of one scrape (no
// buckets when it is not there).
func histogramIn(lines []string, name string) histogram {
	var h histogram
	for _, line := range lines {
		rest, ok := strings.CutPrefix(line, name+`_bucket{le="`)
		if !ok {
			continue
		}
		le, value, ok := strings.Cut(rest, `"} `)
		l, errL := strconv.ParseFloat(le, 64)
		v, errV := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if ok && errL == nil && errV == nil && !math.IsInf(l, 1) {
			h.buckets = append(h.buckets, bucket{le: l, count: v})
		}
	}
	h.count, _ = valueIn(lines, name+"_count")
	return h
}

// quantileSince is the upper bound of the bucket holding the q quantile of
// the observations between before and h, and how many there were; ok is
// false when there were none, the readings do not match, or the quantile
// lies above the last finite bucket.
func (h histogram) quantileSince(before histogram, q float64) (le, total float64, ok bool) {
	total = h.count - before.count
	if total <= 0 || len(h.buckets) == 0 || len(h.buckets) != len(before.buckets) {
		return 0, 0, false
	}
	for i, b := range h.buckets {
		if b.count-before.buckets[i].count >= q*total {
			return b.le, total, true
		}
	}
	return 0, 0, false
}

// mergePhases adds rounds of one scenario together: requests, errors and
// elapsed time sum (so throughput is the rounds' average), latencies merge.
func mergePhases(rounds []phase) phase {
	var m phase
	for _, p := range rounds {
		m.Busy = m.Busy || p.Busy
		for _, pair := range [][2]*loadResult{{&m.Warm, &p.Warm}, {&m.Measured, &p.Measured}} {
			pair[0].merge(pair[1])
			pair[0].Elapsed += pair[1].Elapsed
		}
	}
	return m
}

// tuningSettings are the LINKQR_* settings the linkqr child inherits from
// the bench's environment, so their effect can be measured
// (docs/operations.md "Configuration"); every other LINKQR_* setting could point it at another
// database, address or mail server, and is dropped.
var tuningSettings = []string{"LINKQR_CPU_PROFILE", "LINKQR_ANALYTICS_FOLD_INTERVAL", "LINKQR_SATURATION_LATENCY", "LINKQR_SATURATED_DELIVERY_PACE"}

// linkqrEnv is the environment of the linkqr child: the caller's, minus
// any LINKQR_* setting but the tuning ones, plus its addresses (/metrics,
// which the bench reads, is only on metricsAddr), a fresh data directory
// (embedded PostgreSQL) and quiet logs (no log line per request).
func linkqrEnv(dataDir, addr, metricsAddr string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "LINKQR_") || slices.Contains(tuningSettings, name) {
			env = append(env, kv)
		}
	}
	return append(env,
		"LINKQR_ADDR="+addr,
		"LINKQR_METRICS_ADDR="+metricsAddr,
		"LINKQR_DATA_DIR="+dataDir,
		"LINKQR_LOG_LEVEL=warn",
		"LINKQR_LOG_FORMAT=json",
		// The webhook scenario's receiver is the bench itself, on loopback.
		"LINKQR_WEBHOOK_ALLOW_PRIVATE=true",
		// The load generators, on loopback, stand in for the proxy in
		// front that adds X-Forwarded-For (the country rounds, geo.go).
		// Requests without the header, as in every other round, keep
		// the loopback peer as their client: a private address, whose
		// country is Unknown without a lookup.
		"LINKQR_TRUSTED_PROXIES=127.0.0.1/32,::1/128",
	)
}

// healthy probes GET /healthz: the "listening" line is logged at info,
// which LINKQR_LOG_LEVEL=warn hides.
func healthy(base string) func(context.Context) bool {
	client := &http.Client{Timeout: time.Second}
	return func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
		if err != nil {
			return false
		}
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// freeAddr finds a free loopback port. Another process could take it
// before the child binds it; the child would then fail clearly.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
