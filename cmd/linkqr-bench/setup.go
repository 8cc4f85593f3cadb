package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/linkqr/linkqr/internal/dnsserver"
)

// admin runs `linkqr admin …` against the running server's data directory
// and decodes its JSON output into out.
func admin(ctx context.Context, bin string, env []string, out any, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, append([]string{"admin"}, args...)...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("linkqr admin %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("linkqr admin %s printed %q: %w", args[0], stdout.String(), err)
	}
	return nil
}

// setupLinkqr creates a workspace, keys API keys and n links through the
// real interfaces (the admin CLI and POST /api/v1/links) and returns them as
// fixtures (which carry the keys' secrets). Several keys share the load because a key's rate limit is at
// most 100,000 requests a minute (1,667/s), below what the API can serve.
// With a domain, it also adds that domain, publishes its TXT record on
// dns, verifies it, and creates n more links on it.
func setupLinkqr(ctx context.Context, bin string, env []string, baseURL string, n, keys int, domain string, dns *dnsserver.Server) (fixtures, error) {
	fx := fixtures{Domain: domain}
	var ws struct {
		WorkspaceID string `json:"workspace_id"`
	}
	if err := admin(ctx, bin, env, &ws, "bootstrap", "--email", "bench@example.com", "--password", "bench password 1234", "--workspace", "Bench"); err != nil {
		return fx, err
	}
	tokens := make([]string, keys)
	for i := range tokens {
		var key struct {
			Secret string `json:"secret"`
		}
		if err := admin(ctx, bin, env, &key, "api-key", "create", "--workspace", ws.WorkspaceID, "--name", fmt.Sprintf("bench-%d", i),
			"--scopes", "links:read,links:write,analytics:read,webhooks:read,webhooks:write,domains:read,domains:write", "--rate-limit", "100000"); err != nil {
			return fx, err
		}
		tokens[i] = key.Secret
	}
	fx.Tokens = tokens
	client := &http.Client{Timeout: 30 * time.Second}
	// Use every key once, one at a time, as a steady-state service would
	// have: the first use of a key runs argon2id (19 MiB, tens of ms), and
	// 64 connections doing that at once would measure a cold start instead.
	for _, tok := range tokens {
		if err := getOK(ctx, client, baseURL+"/api/v1/workspace", tok); err != nil {
			return fx, err
		}
	}
	var err error
	if fx.Links, err = createLinks(ctx, client, baseURL, tokens, n, "", "https://example.com/bench/"); err != nil || domain == "" {
		return fx, err
	}
	if err := verifiedDomain(ctx, client, baseURL, tokens[0], domain, dns); err != nil {
		return fx, err
	}
	fx.Custom, err = createLinks(ctx, client, baseURL, tokens, n, domain, "https://example.com/bench/custom/")
	return fx, err
}

// createLinks creates n links on domain ("": the default one) whose
// targets are targetPrefix followed by their index, eight clients at a
// time, each with its own key, as an integrator importing links would; the
// order of the result is the order of the index.
func createLinks(ctx context.Context, client *http.Client, baseURL string, tokens []string, n int, domain, targetPrefix string) ([]fixtureLink, error) {
	links := make([]fixtureLink, n)
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for w := range min(8, n) {
		g.Go(func() error {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				l, err := createLink(gctx, client, baseURL, tokens[w%len(tokens)], targetPrefix+strconv.Itoa(i), domain)
				if err != nil {
					return err
				}
				links[i] = l
			}
			return nil
		})
	}
	return links, g.Wait()
}

