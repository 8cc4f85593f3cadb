package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
	"github.com/linkqr/linkqr/internal/webhook"
)

// TestRolesServeOnlyTheirRoutes: each role answers its own routes and 404
// for the others' (the redirect role never serves /api/…).
func TestRolesServeOnlyTheirRoutes(t *testing.T) {
	t.Parallel()
	key := testkit.NewSecretKey()
	all := testkit.StartServer(t, testkit.WithEnv("LINKQR_SECRET_KEY", key))
	tn := testkit.NewTenant(t, all.Pool)
	token := all.APIKey(t, tn.WorkspaceID)
	link := testkit.JSON(t, all.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/roles"}`), 201)
	code := "/" + link["code"].(string)

	// status of each path per role; every role serves health, and none
	// /metrics (it is on the metrics listener, checked below).
	paths := []string{"/healthz", "/readyz", "/metrics", code, "/api/v1/links", "/docs", "/openapi.json", "/login", "/.well-known/oauth-authorization-server", "/mcp", "/static/css/app.css"}
	want := map[string][]int{
		"redirect":     {200, 200, 404, 302, 404, 404, 404, 404, 404, 404, 200},
		"api":          {200, 200, 404, 404, 401, 200, 200, 200, 200, 404, 200},
		"worker":       {200, 200, 404, 404, 404, 404, 404, 404, 404, 404, 404},
		"redirect,api": {200, 200, 404, 302, 401, 200, 200, 200, 200, 404, 200},
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for roles, statuses := range want {
		srv := testkit.StartServer(t, testkit.WithPool(all.Pool), testkit.WithEnv("LINKQR_ROLES", roles), testkit.WithEnv("LINKQR_SECRET_KEY", key))
		for i, p := range paths {
			resp, err := noFollow.Get(srv.URL + p)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != statuses[i] {
				t.Errorf("role %s: GET %s = %d, want %d", roles, p, resp.StatusCode, statuses[i])
			}
		}
		resp := testkit.Get(t, srv.MetricsURL+"/metrics", nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("role %s: GET /metrics on the metrics listener = %d, want 200", roles, resp.StatusCode)
		}
		// No route of any role may share a segment with a code: the default
		// domain's redirect skips the router, as a custom domain's does.
		if strings.Contains(roles, "redirect") && !srv.App.Redirects.BypassesRouter() {
			t.Errorf("role %s: the default domain's codes go through the router", roles)
		}
	}
}

// TestRolesWorkTogether: a deployment split by role works as one. An
// api-only instance creates a link and enqueues its delivery but does not
// work it; a redirect-only instance answers the link and records the scan;
// a worker-only instance delivers the webhook and folds the scan into
// scan_count, which the api instance then shows.
func TestRolesWorkTogether(t *testing.T) {
	t.Parallel()
	got := make(chan string, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	defer rcv.Close()
	key := testkit.NewSecretKey()
	env := func(roles string) []testkit.ServerOption {
		return []testkit.ServerOption{
			testkit.WithEnv("LINKQR_ROLES", roles), testkit.WithEnv("LINKQR_SECRET_KEY", key),
			testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"), testkit.WithEnv("LINKQR_ANALYTICS_FOLD_INTERVAL", "100ms"),
		}
	}
	api := testkit.StartServer(t, env("api")...)
	redirect := testkit.StartServer(t, append(env("redirect"), testkit.WithPool(api.Pool))...)
	tn := testkit.NewTenant(t, api.Pool)
	if _, err := api.App.Webhooks.Create(context.Background(), tn.WorkspaceID, webhook.CreateInput{URL: rcv.URL, Events: []string{"link.created"}}); err != nil {
		t.Fatal(err)
	}
	token := api.APIKey(t, tn.WorkspaceID)
	link := testkit.JSON(t, api.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/split"}`), 201)

	// The delivery is enqueued and nobody works it yet.
	var state string
	var attempts int
	if err := api.Pool.QueryRow(context.Background(), "SELECT state, attempt FROM river_job WHERE queue = $1", webhook.Queue).Scan(&state, &attempts); err != nil {
		t.Fatal(err)
	}
	if state != "available" || attempts != 0 {
		t.Fatalf("delivery job before a worker runs: %s, attempt %d", state, attempts)
	}
	select {
	case body := <-got:
		t.Fatalf("delivered without a worker: %s", body)
	default:
	}

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", redirect.URL+"/"+link["code"].(string), nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
	resp, err := noFollow.Do(req)
	if err != nil || resp.StatusCode != 302 || resp.Header.Get("Location") != "https://example.com/split" {
		t.Fatalf("redirect role: %v %v", resp, err)
	}
	resp.Body.Close()
	redirect.App.StopWorkers() // drains the scan into the database

	worker := testkit.StartServer(t, append(env("worker"), testkit.WithPool(api.Pool))...)
	select {
	case body := <-got:
		if !strings.Contains(body, link["id"].(string)) {
			t.Fatalf("delivery %s is not of link %s", body, link["id"])
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the worker delivered nothing")
	}
	var attemptedBy []string
	if err := api.Pool.QueryRow(context.Background(), "SELECT attempted_by FROM river_job WHERE queue = $1", webhook.Queue).Scan(&attemptedBy); err != nil {
		t.Fatal(err)
	}
	if len(attemptedBy) != 1 || attemptedBy[0] != worker.App.JobsID() {
		t.Fatalf("attempted by %v, want only the worker %s", attemptedBy, worker.App.JobsID())
	}

	wait.Until(t, 15*time.Second, func() (bool, string) {
		l := testkit.JSON(t, api.Do(t, "GET", "/api/v1/links/"+link["id"].(string), token, ""), 200)
		return l["scan_count"] == float64(1), fmt.Sprintf("scan_count %v: the worker did not fold the redirect's scan", l["scan_count"])
	})
}
