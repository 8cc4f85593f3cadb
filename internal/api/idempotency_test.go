package api_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/linkqr/linkqr/internal/idempotency"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func postWithKey(t *testing.T, f *linksFixture, token, key, body string) (int, http.Header, string) {
	t.Helper()
	resp := f.srv.Do(t, "POST", "/api/v1/links", token, body, "Idempotency-Key", key)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (f *linksFixture) countLinks(t *testing.T) (links, events int) {
	t.Helper()
	err := f.srv.Pool.QueryRow(context.Background(),
		"SELECT (SELECT count(*) FROM links WHERE workspace_id = $1), (SELECT count(*) FROM events WHERE workspace_id = $1)",
		f.tenant.WorkspaceID).Scan(&links, &events)
	if err != nil {
		t.Fatal(err)
	}
	return links, events
}

func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	body := `{"target_url":"https://example.com/once"}`
	s1, h1, b1 := postWithKey(t, f, f.token, "order-1", body)
	s2, h2, b2 := postWithKey(t, f, f.token, "order-1", body)
	if s1 != 201 || s2 != 201 || b1 != b2 || h1.Get("Location") != h2.Get("Location") {
		t.Fatalf("replay differs:\n%d %s\n%d %s", s1, b1, s2, b2)
	}
	if h1.Get("Idempotent-Replayed") != "" || h2.Get("Idempotent-Replayed") != "true" {
		t.Errorf("Idempotent-Replayed: first %q, replay %q", h1.Get("Idempotent-Replayed"), h2.Get("Idempotent-Replayed"))
	}
	if links, events := f.countLinks(t); links != 1 || events != 1 {
		t.Errorf("%d links and %d events after a replay, want 1 and 1", links, events)
	}

	// Different body or path with the same key: 422, nothing created.
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, `{"target_url":"https://example.com/other"}`, "Idempotency-Key", "order-1"), 422, "idempotency-key-reused")
	if links, _ := f.countLinks(t); links != 1 {
		t.Errorf("%d links after a reused key", links)
	}

	// Keys are scoped per workspace.
	if s, _, b := postWithKey(t, f, f.otherTk, "order-1", body); s != 201 || b == b1 {
		t.Errorf("other workspace with the same key: %d %s", s, b)
	}

	// A stored 4xx replays too.
	s3, _, b3 := postWithKey(t, f, f.token, "bad-1", `{"target_url":"nope"}`)
	s4, h4, b4 := postWithKey(t, f, f.token, "bad-1", `{"target_url":"nope"}`)
	if s3 != 422 || s4 != 422 || b3 != b4 || h4.Get("Idempotent-Replayed") != "true" || h4.Get("Content-Type") != "application/problem+json" {
		t.Errorf("stored 422: %d %d %q", s3, s4, h4)
	}

	// Without the header, POST is not deduplicated.
	f.create(t, body)
	f.create(t, body)
	if links, _ := f.countLinks(t); links != 3 {
		t.Errorf("%d links, want 3", links)
	}
}

func TestIdempotencyKeyFormat(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	for _, key := range []string{strings.Repeat("k", 256), "has space", "tab\tkey", "ünï"} {
		req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/links", strings.NewReader(`{"target_url":"https://example.com"}`))
		req.Header.Set("Authorization", "Bearer "+f.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		testkit.Problem(t, resp, 400, "invalid-request")
	}
	if s, _, _ := postWithKey(t, f, f.token, strings.Repeat("k", 255), `{"target_url":"https://example.com"}`); s != 201 {
		t.Errorf("255-character key: %d", s)
	}
	if links, _ := f.countLinks(t); links != 1 {
		t.Errorf("%d links", links)
	}
}

func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	body := `{"target_url":"https://example.com/race"}`
	const n = 8
	var wg sync.WaitGroup
	statuses := make([]int, n)
	bodies := make([]string, n)
	for i := range n {
		wg.Go(func() { statuses[i], _, bodies[i] = postWithKey(t, f, f.token, "race", body) })
	}
	wg.Wait()
	created := ""
	for i, s := range statuses {
		switch s {
		case 201:
			if created != "" && bodies[i] != created {
				t.Errorf("two different 201 bodies:\n%s\n%s", created, bodies[i])
			}
			created = bodies[i]
		case 409:
			if !strings.Contains(bodies[i], "idempotency-key-in-use") {
				t.Errorf("409 body %s", bodies[i])
			}
		default:
			t.Errorf("status %d: %s", s, bodies[i])
		}
	}
	if created == "" {
		t.Fatal("no request succeeded")
	}
	if links, events := f.countLinks(t); links != 1 || events != 1 {
		t.Errorf("%d links and %d events, want exactly 1", links, events)
	}
}

func TestExpiredKeysArePurgedAndReusable(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	body := `{"target_url":"https://example.com/day1"}`
	_, _, first := postWithKey(t, f, f.token, "daily", body)
	if _, err := f.srv.Pool.Exec(context.Background(), "UPDATE idempotency_keys SET created_at = now() - interval '25 hours'"); err != nil {
		t.Fatal(err)
	}
	// An expired key counts as unused even before the purge runs.
	s, h, second := postWithKey(t, f, f.token, "daily", body)
	if s != 201 || second == first || h.Get("Idempotent-Replayed") != "" {
		t.Fatalf("expired key replayed: %d %s", s, second)
	}
	if _, err := f.srv.Pool.Exec(context.Background(), "UPDATE idempotency_keys SET created_at = now() - interval '25 hours'"); err != nil {
		t.Fatal(err)
	}
	n, err := idempotency.Purge(context.Background(), store.NewDB(f.srv.Pool))
	if err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	var left int
	if err := f.srv.Pool.QueryRow(context.Background(), "SELECT count(*) FROM idempotency_keys").Scan(&left); err != nil || left != 0 {
		t.Errorf("%d keys left, %v", left, err)
	}
}
