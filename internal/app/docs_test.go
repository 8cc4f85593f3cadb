package app_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestServedDocumentIsAbsolute: the served document names this server by
// its absolute URL (LINKQR_BASE_URL + /api/v1), with absolute OAuth
// endpoints and examples on this origin, so that tools loading it by URL
// (Prism, mock servers, generators) call the right place; it still loads,
// and keeps the license and contact.
func TestServedDocumentIsAbsolute(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	for _, path := range []string{"/openapi.json", "/openapi.yaml"} {
		resp := testkit.Get(t, srv.URL+path, nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		doc, err := openapi3.NewLoader().LoadFromData(body)
		if err != nil {
			t.Fatalf("%s does not load: %v", path, err)
		}
		if len(doc.Servers) != 1 || doc.Servers[0].URL != srv.URL+"/api/v1" {
			t.Errorf("%s: servers %+v, want %s/api/v1", path, doc.Servers, srv.URL)
		}
		flows := doc.Components.SecuritySchemes["oauth2"].Value.Flows
		if flows.ClientCredentials.TokenURL != srv.URL+"/oauth/token" || flows.AuthorizationCode.AuthorizationURL != srv.URL+"/oauth/authorize" {
			t.Errorf("%s: OAuth URLs %q, %q", path, flows.ClientCredentials.TokenURL, flows.AuthorizationCode.AuthorizationURL)
		}
		if bytes.Contains(body, []byte("linkqr.example.com")) {
			t.Errorf("%s still names linkqr.example.com", path)
		}
		if doc.Info.License == nil || doc.Info.License.URL != srv.URL+"/docs#section/Terms-of-use" || doc.Info.Contact == nil || doc.Info.Contact.URL != srv.URL+"/docs" {
			t.Errorf("%s: license %+v, contact %+v", path, doc.Info.License, doc.Info.Contact)
		}
	}
}

func TestOpenAPIDocumentIsServed(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	servedYAML, servedJSON := api.ServedDocument(srv.URL)
	for path, want := range map[string]struct {
		contentType string
		body        []byte
	}{
		"/openapi.json": {"application/json", servedJSON},
		"/openapi.yaml": {"application/yaml", servedYAML},
	} {
		resp := testkit.Get(t, srv.URL+path, nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want.contentType || !bytes.Equal(body, want.body) {
			t.Errorf("%s: %d %q, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
			continue
		}
		etag := resp.Header.Get("ETag")
		if etag == "" || resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: ETag %q, X-Request-Id %q", path, etag, resp.Header.Get("X-Request-Id"))
		}
		resp = testkit.Get(t, srv.URL+path, http.Header{"If-None-Match": {etag}})
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("%s with If-None-Match: %d, want 304", path, resp.StatusCode)
		}
	}

	resp := testkit.Get(t, srv.URL+"/docs", nil)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("/docs CSP %q", csp)
	}
	for _, s := range []string{`spec-url="/openapi.json"`, `src="/static/vendor/redoc/redoc.standalone.js"`} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("/docs lacks %s", s)
		}
	}
	resp = testkit.Get(t, srv.URL+"/static/vendor/redoc/redoc.standalone.js", nil)
	js, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "javascript") || len(js) < 100_000 {
		t.Errorf("renderer bundle: %d %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(js))
	}
}