// verifiedDomain adds hostname to the token's workspace, publishes the
// TXT record the API asks for on dns (linkqr's LINKQR_DNS_RESOLVER) and
// verifies it, as a customer would with their DNS provider.
func verifiedDomain(ctx context.Context, client *http.Client, baseURL, token, hostname string, dns *dnsserver.Server) error {
	var d struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		Verification struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"verification"`
	}
	body, _ := json.Marshal(map[string]string{"hostname": hostname})
	raw, err := doJSON(ctx, client, http.MethodPost, baseURL+"/api/v1/domains", token, body, http.StatusCreated)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &d); err != nil || d.ID == "" || d.Verification.Name == "" || d.Verification.Value == "" {
		return fmt.Errorf("POST /api/v1/domains: no id or verification record in %s", raw)
	}
	dns.SetTXT(d.Verification.Name, d.Verification.Value)
	if raw, err = doJSON(ctx, client, http.MethodPost, baseURL+"/api/v1/domains/"+d.ID+"/verify", token, nil, http.StatusOK); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &d); err != nil || d.Status != "verified" {
		return fmt.Errorf("domain %s not verified: %s", hostname, raw)
	}
	return nil
}

// apiLink is the part of the API's link object (the Link schema of
// internal/api/openapi.yaml) the bench reads.
type apiLink struct {
	ID        string `json:"id"`
	Code      string `json:"code"`
	TargetURL string `json:"target_url"`
	ScanCount int64  `json:"scan_count"`
	Domain    string `json:"domain"` // "" for null: the default domain
}

// createLink creates a link to target on domain ("": the default one).
func createLink(ctx context.Context, client *http.Client, baseURL, token, target, domain string) (fixtureLink, error) {
	fields := map[string]string{"target_url": target}
	if domain != "" {
		fields["domain"] = domain
	}
	body, _ := json.Marshal(fields)
	raw, err := doJSON(ctx, client, http.MethodPost, baseURL+"/api/v1/links", token, body, http.StatusCreated)
	if err != nil {
		return fixtureLink{}, fmt.Errorf("create link: %w", err)
	}
	var l apiLink
	if err := json.Unmarshal(raw, &l); err != nil || l.ID == "" || l.Code == "" || l.Domain != domain {
		return fixtureLink{}, fmt.Errorf("POST /api/v1/links: unexpected body %s", raw)
	}
	return fixtureLink{ID: l.ID, Code: l.Code, TargetURL: l.TargetURL, Body: raw}, nil
}

// sumScans adds up scan_count over the links, read through the API's
// list (100 a page, so 10,000 links are 100 requests); with a domain, only
// that domain's links are listed.
func sumScans(ctx context.Context, client *http.Client, baseURL, token string, links []fixtureLink, domain string) (int64, error) {
	want := make(map[string]bool, len(links))
	for _, l := range links {
		want[l.ID] = true
	}
	var total int64
	cursor := ""
	for {
		u := baseURL + "/api/v1/links?limit=100"
		if domain != "" {
			u += "&domain=" + url.QueryEscape(domain)
		}
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("GET /api/v1/links: status %d: %s", resp.StatusCode, raw)
		}
		var page struct {
			Data       []apiLink `json:"data"`
			HasMore    bool      `json:"has_more"`
			NextCursor string    `json:"next_cursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return 0, fmt.Errorf("GET /api/v1/links: %w", err)
		}
		for _, l := range page.Data {
			if want[l.ID] {
				total += l.ScanCount
			}
		}
		if !page.HasMore {
			return total, nil
		}
		cursor = page.NextCursor
	}
}

// verifyScans polls the scan counts of links (on domain) until their sum
// equals want or timeout passes (scans are buffered and written in
// batches), and returns the last sum seen.
func verifyScans(ctx context.Context, baseURL, token string, links []fixtureLink, domain string, want int64, timeout time.Duration) (int64, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		got, err := sumScans(ctx, client, baseURL, token, links, domain)
		if err == nil && (got >= want || time.Now().After(deadline)) {
			return got, nil
		}
		if err != nil && time.Now().After(deadline) {
			return got, err
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// getOK sends an authenticated GET and insists on 200.
func getOK(ctx context.Context, client *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", url, resp.StatusCode, raw)
	}
	return nil
}

// targetCheck is what checkTargets saw.
type targetCheck struct {
	Checked, Wrong int
	Samples        []string // a few of the wrong answers
}

func (c *targetCheck) add(o targetCheck) {
	c.Checked += o.Checked
	c.Wrong += o.Wrong
	for _, s := range o.Samples {
		if len(c.Samples) < 5 {
			c.Samples = append(c.Samples, s)
		}
	}
}

// checkTargets sends HEAD to every URL of the redirect scenario sc (with
// its Host and headers) and counts the answers other than sc.WantCode to
// the URL's target. HEAD is answered as GET is but records no scan, so
// the scan check's counts stay those of the loads.
func checkTargets(ctx context.Context, sc scenario) targetCheck {
	client := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	results := make([]string, len(sc.URLs)) // "" when right
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(8, len(sc.URLs)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(sc.URLs); i = int(next.Add(1) - 1) {
				results[i] = checkTarget(ctx, client, sc, sc.URLs[i], sc.Targets[i])
			}
		})
	}
	wg.Wait()
	c := targetCheck{Checked: len(sc.URLs)}
	for _, r := range results {
		if r != "" {
			c.add(targetCheck{Wrong: 1, Samples: []string{r}})
		}
	}
	return c
}

// checkTarget returns "" when u answers sc.WantCode to target, else what
// it answered.
func checkTarget(ctx context.Context, client *http.Client, sc scenario, u, target string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		return err.Error()
	}
	req.Host = sc.Host
	for k, v := range sc.Header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	if got := resp.Header.Get("Location"); resp.StatusCode != sc.WantCode || got != target {
		return fmt.Sprintf("HEAD %s (Host %q): %d to %q, want %d to %q", req.URL.Path, req.Host, resp.StatusCode, got, sc.WantCode, target)
	}
	return ""
}
