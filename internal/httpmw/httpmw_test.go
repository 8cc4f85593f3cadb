package httpmw_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/httpmw"
	"github.com/linkqr/linkqr/internal/problem"
)

func TestSecurityHeadersOnDocumentsOnly(t *testing.T) {
	t.Parallel()
	h := httpmw.SecurityHeaders(true)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<p>hi"))
			return
		}
		w.Header().Set("Location", "https://example.com/") // as the redirect answers: no body
		w.WriteHeader(http.StatusFound)
	}))
	page := httptest.NewRecorder()
	h.ServeHTTP(page, httptest.NewRequest(http.MethodGet, "/page", nil))
	for _, name := range []string{"Content-Security-Policy", "X-Frame-Options", "Referrer-Policy", "X-Content-Type-Options", "Strict-Transport-Security"} {
		if page.Header().Get(name) == "" {
			t.Errorf("page: no %s", name)
		}
	}
	redirect := httptest.NewRecorder()
	h.ServeHTTP(redirect, httptest.NewRequest(http.MethodGet, "/Ab3xY9q", nil))
	if redirect.Header().Get("Content-Security-Policy") != "" || redirect.Header().Get("X-Content-Type-Options") != "nosniff" ||
		redirect.Header().Get("Strict-Transport-Security") == "" {
		t.Errorf("redirect headers = %v, want nosniff and HSTS alone", redirect.Header())
	}
}

func TestRecoverAnswersEachClientInItsForm(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	h := httpmw.Recover(log, func(p string) string { return strings.ReplaceAll(p, "secret", "…") }, problem.Writer{},
		func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("page"))
		},
	)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))

	api := httptest.NewRecorder()
	h.ServeHTTP(api, httptest.NewRequest(http.MethodGet, "/api/v1/links/secret", nil))
	if api.Code != http.StatusInternalServerError || !strings.Contains(api.Header().Get("Content-Type"), "problem+json") {
		t.Errorf("API: %d %q, want a 500 problem", api.Code, api.Header().Get("Content-Type"))
	}
	browser := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/links", nil)
	req.Header.Set("Accept", "text/html")
	h.ServeHTTP(browser, req)
	if browser.Code != http.StatusInternalServerError || browser.Body.String() != "page" {
		t.Errorf("browser: %d %q, want the page", browser.Code, browser.Body.String())
	}
	if strings.Contains(logged.String(), "secret") || !strings.Contains(logged.String(), "boom") {
		t.Errorf("log = %s: want the panic, without the path's secret", logged.String())
	}
}

func TestObserveLabelsByRoute(t *testing.T) {
	t.Parallel()
	r := chi.NewRouter()
	type seen struct {
		route  string
		status int
	}
	var got []seen
	r.Use(httpmw.Observe(slog.New(slog.DiscardHandler), func(p string) string { return p }, r,
		func(route, _ string, status int, _ time.Duration) { got = append(got, seen{route, status}) }))
	r.Get("/links/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	for _, p := range []string{"/links/lnk_1", "/nowhere"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
	}
	want := []seen{{"/links/{id}", http.StatusTeapot}, {"", http.StatusNotFound}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("observed %v, want %v", got, want)
	}
}
