package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// scenario is one load test: requests to cycle through and the status that
// counts as success.
type scenario struct {
	Name string
	URLs []string // cycled through; each connection starts at its own offset
	// Host, when set, is sent as the Host header instead of the URLs'
	// address: a custom domain's name, with the connections going to
	// linkqr's address as they would through DNS.
	Host   string
	Header http.Header
	// Targets, when set, is the Location each URL must answer with (the
	// target check; the loads check the status only).
	Targets []string
	// ForwardedFor, when set, is the X-Forwarded-For of each URL (the
	// same index): the visitor's address, as a proxy in front would add
	// it (the country rounds, geo.go).
	ForwardedFor []string
	// UserAgents and Referers, when set, are each URL's User-Agent
	// (replacing Header's) and Referer ("": none): the realistic rounds'
	// visitors (visitors.go).
	UserAgents, Referers []string
	// ConnHeader, when set, adds headers per connection (its API key).
	ConnHeader func(conn int) http.Header
	WantCode   int
}

// loadResult is what one phase (warm-up or measurement) of a scenario saw.
type loadResult struct {
	OK      uint64 // responses with the wanted status
	Errors  uint64 // other statuses and transport errors
	Latency Histogram
	Elapsed time.Duration
	Samples []string // a few distinct error descriptions
}

// Throughput is completed requests (successful or not) per second.
func (r *loadResult) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK+r.Errors) / r.Elapsed.Seconds()
}

func (r *loadResult) merge(o *loadResult) {
	r.OK += o.OK
	r.Errors += o.Errors
	r.Latency.Merge(&o.Latency)
	for _, s := range o.Samples {
		r.addSample(s)
	}
}

