package testkit

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Problem decodes a problem response and checks what every problem shares:
// status, content type, type slug, and request_id equal to X-Request-Id.
func Problem(t testing.TB, resp *http.Response, status int, slug string) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q, want application/problem+json", ct)
	}
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("problem body %q: %v", body, err)
	}
	typ, _ := p["type"].(string)
	if !strings.HasSuffix(typ, "/problems/"+slug) || p["status"] != float64(status) || p["title"] == "" {
		t.Errorf("problem %s, want type %s, status %d", body, slug, status)
	}
	if rid := resp.Header.Get("X-Request-Id"); rid == "" || p["request_id"] != rid {
		t.Errorf("request_id %v, header %q", p["request_id"], rid)
	}
	return p
}

// JSON decodes a JSON response with the expected status into a map.
func JSON(t testing.TB, resp *http.Response, status int) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("content type %q, want application/json", ct)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	return m
}
