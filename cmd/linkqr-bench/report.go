package main

import (
	"fmt"
	"io"
	"time"
)

// Targets (docs/performance.md "The bench"). Misses are printed as FAIL; they change
// the exit code only under -strict, because a shared or loaded machine
// misses them without any regression. Errors and lost scans always fail
// the run: they are correctness, not speed.
const (
	targetRedirectRatio = 0.6
	targetAPIRatio      = 0.3
	targetP99           = 15 * time.Millisecond
	targetRSS           = 150 << 20
)

// phase is one scenario's warm-up and measurement.
type phase struct {
	Warm, Measured loadResult
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
	APILinkqr, APIBare                       phase
	PeakRSS                                  uint64
	ScansChecked                             bool
	ScansWant, ScansGot                      int64
	// ScansSlack is how many more scans than counted answers may be
	// recorded: requests the load generator abandoned in flight.
	ScansSlack int64
	ScanErr    error
	// Fanout is the webhook scenario: alone, then with the redirect load.
	Fanout    []fanoutResult
	KeepPace  *keepPaceResult  // nil: not run
	Analytics *analyticsReport // nil: not run (-scans 0)
	Topology  *topologyReport  // -topology: the only scenario run
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
	row := func(name string, p *phase) {
		m := &p.Measured
		fmt.Fprintf(w, "%-26s %10.0f %10s %10s %8d\n", name, m.Throughput(), ms(m.Latency.Percentile(0.5)), ms(m.Latency.Percentile(0.99)), p.Errors())
	}
	target := func(name, value, goal string, ok, correctness bool) {
		fmt.Fprintf(w, "  %-24s %-22s %-18s %s\n", name, value, goal, check(ok, correctness))
	}

	fmt.Fprintf(w, "\n%-26s %10s %10s %10s %8s\n", "scenario", "req/s", "p50", "p99", "errors")
	for i := range r.RedirectLinkqrRounds {
		row(fmt.Sprintf("redirect bare, round %d", i+1), &r.RedirectBareRounds[i])
		row(fmt.Sprintf("redirect %s, round %d", left, i+1), &r.RedirectLinkqrRounds[i])
	}
	fmt.Fprintf(w, "  (%d links in rotation)\n", r.Links)
	row("redirect "+left+", all rounds", &r.RedirectLinkqr)
	row("redirect bare, all rounds", &r.RedirectBare)
	rr := ratio(r.RedirectLinkqr.Measured.Throughput(), r.RedirectBare.Measured.Throughput())
	target("ratio "+left+"/bare", fmt.Sprintf("%.2f", rr), fmt.Sprintf("target ≥ %.1f", targetRedirectRatio), rr >= targetRedirectRatio, false)
	p99 := r.RedirectLinkqr.Measured.Latency.Percentile(0.99)
	target("p99 redirect "+left, ms(p99), "target ≤ "+ms(targetP99), p99 <= targetP99, false)
	row("api GET link "+left, &r.APILinkqr)
	row("api GET link bare", &r.APIBare)
	ar := ratio(r.APILinkqr.Measured.Throughput(), r.APIBare.Measured.Throughput())
	target("ratio "+left+"/bare", fmt.Sprintf("%.2f", ar), fmt.Sprintf("target ≥ %.1f", targetAPIRatio), ar >= targetAPIRatio, false)

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

	fmt.Fprintln(w)
	target(left+" peak RSS", fmt.Sprintf("%.0f MiB", float64(r.PeakRSS)/(1<<20)), fmt.Sprintf("target ≤ %d MiB", targetRSS>>20), r.PeakRSS > 0 && r.PeakRSS <= targetRSS, false)
	errs := r.RedirectLinkqr.Errors() + r.RedirectBare.Errors() + r.APILinkqr.Errors() + r.APIBare.Errors()
	target("errors (all phases)", fmt.Sprint(errs), "target 0", errs == 0, true)
	for _, p := range []*phase{&r.RedirectLinkqr, &r.RedirectBare, &r.APILinkqr, &r.APIBare} {
		for _, s := range append(append([]string(nil), p.Warm.Samples...), p.Measured.Samples...) {
			fmt.Fprintf(w, "    e.g. %s\n", s)
		}
	}
	switch {
	case !r.ScansChecked:
		fmt.Fprintf(w, "  %-24s %s\n", "scans recorded", "not checked (-target-bare-only)")
	case r.ScanErr != nil:
		target("scans recorded", "unknown", "target: every 302", false, true)
		fmt.Fprintf(w, "    %v\n", r.ScanErr)
	default:
		got := fmt.Sprintf("%d of %d", r.ScansGot, r.ScansWant)
		if lost := r.ScansWant - r.ScansGot; lost > 0 {
			got += fmt.Sprintf(" (%d lost)", lost)
		} else if lost < 0 {
			got += fmt.Sprintf(" (%d extra, in flight when the generator stopped; at most %d allowed)", -lost, r.ScansSlack)
		}
		target("scans recorded", got, "target: every 302", r.ScansGot >= r.ScansWant && r.ScansGot <= r.ScansWant+r.ScansSlack, true)
	}
	if r.Analytics != nil {
		r.Analytics.print(w, &v)
	}
	return v
}