func (r *loadResult) addSample(s string) {
	if len(r.Samples) < 5 && !contains(r.Samples, s) {
		r.Samples = append(r.Samples, s)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// loadOptions shape a run: conns concurrent keep-alive connections, each
// a goroutine sending requests back to back (closed loop), or, with Rate,
// on a schedule that adds up to Rate requests a second (paced: how a
// server at a given share of its capacity is measured).
type loadOptions struct {
	Conns    int
	Warmup   time.Duration
	Duration time.Duration
	Rate     float64
}

// newTransport gives every goroutine its own keep-alive connection to the
// one host; redirects are never followed (see runLoad's client).
func newTransport(conns int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

// runLoad drives sc with opts and returns the warm-up and measured phases
// separately. A request belongs to the phase in which it started. It stops
// early, with what it has, when ctx ends (Ctrl-C).
func runLoad(ctx context.Context, sc scenario, opts loadOptions) (warm, measured loadResult, err error) {
	if len(sc.URLs) == 0 || opts.Conns < 1 {
		return warm, measured, fmt.Errorf("scenario %s: nothing to request", sc.Name)
	}
	tr := newTransport(opts.Conns)
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport:     tr,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	// Requests in flight at the end are completed, not cancelled: the
	// server has counted them (a redirect has recorded its scan), so the
	// client must count them too. Only ctx (Ctrl-C) aborts requests.
	start := time.Now()
	measureFrom := start.Add(opts.Warmup)
	end := measureFrom.Add(opts.Duration)
	var stopped atomic.Bool
	stop := context.AfterFunc(ctx, func() { stopped.Store(true) })
	defer stop()
	perConn := make([][2]loadResult, opts.Conns)
	var wg sync.WaitGroup
	for c := range opts.Conns {
		wg.Go(func() {
			reqs, err := buildRequests(ctx, connShare(sc, c, opts.Conns), c)
			if err != nil {
				perConn[c][0].Errors++
				perConn[c][0].addSample(err.Error())
				return
			}
			var interval time.Duration
			next := start
			if opts.Rate > 0 {
				interval = time.Duration(float64(opts.Conns) / opts.Rate * float64(time.Second))
				next = start.Add(interval * time.Duration(c) / time.Duration(opts.Conns)) // spread the connections
			}
			for i := c * len(reqs) / opts.Conns; ; i++ {
				if interval > 0 {
					// A late request goes at once; the schedule does not
					// catch up with a burst.
					if wait := time.Until(next); wait > 0 {
						time.Sleep(wait)
					}
					next = next.Add(interval)
					if behind := time.Now().Add(-interval); next.Before(behind) {
						next = behind
					}
				}
				t0 := time.Now()
				if !t0.Before(end) || stopped.Load() {
					return
				}
				phase := &perConn[c][0]
				if !t0.Before(measureFrom) {
					phase = &perConn[c][1]
				}
				ok, desc := do(client, reqs[i%len(reqs)], sc.WantCode)
				if !ok && ctx.Err() != nil {
					return // aborted by Ctrl-C: not the server's fault
				}
				phase.Latency.Record(time.Since(t0))
				if ok {
					phase.OK++
				} else {
					phase.Errors++
					phase.addSample(desc)
				}
			}
		})
	}
	wg.Wait()
	finished := time.Now()

	for c := range perConn {
		warm.merge(&perConn[c][0])
		measured.merge(&perConn[c][1])
	}
	sort.Strings(warm.Samples)
	sort.Strings(measured.Samples)
	// The measured phase ends when its last request completes.
	warm.Elapsed = min(finished.Sub(start), opts.Warmup)
	measured.Elapsed = max(0, finished.Sub(measureFrom))
	return warm, measured, nil
}

// shareAbove is the length of a request list from which each connection of
// the Go generator takes a share of its own instead of all of it: the
// realistic rounds' lists of visitorsPerRound requests, times 64
// connections, would not fit in memory.
const shareAbove = 20_000

// connShare is connection c's part of sc: all of it, or for a long list
// its c-th of conns contiguous shares.
func connShare(sc scenario, c, conns int) scenario {
	n := len(sc.URLs)
	if n <= shareAbove {
		return sc
	}
	lo, hi := c*n/conns, (c+1)*n/conns
	cut := func(s []string) []string {
		if s == nil {
			return nil
		}
		return s[lo:hi]
	}
	sc.URLs, sc.Targets, sc.ForwardedFor = cut(sc.URLs), cut(sc.Targets), cut(sc.ForwardedFor)
	sc.UserAgents, sc.Referers = cut(sc.UserAgents), cut(sc.Referers)
	return sc
}

// buildRequests prepares one request per URL; a request may be sent again
// once the previous response's body is closed.
func buildRequests(ctx context.Context, sc scenario, conn int) ([]*http.Request, error) {
	var extra http.Header
	if sc.ConnHeader != nil {
		extra = sc.ConnHeader(conn)
	}
	reqs := make([]*http.Request, len(sc.URLs))
	for i, u := range sc.URLs {
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		if sc.Host != "" {
			r.Host = sc.Host
		}
		for k, v := range sc.Header {
			r.Header[k] = v
		}
		for k, v := range extra {
			r.Header[k] = v
		}
		if sc.ForwardedFor != nil {
			r.Header["X-Forwarded-For"] = []string{sc.ForwardedFor[i]}
		}
		if sc.UserAgents != nil {
			r.Header["User-Agent"] = []string{sc.UserAgents[i]}
		}
		if sc.Referers != nil && sc.Referers[i] != "" {
			r.Header["Referer"] = []string{sc.Referers[i]}
		}
		reqs[i] = r
	}
	return reqs, nil
}

// do sends one request, drains the body so the connection is reused, and
// reports success or a short description of the failure.
func do(client *http.Client, req *http.Request, want int) (bool, string) {
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return false, fmt.Sprintf("status %d (want %d) for %s", resp.StatusCode, want, req.URL.Path)
	}
	if err != nil {
		return false, "reading body: " + err.Error()
	}
	return true, ""
}
