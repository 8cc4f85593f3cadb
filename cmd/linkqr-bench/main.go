// Command linkqr-bench measures linkqr against a bare net/http server doing
// the same work, on this machine, in one run: redirect and API throughput
// as ratios, p50/p99 latency, errors and linkqr's peak RSS, and it checks
// that every redirect it received was recorded as a scan. `make bench` runs
// it.
//
//	linkqr-bench [-duration 10s] [-warmup 2s] [-conns 64] [-links 10000] [-custom-domain go.bench.example] [-geo=true] [-redirect-only] [-webhook-events 10000] [-bulk 10000] [-zips 50] [-scans 200000] [-abuse] [-strict]
//
// It starts `linkqr serve` on a fresh embedded PostgreSQL (a temporary
// LINKQR_DATA_DIR) and a bare baseline server (its own hidden subcommand
// `linkqr-bench bare`) as child processes, creates the data through the admin
// CLI and the API, loads each server in turn, prints a table with PASS/FAIL
// against the targets, and stops both children (also on Ctrl-C).
//
// The webhook scenario then subscribes the bench's own loopback receiver
// to scan.created in a second workspace and causes -webhook-events events
// with as many redirects of that workspace's links, twice: alone (deliveries/s and the p50/p99 from the
// event's created_at to its receipt), and with the redirect load running
// against linkqr at the same time (whose req/s and p99 must still meet the
// redirect targets, against the bare server measured before).
//
// The bulk scenario creates -bulk links through POST /api/v1/links/bulk,
// 1,000 a request, while the redirect runs paced at half its measured
// capacity, and compares that redirect with the same pace alone.
//
// The ZIP scenario gives the workspace a QR design (logo, dots, frame),
// times one GET /api/v1/links/qr.zip of 1,000 codes alone, then streams
// -zips such archives at once (each its own links and size, so every code
// is drawn) beside the paced redirect: the redirect's ratio to the same
// pace alone, and linkqr's resident memory before and at its peak.
//
// The abuse scenario (-abuse, alone) is one account sending 20 concurrent
// requests of every expensive class at once while a probe scans a cached
// code, -rounds times (abuse.go).
//
// Exit status: 0 when there were no errors and no lost scans; 1 otherwise,
// or on a setup failure; 2 for bad flags. Performance targets missed are
// reported as FAIL but change the exit status only with -strict.
//
// What is compared: both servers run on this machine beside the load
// generator, which shares the CPUs, so absolute req/s say little; the ratio
// to the bare server, measured the same way minutes apart, is the figure.
// Run-to-run noise on a 2-core machine is about ±10 %. Peak RSS is that of
// the linkqr process (VmHWM, and polled VmRSS), not of its PostgreSQL.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/linkqr/linkqr/internal/hostname"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command-line flags.
type options struct {
	Linkqr        string
	Duration      time.Duration
	Warmup        time.Duration
	Conns         int
	Links         int
	Keys          int
	VerifyTimeout time.Duration
	Events        int
	Strict        bool
	BareOnly      bool
	Scans         int
	Bulk          int // links of the bulk scenario (0: skip)
	Zips          int // QR ZIPs streaming at once in the ZIP scenario (0: skip)
	Rounds        int
	KeepPace      time.Duration
	Topology      bool
	ClusterScript string
	CustomDomain  string
	RedirectOnly  bool
	Geo           bool
	Visitors      bool
	Abuse         bool
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("linkqr-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Linkqr, "linkqr", "bin/linkqr", "the linkqr binary to measure")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measured load per scenario")
	fs.DurationVar(&o.Warmup, "warmup", 2*time.Second, "warm-up before each measurement (its requests are checked, not timed)")
	fs.IntVar(&o.Conns, "conns", 64, "concurrent keep-alive connections")
	fs.IntVar(&o.Links, "links", 10_000, "links to create and cycle through (each request goes to the next link)")
	fs.DurationVar(&o.KeepPace, "keep-pace", 60*time.Second, "the webhook scenario at half capacity: how long deliveries must keep pace with 1,000 scan.created a second (0: skip)")
	fs.IntVar(&o.Rounds, "rounds", 2, "rounds of the redirect comparison, bare and linkqr alternating")
	fs.IntVar(&o.Keys, "keys", 16, "API keys the API load spreads over (a key allows at most 100,000 requests a minute)")
	fs.DurationVar(&o.VerifyTimeout, "verify-timeout", 15*time.Second, "how long to wait for buffered scans to be counted")
	fs.IntVar(&o.Events, "webhook-events", 10000, "events fanned out to the bench's webhook receiver per fan-out run (0: skip the webhook scenario)")
	fs.BoolVar(&o.Strict, "strict", false, "exit 1 also when a performance target is missed")
	fs.IntVar(&o.Bulk, "bulk", 10_000, "links the bulk scenario creates through POST /api/v1/links/bulk beside the paced redirect (0: skip the scenario)")
	fs.IntVar(&o.Zips, "zips", 50, "QR ZIPs of 1,000 designed codes streaming at once beside the paced redirect, after one alone (0: skip the scenario)")
	fs.IntVar(&o.Scans, "scans", 10_000_000, "scans of the analytics scenario's link (0: skip the scenario)")
	fs.BoolVar(&o.Topology, "topology", false, "measure only the deploy/ cluster: the redirect through HAProxy with 2 redirect instances and with 1 (needs haproxy, pgbouncer, redis-server)")
	fs.StringVar(&o.ClusterScript, "cluster-script", "deploy/cluster.sh", "the cluster script -topology runs")
	fs.StringVar(&o.CustomDomain, "custom-domain", "go.bench.example", "the verified custom domain whose links the custom-domain redirect rounds request (\"\": skip them)")
	fs.BoolVar(&o.Geo, "geo", true, "measure the redirect's country lookup: a pair of rounds, geo (public X-Forwarded-For addresses) and no-geo (private ones)")
	fs.BoolVar(&o.Visitors, "visitors", true, "measure realistic visitors: rounds in which every request is a visitor of its own (a public address, one of 8 browsers and devices, one of 20 referrers or none), against the one-visitor rounds")
	fs.BoolVar(&o.RedirectOnly, "redirect-only", false, "run only the redirect rounds and their checks (no API, webhook or analytics scenario)")
	fs.BoolVar(&o.Abuse, "abuse", false, "run only the abuse scenario: one account sends 20 concurrent requests of every expensive class while a probe scans a cached code, -rounds times; peak RSS and the probe's p99 against their targets")
	fs.BoolVar(&o.BareOnly, "target-bare-only", false, "measure a second bare server instead of linkqr (tests the harness)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.Duration <= 0 || o.Warmup < 0 || o.VerifyTimeout <= 0:
		return o, fmt.Errorf("-duration and -verify-timeout must be positive, -warmup not negative")
	case o.Events < 0:
		return o, fmt.Errorf("-webhook-events must not be negative")
	case o.Conns < 1 || o.Links < 1 || o.Keys < 1 || o.Rounds < 1:
		return o, fmt.Errorf("-conns, -links, -keys and -rounds must be at least 1")
	case o.Scans < 0 || o.Bulk < 0 || o.Zips < 0:
		return o, fmt.Errorf("-scans, -bulk and -zips must not be negative")
	}
	if o.CustomDomain != "" {
		h, err := hostname.Parse(o.CustomDomain)
		if err != nil {
			return o, fmt.Errorf("-custom-domain: %w", err)
		}
		o.CustomDomain = h.String()
	}
	return o, nil
}

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "bare" {
		return bareMain(ctx, args[1:], stderr)
	}
	o, err := parseOptions(args, stderr)
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintf(stderr, "linkqr-bench: %v\n", err)
		}
		return 2
	}
	if o.Abuse {
		return abuseMain(ctx, o, stdout, stderr)
	}
	b := &bench{opts: o, log: stderr}
	rep, err := b.run(ctx)
	if cerr := b.cleanup(); err == nil {
		err = cerr
	} else if cerr != nil {
		fmt.Fprintf(stderr, "linkqr-bench: %v\n", cerr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "linkqr-bench: %v\n", err)
		return 1
	}
	v := rep.print(stdout)
	switch {
	case !v.Correct:
		fmt.Fprintln(stdout, "\nFAIL: errors or lost scans (see above)")
		return 1
	case !v.Fast && o.Strict:
		fmt.Fprintln(stdout, "\nFAIL: a performance target was missed (-strict)")
		return 1
	case !v.Fast:
		fmt.Fprintln(stdout, "\nOK: correct; a performance target was missed (reported, not fatal without -strict)")
	default:
		fmt.Fprintln(stdout, "\nOK: correct, every target met")
	}
	return 0
}
