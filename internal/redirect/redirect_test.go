package redirect_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// noFollow is a client that shows redirects instead of following them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func hit(t *testing.T, method, url string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

type fixture struct {
	srv   *testkit.Server
	token string
}

func newFixture(t *testing.T, opts ...testkit.ServerOption) *fixture {
	srv := testkit.StartServer(t, opts...)
	tn := testkit.NewTenant(t, srv.Pool)
	return &fixture{srv: srv, token: srv.APIKey(t, tn.WorkspaceID)}
}

func (f *fixture) link(t *testing.T, body string) map[string]any {
	t.Helper()
	return testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, body), 201)
}

func (f *fixture) patch(t *testing.T, id, body string) {
	t.Helper()
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.token, body), 200)
}

func TestRedirect(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.link(t, `{"target_url":"https://example.com/menu?x=1"}`)
	for _, method := range []string{"GET", "HEAD"} {
		resp, body := hit(t, method, l["short_url"].(string))
		if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://example.com/menu?x=1" || resp.Header.Get("Cache-Control") != "private, max-age=0" {
			t.Errorf("%s: %d %v", method, resp.StatusCode, resp.Header)
		}
		if strings.Contains(resp.Header.Get("Content-Type"), "json") || strings.HasPrefix(strings.TrimSpace(body), "{") {
			t.Errorf("%s: JSON on the redirect path: %q", method, body)
		}
	}
}

func TestRedirectNotFoundAndGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, path := range []string{"/nope123", "/ab", "/a.b.c", "/" + strings.Repeat("x", 65)} {
		resp, body := hit(t, "GET", f.srv.URL+path)
		if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "Link not found") && path != "/a.b.c" {
			t.Errorf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	paused := f.link(t, `{"target_url":"https://example.com/p"}`)
	f.patch(t, paused["id"].(string), `{"status":"paused"}`)
	deleted := f.link(t, `{"target_url":"https://example.com/d"}`)
	f.srv.Do(t, "DELETE", "/api/v1/links/"+deleted["id"].(string), f.token, "").Body.Close()
	expired := f.link(t, `{"target_url":"https://example.com/e","expires_at":"2099-01-01T00:00:00Z"}`)
	// Expiry passes without any change notification: the redirect compares times.
	if _, err := f.srv.Pool.Exec(context.Background(), "UPDATE links SET expires_at = now() - interval '1 second' WHERE code = $1", expired["code"]); err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]map[string]any{"paused": paused, "deleted": deleted, "expired": expired} {
		for _, method := range []string{"GET", "HEAD"} {
			resp, body := hit(t, method, l["short_url"].(string))
			if resp.StatusCode != 410 || resp.Header.Get("Location") != "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Errorf("%s %s: %d %v", name, method, resp.StatusCode, resp.Header)
			}
			// A paused link may come back; the others are gone for good.
			want, notWant := "no longer available", "paused"
			if name == "paused" {
				want, notWant = "This link is paused", "no longer available"
			}
			if method == "GET" && (!strings.Contains(body, want) || strings.Contains(body, notWant)) {
				t.Errorf("%s: page %q, want %q and not %q", name, body, want, notWant)
			}
		}
	}
	f.patch(t, paused["id"].(string), `{"status":"active"}`)
	if resp, _ := hit(t, "GET", paused["short_url"].(string)); resp.StatusCode != 302 {
		t.Errorf("resumed link: %d", resp.StatusCode)
	}
}

func TestReservedPathsAreNotShadowed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 404, "/problems": 200, "/api": 404, "/static/css/app.css": 200} {
		resp, _ := hit(t, "GET", f.srv.URL+path)
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestRepointSeenByNextRedirect(t *testing.T) {
	t.Parallel()
	a := newFixture(t)
	b := &fixture{srv: testkit.StartServer(t, testkit.WithPool(a.srv.Pool)), token: a.token}
	l := a.link(t, `{"target_url":"https://old.example/"}`)
	code := l["code"].(string)
	// Warm both caches.
	for _, srv := range []*testkit.Server{a.srv, b.srv} {
		if resp, _ := hit(t, "GET", srv.URL+"/"+code); resp.Header.Get("Location") != "https://old.example/" {
			t.Fatalf("warm-up: %v", resp.Header)
		}
	}
	a.patch(t, l["id"].(string), `{"target_url":"https://new.example/"}`)
	// The instance that made the change answers with the new target at once.
	if resp, _ := hit(t, "GET", a.srv.URL+"/"+code); resp.Header.Get("Location") != "https://new.example/" {
		t.Errorf("same instance still redirects to %q", resp.Header.Get("Location"))
	}
	// The other instance hears of it through NOTIFY within milliseconds.
	wait.Until(t, 2*time.Second, func() (bool, string) {
		resp, _ := hit(t, "GET", b.srv.URL+"/"+code)
		loc := resp.Header.Get("Location")
		return loc == "https://new.example/", fmt.Sprintf("instance b still redirects to %q", loc)
	})
	// Deleting on b is seen by a.
	testkit.Problem(t, b.srv.Do(t, "GET", "/api/v1/links/nope", a.token, ""), 404, "not-found")
	resp := b.srv.Do(t, "DELETE", "/api/v1/links/"+l["id"].(string), a.token, "")
	resp.Body.Close()
	wait.Until(t, 2*time.Second, func() (bool, string) {
		resp, _ := hit(t, "GET", a.srv.URL+"/"+code)
		return resp.StatusCode == 410, fmt.Sprintf("instance a still answers %d for a deleted link", resp.StatusCode)
	})
}
