package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

func TestBareHandler(t *testing.T) {
	t.Parallel()
	fx := syntheticFixtures(3, 2, "go.bench.example")
	h := bareHandler(fx)
	get := func(path, auth string) *http.Response {
		r := httptest.NewRequest(http.MethodGet, path, nil) // an absolute URL sets the Host
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Result()
	}
	l := fx.Links[1]
	resp := get("/"+l.Code, "")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != l.TargetURL || resp.Header.Get("Cache-Control") != "private, max-age=0" {
		t.Fatalf("redirect: %d %v", resp.StatusCode, resp.Header)
	}
	if get("/nope", "").StatusCode != http.StatusNotFound {
		t.Fatal("unknown code not 404")
	}
	// The same code on the custom domain goes to its own target, only
	// with the domain's Host.
	c := fx.Custom[1]
	if c.Code != l.Code || c.TargetURL == l.TargetURL {
		t.Fatalf("custom fixture %+v beside %+v", c, l)
	}
	if resp := get("http://go.bench.example/"+c.Code, ""); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != c.TargetURL {
		t.Fatalf("custom redirect: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := get("http://other.example/"+c.Code, ""); resp.Header.Get("Location") != l.TargetURL {
		t.Fatalf("another host got %d %v, want the default link", resp.StatusCode, resp.Header)
	}
	if get("/api/v1/links/"+l.ID, "Bearer "+fx.Tokens[0]).StatusCode != http.StatusOK {
		t.Fatal("first token refused")
	}
	resp = get("/api/v1/links/"+l.ID, "Bearer "+fx.Tokens[1])
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != string(l.Body) || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("api: %d %s", resp.StatusCode, body)
	}
	if get("/api/v1/links/"+l.ID, "Bearer wrong").StatusCode != http.StatusUnauthorized {
		t.Fatal("wrong token accepted")
	}
	if get("/api/v1/links/"+l.ID, "").StatusCode != http.StatusUnauthorized {
		t.Fatal("missing token accepted")
	}
}

func TestFixturesRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fx.json")
	fx := syntheticFixtures(2, 1, "go.bench.example")
	if err := writeFixtures(path, fx); err != nil {
		t.Fatal(err)
	}
	got, err := readFixtures(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tokens[0] != fx.Tokens[0] || len(got.Links) != 2 || string(got.Links[0].Body) != string(fx.Links[0].Body) ||
		got.Domain != fx.Domain || len(got.Custom) != 2 || got.Custom[1].TargetURL != fx.Custom[1].TargetURL {
		t.Fatalf("got %+v", got)
	}
	if _, err := readFixtures(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}

// The target check sends each scenario's Host and finds a link answering
// another link's target: without the custom domain's Host, its codes reach
// the default links (the same codes here), and every one is wrong.
func TestCheckTargets(t *testing.T) {
	t.Parallel()
	fx := syntheticFixtures(20, 1, "go.bench.example")
	srv := httptest.NewServer(bareHandler(fx))
	defer srv.Close()
	for name, sc := range map[string]scenario{"default": fx.redirect(srv.URL), "custom": fx.redirectCustom(srv.URL)} {
		if c := checkTargets(context.Background(), sc); c.Checked != 20 || c.Wrong != 0 {
			t.Errorf("%s: %+v", name, c)
		}
	}
	lost := fx.redirectCustom(srv.URL)
	lost.Host = ""
	c := checkTargets(context.Background(), lost)
	if c.Checked != 20 || c.Wrong != 20 || len(c.Samples) != 5 || !strings.Contains(c.Samples[0], "302 to \"https://example.com/bench/") {
		t.Fatalf("without the Host: %+v", c)
	}
}
