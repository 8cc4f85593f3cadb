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
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
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
func setupLinkqr(ctx context.Context, bin string, env []string, baseURL string, n, keys int) (fixtures, error) {
	var fx fixtures
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
			"--scopes", "links:read,links:write,analytics:read,webhooks:read,webhooks:write", "--rate-limit", "100000"); err != nil {
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
	fx.Links = make([]fixtureLink, n)
	// Eight clients at a time, each with its own key, as an integrator
	// importing links would; the order of fx.Links is the order of i.
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for w := range min(8, n) {
		g.Go(func() error {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				l, err := createLink(gctx, client, baseURL, tokens[w%len(tokens)], fmt.Sprintf("https://example.com/bench/%d", i))
				if err != nil {
					return err
				}
				fx.Links[i] = l
			}
			return nil
		})
	}
	return fx, g.Wait()
}

// apiLink is the part of CONTRACT 6.1's link object the bench reads.
type apiLink struct {
	ID        string `json:"id"`
	Code      string `json:"code"`
	TargetURL string `json:"target_url"`
	ScanCount int64  `json:"scan_count"`
}

func createLink(ctx context.Context, client *http.Client, baseURL, token, target string) (fixtureLink, error) {
	body, _ := json.Marshal(map[string]string{"target_url": target})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/api/v1/links", bytes.NewReader(body))
	if err != nil {
		return fixtureLink{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fixtureLink{}, fmt.Errorf("create link: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fixtureLink{}, fmt.Errorf("create link: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		return fixtureLink{}, fmt.Errorf("POST /api/v1/links: status %d: %s", resp.StatusCode, raw)
	}
	var l apiLink
	if err := json.Unmarshal(raw, &l); err != nil || l.ID == "" || l.Code == "" {
		return fixtureLink{}, fmt.Errorf("POST /api/v1/links: unexpected body %s", raw)
	}
	return fixtureLink{ID: l.ID, Code: l.Code, TargetURL: l.TargetURL, Body: raw}, nil
}

// sumScans adds up scan_count over the links, read through the API's
// list (100 a page, so 10,000 links are 100 requests).
func sumScans(ctx context.Context, client *http.Client, baseURL, token string, links []fixtureLink) (int64, error) {
	want := make(map[string]bool, len(links))
	for _, l := range links {
		want[l.ID] = true
	}
	var total int64
	cursor := ""
	for {
		u := baseURL + "/api/v1/links?limit=100"
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

// verifyScans polls the links' scan counts until their sum equals want or
// timeout passes (scans are buffered and written in batches), and returns
// the last sum seen.
func verifyScans(ctx context.Context, baseURL, token string, links []fixtureLink, want int64, timeout time.Duration) (int64, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		got, err := sumScans(ctx, client, baseURL, token, links)
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
