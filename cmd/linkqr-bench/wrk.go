package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// wrk drives the closed-loop scenarios when it is installed (Debian's wrk
// package): written in C, it spends a fraction of the CPU our Go generator
// needs per request, so on a 2-core machine it does not cap the bare
// server's figure, and every ratio it reports is the servers', not the
// generator's. The script below sends the scenario's requests in rotation,
// each thread from its own offset, and prints its summary as one JSON line.
// Each request is formatted once, in init(), from a line of the request
// list: its path, the API key's token, the X-Forwarded-For, the User-Agent
// and the Referer, any but the first empty.
const wrkScript = `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } lq_timespec;
int clock_gettime(int clock, lq_timespec *ts);
]]
local ts = ffi.new("lq_timespec")
-- milliseconds on the monotonic clock
local function now()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local reqs = {}
local n, i, interval, slot = 0, 0, 0, nil
function init(args)
  local thread, threads = tonumber(args[2]), tonumber(args[3])
  local rate = tonumber(args[4] or "0")
  if rate > 0 then interval = 1000 / rate end
  for line in io.lines(args[1]) do
    local path, token, xff, ua, ref = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
    -- wrk.format ignores wrk.headers (the -H flags) when given a table
    local headers = {}
    for k, v in pairs(wrk.headers) do headers[k] = v end
    if token ~= "" then headers["Authorization"] = "Bearer " .. token end
    if xff ~= "" then headers["X-Forwarded-For"] = xff end
    if ua ~= "" then headers["User-Agent"] = ua end
    if ref ~= "" then headers["Referer"] = ref end
    n = n + 1
    reqs[n] = wrk.format("GET", path, headers)
  end
  i = math.floor(n * thread / threads)
end
function request()
  i = i % n + 1
  return reqs[i]
end
-- Paced runs keep one schedule per thread, a request every interval ms:
-- a connection that got its answer waits for the next free slot, so the
-- rate sent does not depend on how fast answers come (while connections
-- suffice); a schedule that fell behind catches up by at most 100 ms.
function delay()
  local t = now()
  if slot == nil or slot < t - 100 then slot = t end
  slot = slot + interval
  return math.max(0, math.floor(slot - t))
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"duration_us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`

// wrkSummary is the line the script's done() prints.
type wrkSummary struct {
	Requests   uint64 `json:"requests"`
	DurationUS int64  `json:"duration_us"`
	Status     uint64 `json:"status"` // responses outside 2xx/3xx
	Connect    uint64 `json:"connect"`
	Read       uint64 `json:"read"`
	Write      uint64 `json:"write"`
	Timeout    uint64 `json:"timeout"`
	P50US      int64  `json:"p50_us"`
	P99US      int64  `json:"p99_us"`
}

// wrkRunner runs wrk with the bench's script; nil when wrk is missing.
type wrkRunner struct {
	bin     string
	threads int
	dir     string // where scripts and request lists go
}

// findWrk returns a runner, or nil and a warning saying how to get wrk.
func findWrk(dir string) (*wrkRunner, string) {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return nil, "wrk not found (Debian/Ubuntu: apt-get install wrk); falling back to the built-in Go generator, " +
			"whose own CPU caps the bare server's figure on a small machine, so ratios to bare read high"
	}
	script := filepath.Join(dir, "rotate.lua")
	if err := os.WriteFile(script, []byte(wrkScript), 0o600); err != nil {
		return nil, "wrk: " + err.Error()
	}
	return &wrkRunner{bin: bin, threads: 2, dir: dir}, ""
}

// run sends sc's requests for d with conns connections and returns the
// result in the Go generator's shape. wrk sees only status classes, so a
// 3xx other than the wanted one would pass: the scenarios using wrk (the
// redirect, the API GET) are checked for their exact status by the
// correctness checks around them (scans recorded) and by the Go generator
// in the tests of this command.
func (w *wrkRunner) run(ctx context.Context, sc scenario, conns int, d time.Duration) (loadResult, error) {
	return w.runPaced(ctx, sc, conns, 0, d)
}

// pacedConns returns the connections that can send rate requests a
// second on a schedule: enough for answers taking up to 12.5 ms each
// before the rate sent falls short of it (the phase reports the rate
// reached and its latency). A schedule, not a pause after each answer: with
// a pause the rate sent falls as answers slow down (10 connections
// pausing 10 ms sent 803 a second, not 1,000), and a rate measured that
// way reads latency as lost throughput.
func pacedConns(rate float64) int {
	return max(1, int(rate*12.5/1000+0.5))
}

