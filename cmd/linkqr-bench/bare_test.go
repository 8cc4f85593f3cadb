package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
)

func TestBareHandler(t *testing.T) {
	t.Parallel()
	fx := syntheticFixtures(3, 2)
	h := bareHandler(fx)
	get := func(path, auth string) *http.Response {
		r := httptest.NewRequest(http.MethodGet, path, nil)
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
	fx := syntheticFixtures(2, 1)
	if err := writeFixtures(path, fx); err != nil {
		t.Fatal(err)
	}
	got, err := readFixtures(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tokens[0] != fx.Tokens[0] || len(got.Links) != 2 || string(got.Links[0].Body) != string(fx.Links[0].Body) {
		t.Fatalf("got %+v", got)
	}
	if _, err := readFixtures(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}
