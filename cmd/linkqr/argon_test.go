package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// These tests pin finding 1 of the hardening issue: a burst of sign-ups
// (each an argon2id run holding 19 MiB) took the process from 86 MB to
// 1.86 GB. Every argon2id run in the process now takes a slot of one
// capped limiter; callers beyond its short queue get 503 + Retry-After.

func TestSignUpBurstKeepsMemoryBounded(t *testing.T) {
	strict.SkipShort(t, asProcess)
	requirePostgres(t)
	// GOMAXPROCS=2 sizes the argon2id cap (2 runs, 4 waiting) the same on
	// every machine, so the memory bound below does not depend on the
	// test machine's core count. Trusting loopback's X-Forwarded-For lets
	// every request come from an IP of its own, as in a distributed burst,
	// so the per-IP sign-up throttle does not hide the argon2id work.
	// The memory is that of the binary as shipped: the race detector's
	// shadow memory would triple it.
	bin, err := releaseBinary()
	if err != nil {
		t.Fatal(err)
	}
	s := startServeBinary(t, bin, t.TempDir(), "GOMAXPROCS=2", "LINKQR_TRUSTED_PROXIES=127.0.0.1/32")
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{MaxIdleConnsPerHost: 64},
	}
	const taken = "owner@example.com"
	const ownerPassword = "the owner's own password"
	post := func(path, from string, form url.Values) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", s.url)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("X-Forwarded-For", from)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, nil
	}
	resp, err := post("/signup", "10.255.0.1", url.Values{"email": {taken}, "password": {ownerPassword}, "workspace": {"Owner"}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first sign-up: %v %v", resp, err)
	}
	before := peakRSS(t, s.cmd.Process.Pid)

	// 96 sign-ups, 48 at a time, half of them for the registered address.
	const total, concurrent = 96, 48
	type outcome struct {
		status          int
		location, retry string
		err             error
	}
	outcomes := make([]outcome, total)
	sem := make(chan struct{}, concurrent)
	var wg sync.WaitGroup
	for i := range total {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			email := fmt.Sprintf("burst%d@example.com", i)
			if i%2 == 0 {
				email = taken
			}
			from := fmt.Sprintf("10.1.%d.%d", i/200, i%200+1)
			resp, err := post("/signup", from, url.Values{"email": {email}, "password": {"a burst password " + strconv.Itoa(i)}, "workspace": {"Burst"}})
			if err != nil {
				outcomes[i] = outcome{err: err}
				return
			}
			outcomes[i] = outcome{status: resp.StatusCode, location: resp.Header.Get("Location"), retry: resp.Header.Get("Retry-After")}
		}()
	}
	wg.Wait()
	peak := peakRSS(t, s.cmd.Process.Pid)

	counts := map[int]int{}
	for i, o := range outcomes {
		if o.err != nil {
			t.Fatalf("request %d: %v", i, o.err)
		}
		counts[o.status]++
		switch o.status {
		case http.StatusSeeOther: // signed up (signed in, on the Links page), or the registered address (/login)
			if o.location != "/login" && !strings.HasSuffix(o.location, "/links") {
				t.Errorf("request %d: 303 to %q, want a Links page or /login", i, o.location)
			}
		case http.StatusServiceUnavailable, http.StatusTooManyRequests: // busy, throttled
			if n, err := strconv.Atoi(o.retry); err != nil || n < 1 {
				t.Errorf("request %d: %d with Retry-After %q", i, o.status, o.retry)
			}
		default:
			t.Errorf("request %d: status %d, want 303, 503 or 429", i, o.status)
		}
	}
	t.Logf("peak RSS %d MiB before the burst, %d MiB after; answers %v", before>>20, peak>>20, counts)
	// Each 303 is a completed argon2id run: the burst did exercise the cap.
	if counts[http.StatusSeeOther] < 2 {
		t.Errorf("only %d sign-ups completed; the burst did not exercise argon2id", counts[http.StatusSeeOther])
	}
	if peak > 400<<20 {
		t.Errorf("peak RSS %d MiB during 96 sign-ups (48 concurrent), want < 400 MiB", peak>>20)
	}

	// The registered account is untouched: its own password still signs in.
	resp, err = post("/login", "10.255.0.2", url.Values{"email": {taken}, "password": {ownerPassword}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("owner's sign-in after the burst: %v %v", resp, err)
	}
}
