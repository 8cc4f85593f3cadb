package app_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
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
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("/docs CSP %q lacks %s", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-") || strings.Contains(csp, "blob:") || strings.Count(csp, "data:") != 1 || !strings.Contains(csp, "img-src 'self' data:;") {
		t.Errorf("/docs CSP %q is not strict", csp)
	}
	// The one script is the site's own; nothing is loaded from the vendor
	// directory any more.
	if n := bytes.Count(page, []byte("<script")); n != 1 || !bytes.Contains(page, []byte(`<script src="/static/js/app.js" defer>`)) || bytes.Contains(page, []byte("/static/vendor/")) {
		t.Errorf("/docs has %d scripts or loads a vendored file", n)
	}
	resp = testkit.Get(t, srv.URL+"/static/vendor/redoc/redoc.standalone.js", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the Redoc bundle is still served: %d", resp.StatusCode)
	}
}

// TestDocsPageIsTheDocument: /docs is rendered on the server from the
// served document: every operation and webhook of the document has its
// anchor (operation/<operationId>), with its method, path and summary;
// request and response schemas reached through $ref show their fields;
// the anchors other pages and the document itself link to exist.
func TestDocsPageIsTheDocument(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	resp := testkit.Get(t, srv.URL+"/docs", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := strings.Join(strings.Fields(html.UnescapeString(string(body))), " ")
	section := func(id string) string {
		t.Helper()
		start := strings.Index(page, `<section class="ref-op card" id="`+id+`"`)
		if start < 0 {
			t.Errorf("/docs has no section %s", id)
			return ""
		}
		end := strings.Index(page[start+1:], `<section class="ref-op card"`)
		if end < 0 {
			return page[start:]
		}
		return page[start : start+1+end]
	}

	doc := api.Spec()
	ops := 0
	check := func(path string, item *openapi3.PathItem, webhook bool) {
		for method, op := range item.Operations() {
			ops++
			text := section("operation/" + op.OperationID)
			want := []string{op.Summary, ">" + method + "<", ">/api/v1" + path + "<"}
			if webhook {
				want = []string{op.Summary, ">EVENT<", ">" + path + "<"}
			}
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("%s: the section lacks %q", op.OperationID, w)
				}
			}
			for _, p := range op.Parameters {
				if !strings.Contains(text, `<code class="ref-name">`+p.Value.Name+`</code>`) {
					t.Errorf("%s: parameter %s not shown", op.OperationID, p.Value.Name)
				}
			}
			if !strings.Contains(page, `href="#operation/`+op.OperationID+`"`) {
				t.Errorf("%s is not in the contents", op.OperationID)
			}
		}
	}
	for path, item := range doc.Paths.Map() {
		check(path, item, false)
	}
	for name, item := range doc.Webhooks {
		check(name, item, true)
	}
	if ops < 50 {
		t.Errorf("only %d operations checked", ops)
	}

	// createLink: the body (LinkCreate) and the 201 answer (Link), both
	// $refs, with their fields; the security requirement with its scope.
	create := section("operation/createLink")
	for _, want := range []string{
		`<code class="ref-name">target_url</code> <span class="req">required</span>`,
		`<code class="ref-name">short_url</code>`, `<code class="ref-name">scan_count</code>`,
		"Idempotency-Key", "OAuth 2.0 with links:write", "API key",
		`<span class="status-code status-ok">201</span>`, `<span class="status-code status-client">422</span>`,
		`href="#schema/Problem"`, "curl -s " + srv.URL + "/api/v1/links",
	} {
		if !strings.Contains(create, want) {
			t.Errorf("createLink lacks %s", want)
		}
	}
	// An enum, a oneOf with a discriminator, and a shared schema's entry.
	for _, want := range []string{
		"One of <code>active</code>, <code>paused</code>",
		`id="schema/Event"`, "(told apart by <code>type</code>)",
		`id="schema/Link"`, `id="header/X-Request-Id"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs lacks %s", want)
		}
	}
	// The webhooks, with their signature headers.
	scan := section("operation/onScanCreated")
	for _, want := range []string{"scan.created", "Service-Signature", "Service-Event-Id", "Service-Delivery-Attempt", `<code class="ref-name">data</code>`} {
		if !strings.Contains(scan, want) {
			t.Errorf("the scan.created webhook lacks %s", want)
		}
	}
	// Anchors linked from elsewhere: the document's licence URL, the
	// Links page's "API reference", the security schemes, the tags.
	for _, id := range []string{"section/Terms-of-use", "operation/createLink", "section/Authentication/oauth2", "section/Authentication/bearerAuth", "tag/Links", "tag/QR-codes", "webhooks"} {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("/docs has no anchor %s", id)
		}
	}
	// Raw HTML of the descriptions is not passed through.
	if strings.Contains(page, "ReDoc-Inject") {
		t.Error("/docs shows Redoc's injection marker")
	}
}

// TestDocsPageRendersOffline loads /docs in headless Chromium with every
// request to a host other than the test server failed by the test (and DNS
// for every other name broken as well), and checks that the API reference
// shows: the createLink operation with its summary, method, path and scope,
// and both security schemes. The page asks for nothing from elsewhere,
// logs no error, and an anchor link lands on its operation.
//
// With LINKQR_TEST_SCREENSHOTS set, it saves docs-top-<width>.png and
// docs-createLink-<width>.png there (the first screen at 1280 and 390 px,
// and the createLink operation scrolled into view).
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
		return err != nil || (u.Scheme != "data" && u.Host != origin.Host)
	}
	var (
		mu        sync.Mutex
		attempted []string // requests the page made to other hosts
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
		// Every request pauses here; only the test server's may go on.
		for ev, err := range paused {
			if err != nil {
				return
			}
			if isForeign(ev.Request.URL) {
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
			if m.Type == chromedp.ConsoleError || m.IsException() {
				record(&problems, fmt.Sprintf("%s: %s (%s)", m.Type, m.Text, m.URL))
			}
		}
	})

	createLink := chromedp.CSS(`[id="operation/createLink"]`)
	err = chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
			return err
		}),
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/docs#operation/createLink"),
		chromedp.WaitVisible(createLink),
	)
	if err != nil {
		cancelTab()
		wg.Wait()
		t.Fatalf("load /docs: %v (console: %v)", err, problems)
	}
	// The anchor scrolled the operation to the top of the window.
	if top, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.getElementById("operation/createLink").getBoundingClientRect().top`)); err != nil || top < -1 || top > 40 {
		t.Errorf("/docs#operation/createLink: the operation is at %v px from the top (%v)", top, err)
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("no %s in /docs: %v", sel, err)
		}
		return s
	}
	opText := text(`[id="operation/createLink"]`)
	authText := text(`[id="section/Authentication/oauth2"]`)
	bearerText := text(`[id="section/Authentication/bearerAuth"]`)
	for _, want := range []string{"/oauth/token", "/oauth/authorize", "links:read", "clientCredentials", "authorizationCode"} {
		if !strings.Contains(strings.ToLower(authText), strings.ToLower(want)) { // headings are upper-cased by the stylesheet
			t.Errorf("the OAuth 2.0 section lacks %q:\n%.1500s", want, authText)
		}
	}
	if !strings.Contains(bearerText, "lqk_") {
		t.Errorf("the bearer section lacks the API key format:\n%.800s", bearerText)
	}
	for _, want := range []string{"Create a link", "POST", "/api/v1/links", "links:write", "Idempotency-Key", "target_url", "short_url"} {
		if !strings.Contains(opText, want) {
			t.Errorf("the createLink section lacks %q:\n%.1500s", want, opText)
		}
	}
	for _, width := range []int64{1280, 390} {
		saveScreenshots(ctx, t, width)
	}
	cancelTab()
	wg.Wait()

	slices.Sort(attempted)
	for _, u := range slices.Compact(attempted) {
		t.Errorf("/docs tried to load %s from another host", u)
	}
	if len(problems) > 0 {
		t.Errorf("/docs logged errors: %v", problems)
	}
}

// saveScreenshots saves, in the directory named by LINKQR_TEST_SCREENSHOTS,
// the first screen of /docs at width (docs-top-<width>.png) and the screen
// with the createLink operation at its top (docs-createLink-<width>.png).
func saveScreenshots(ctx context.Context, t *testing.T, width int64) {
	t.Helper()
	dir := os.Getenv("LINKQR_TEST_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := func(name, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
			t.Fatalf("scroll: %v", err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("docs-%s-%d.png", name, width)), png, 0o644); err != nil {
			t.Errorf("save screenshot: %v", err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
		t.Fatal(err)
	}
	shot("top", `(window.scrollTo(0, 0), true)`)
	shot("createLink", `(document.getElementById("operation/createLink").scrollIntoView(true), true)`)
	shot("scan-created", `(document.getElementById("operation/onScanCreated").scrollIntoView(true), true)`)
}