// TestDocsPageRendersOffline loads /docs in headless Chromium with every
// request to a host other than the test server failed by the test (and DNS
// for every other name broken as well), and checks that the API reference
// renders: the createLink operation with its summary, method, path and
// scope. It also asserts that no request to another host got past the page's
// Content-Security-Policy, and that the page attempted none but the one known
// decorative image (redocLogo).
//
// Set LINKQR_DOCS_SCREENSHOT=/tmp/docs.png to keep screenshots of the page:
// its top, and (…-createLink.png) the createLink operation.
func TestDocsPageRendersOffline(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	origin, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancelTab := context.WithCancel(testkit.Chromium(t,
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		// Names other than the test server's address resolve nowhere.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE "+origin.Hostname()),
	))
	defer cancelTab()

	isForeign := func(raw string) bool {
		u, err := url.Parse(raw)
		return err != nil || (u.Scheme != "data" && u.Scheme != "blob" && u.Host != origin.Host)
	}
	var (
		mu        sync.Mutex
		attempted []string // requests the page made to other hosts
		escaped   []string // of those, the ones past the page's CSP, which the test failed
		problems  []string // console errors and uncaught exceptions
	)
	record := func(list *[]string, s string) {
		mu.Lock()
		defer mu.Unlock()
		*list = append(*list, s)
	}
	// Subscribe before anything loads, so no event is missed.
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	messages := chromedp.Console(ctx)
	if err := chromedp.Listen(ctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok && isForeign(ev.Request.URL) {
			record(&attempted, ev.Request.URL)
		}
	}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		// Every request that gets past the CSP pauses here; only the test
		// server's may go on.
		for ev, err := range paused {
			if err != nil {
				return
			}
			if isForeign(ev.Request.URL) {
				record(&escaped, ev.Request.URL)
				_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
				continue
			}
			_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		}
	})
	wg.Go(func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if (m.Type == chromedp.ConsoleError || m.IsException()) && !strings.Contains(m.Text, redocLogo) {
				record(&problems, fmt.Sprintf("%s: %s (%s)", m.Type, m.Text, m.URL))
			}
		}
	})

	err = chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
			return err
		}),
		chromedp.EmulateViewport(1440, 1000),
		chromedp.Navigate(srv.URL+"/docs"),
		// Redoc gives every operation a section named after its operationId.
		chromedp.WaitVisible(chromedp.CSS(`[data-section-id="operation/createLink"] h2`)),
	)
	if err != nil {
		cancelTab()
		wg.Wait()
		t.Fatalf("load /docs: %v (console: %v)", err, problems)
	}
	opText, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-section-id="operation/createLink"]`)))
	if err != nil {
		t.Fatal(err)
	}
	// Both security schemes are shown: the bearer API key and OAuth 2.0 with
	// its token URL.
	authText, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-section-id="section/Authentication/oauth2"]`)))
	if err != nil {
		t.Fatalf("no OAuth 2.0 section in /docs: %v", err)
	}
	bearerText, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-section-id="section/Authentication/bearerAuth"]`)))
	if err != nil {
		t.Fatalf("no bearer section in /docs: %v", err)
	}
	for _, want := range []string{"/oauth/token", "/oauth/authorize", "links:read"} {
		if !strings.Contains(authText, want) {
			t.Errorf("the OAuth 2.0 section lacks %q:\n%.1500s", want, authText)
		}
	}
	for _, want := range []string{"clientCredentials", "authorizationCode"} {
		if !strings.Contains(strings.ToLower(strings.ReplaceAll(authText, " ", "")), strings.ToLower(want)) {
			t.Errorf("the OAuth 2.0 section lacks the %s flow:\n%.1500s", want, authText)
		}
	}
	if !strings.Contains(bearerText, "lqk_") {
		t.Errorf("the bearer section lacks the API key format:\n%.800s", bearerText)
	}
	if path := os.Getenv("LINKQR_DOCS_SCREENSHOT"); path != "" {
		saveScreenshots(ctx, t, path)
	}
	cancelTab()
	wg.Wait()

	for _, want := range []string{"Create a link", "/api/v1/links", "links:write", "Idempotency-Key", "target_url"} {
		if !strings.Contains(opText, want) {
			t.Errorf("the createLink section lacks %q:\n%.1500s", want, opText)
		}
	}
	if !strings.Contains(strings.ToLower(opText), "post") {
		t.Errorf("the createLink section does not show its method:\n%.1500s", opText)
	}
	if len(escaped) > 0 {
		t.Errorf("/docs sent requests to other hosts past its CSP: %v", escaped)
	}
	slices.Sort(attempted)
	for _, u := range slices.Compact(attempted) {
		if u != redocLogo {
			t.Errorf("/docs tried to load %s from another host", u)
		}
	}
	if len(problems) > 0 {
		t.Errorf("/docs logged errors: %v", problems)
	}
}

// redocLogo is the one remote resource the vendored Redoc asks for: the logo
// in its "API docs by Redocly" footer, which no option turns off. The /docs
// CSP refuses it inside the browser, before any request is sent, and Redoc
// then shows the footer without it. Any other remote resource fails the test.
const redocLogo = "https://cdn.redoc.ly/redoc/logo-mini.svg"

// saveScreenshots writes the viewport at the top of the page to path, and
// with the createLink operation scrolled into view next to it.
func saveScreenshots(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	top, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`(document.querySelector('[data-section-id="operation/createLink"]').scrollIntoView(true), true)`)); err != nil {
		t.Fatalf("scroll: %v", err)
	}
	op, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, top, 0o644); err != nil {
		t.Errorf("save screenshot: %v", err)
	}
	if err := os.WriteFile(strings.TrimSuffix(path, ".png")+"-createLink.png", op, 0o644); err != nil {
		t.Errorf("save screenshot: %v", err)
	}
}