// runPaced is run sending rate requests a second in all (0: closed loop).
func (w *wrkRunner) runPaced(ctx context.Context, sc scenario, conns int, rate float64, d time.Duration) (loadResult, error) {
	var res loadResult
	// A list of its own: two scenarios may run side by side.
	f, err := os.CreateTemp(w.dir, "requests-*.tsv")
	if err != nil {
		return res, err
	}
	list := f.Name()
	f.Close()
	defer os.Remove(list)
	if err := writeRequestList(list, sc, conns); err != nil {
		return res, err
	}
	var out []wrkSummary
	threads := min(w.threads, conns)
	// One wrk process per thread offset: wrk's init() cannot tell its
	// threads apart, so each process starts at its own place in the list.
	type result struct {
		s   wrkSummary
		err error
	}
	results := make(chan result, threads)
	for t := range threads {
		go func() {
			s, err := w.one(ctx, sc, list, t, threads, max(1, conns/threads), rate/float64(threads), d)
			results <- result{s, err}
		}()
	}
	for range threads {
		r := <-results
		if r.err != nil {
			return res, r.err
		}
		out = append(out, r.s)
	}
	var p50, p99 time.Duration
	var elapsed time.Duration
	for _, s := range out {
		res.OK += s.Requests - s.Status
		res.Errors += s.Status + s.Connect + s.Read + s.Write + s.Timeout
		elapsed = max(elapsed, time.Duration(s.DurationUS)*time.Microsecond)
		// Each process saw half the connections: the larger of their
		// percentiles is the conservative one.
		p50 = max(p50, time.Duration(s.P50US)*time.Microsecond)
		p99 = max(p99, time.Duration(s.P99US)*time.Microsecond)
		if s.Status > 0 {
			res.addSample(fmt.Sprintf("%d responses outside 2xx/3xx", s.Status))
		}
		if n := s.Connect + s.Read + s.Write + s.Timeout; n > 0 {
			res.addSample(fmt.Sprintf("%d socket errors (connect %d, read %d, write %d, timeout %d)", n, s.Connect, s.Read, s.Write, s.Timeout))
		}
	}
	res.Elapsed = elapsed
	res.Latency.RecordQuantiles(p50, p99, res.OK+res.Errors)
	return res, nil
}

// one runs one wrk process with a single thread.
func (w *wrkRunner) one(ctx context.Context, sc scenario, list string, thread, threads, conns int, rate float64, d time.Duration) (wrkSummary, error) {
	var s wrkSummary
	u, err := url.Parse(sc.URLs[0])
	if err != nil {
		return s, err
	}
	args := []string{"-t1", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(int(max(1, d.Round(time.Second)/time.Second))) + "s",
		"--timeout", "10s", "-s", filepath.Join(w.dir, "rotate.lua")}
	// wrk's own init() sets the Host header from the URL only when no -H
	// gave one, and the script copies wrk.headers into every request.
	if sc.Host != "" {
		args = append(args, "-H", "Host: "+sc.Host)
	}
	for k, vs := range sc.Header {
		for _, v := range vs {
			args = append(args, "-H", k+": "+v)
		}
	}
	args = append(args, u.Scheme+"://"+u.Host+"/", "--", list, strconv.Itoa(thread), strconv.Itoa(threads), strconv.FormatFloat(rate, 'f', 1, 64))
	cmd := exec.CommandContext(ctx, w.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return s, fmt.Errorf("wrk: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "WRK "); ok {
			return s, json.Unmarshal([]byte(rest), &s)
		}
	}
	return s, fmt.Errorf("wrk printed no summary: %s", strings.TrimSpace(stdout.String()))
}

// writeRequestList writes one "path<TAB>token<TAB>forwarded-for<TAB>user-agent<TAB>referer" line per
// URL of sc (the token of the connection the Go generator would have used,
// so an API scenario spreads over its keys the same way; the URL's
// X-Forwarded-For, so the addresses rotate with the links).
func writeRequestList(file string, sc scenario, conns int) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	for i, raw := range sc.URLs {
		u, err := url.Parse(raw)
		if err != nil {
			f.Close()
			return err
		}
		token := ""
		if sc.ConnHeader != nil {
			token = strings.TrimPrefix(sc.ConnHeader(i%conns).Get("Authorization"), "Bearer ")
		}
		xff, ua, ref := "", "", ""
		if sc.ForwardedFor != nil {
			xff = sc.ForwardedFor[i]
		}
		if sc.UserAgents != nil {
			ua = sc.UserAgents[i]
		}
		if sc.Referers != nil {
			ref = sc.Referers[i]
		}
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\t%s\n", u.RequestURI(), token, xff, ua, ref)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
