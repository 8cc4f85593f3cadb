package api_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/srwiley/oksvg"
	"github.com/srwiley/rasterx"

	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/testkit"
)

func fetchQR(t *testing.T, f *linksFixture, id, query string, header ...string) (*http.Response, []byte) {
	t.Helper()
	resp := f.srv.Do(t, "GET", "/api/v1/links/"+id+"/qr"+query, f.token, "", header...)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestQRCodeScansToShortURL(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com/menu","code":"spring-menu"}`)
	id := l["id"].(string)

	resp, body := fetchQR(t, f, id, "?size=300&ecc=H&fg=1A237E&bg=FFF8E1")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("Content-Disposition") != `inline; filename="spring-menu.png"` {
		t.Fatalf("png: %d %v", resp.StatusCode, resp.Header)
	}
	img, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 300 || b.Dy() != 300 {
		t.Errorf("size %v, want 300x300", b)
	}
	want := l["short_url"].(string) + "?qr=1"
	if got := testkit.DecodeQR(t, img); got != want {
		t.Errorf("PNG encodes %q, want %q", got, want)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" || resp.Header.Get("Cache-Control") == "" {
		t.Errorf("ETag %q, Cache-Control %q", etag, resp.Header.Get("Cache-Control"))
	}
	resp, body = fetchQR(t, f, id, "?size=300&ecc=H&fg=1A237E&bg=FFF8E1", "If-None-Match", etag)
	if resp.StatusCode != 304 || len(body) != 0 || resp.Header.Get("ETag") != etag {
		t.Errorf("If-None-Match: %d, %d bytes", resp.StatusCode, len(body))
	}
	if resp, _ := fetchQR(t, f, id, "?size=301&ecc=H&fg=1A237E&bg=FFF8E1", "If-None-Match", etag); resp.StatusCode != 200 {
		t.Errorf("other options with the old ETag: %d", resp.StatusCode)
	}

	resp, body = fetchQR(t, f, id, "?format=svg&margin=2")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(resp.Header.Get("Content-Disposition"), `spring-menu.svg`) {
		t.Fatalf("svg: %d %v", resp.StatusCode, resp.Header)
	}
	icon, err := oksvg.ReadIconStream(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	const px = 400
	icon.SetTarget(0, 0, px, px)
	rgba := image.NewRGBA(image.Rect(0, 0, px, px))
	draw.Draw(rgba, rgba.Bounds(), image.White, image.Point{}, draw.Src)
	icon.Draw(rasterx.NewDasher(px, px, rasterx.NewScannerGV(px, px, rgba, rgba.Bounds())), 1)
	if got := testkit.DecodeQR(t, rgba); got != want {
		t.Errorf("SVG encodes %q, want %q", got, want)
	}
}

func TestQRCode422And404(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com/menu"}`)
	id := l["id"].(string)
	for query, ptr := range map[string]string{
		"?size=63":                 "/query/size",
		"?size=4097":               "/query/size",
		"?size=big":                "/query/size",
		"?margin=17":               "/query/margin",
		"?ecc=X":                   "/query/ecc",
		"?format=gif":              "/query/format",
		"?fg=GGGGGG":               "/query/fg",
		"?bg=fff":                  "/query/bg",
		"?fg=777777&bg=888888":     "/query/fg",
		"?colour=red":              "/query/colour",
		"?size=64&margin=16&ecc=H": "/query/size",
	} {
		resp := f.srv.Do(t, "GET", "/api/v1/links/"+id+"/qr"+query, f.token, "")
		p := testkit.Problem(t, resp, 422, "validation-failed")
		if got := p["errors"].([]any)[0].(map[string]any)["pointer"]; got != ptr {
			t.Errorf("%s: pointer %v, want %s", query, got, ptr)
		}
	}
	theirs := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com"}`), 201)
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/"+theirs["id"].(string)+"/qr", f.token, ""), 404, "not-found")
	analyticsOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "analytics:read")
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/"+id+"/qr", analyticsOnly, ""), 403, "insufficient-scope")
}

// TestQRCode503WhenRenderingIsSaturated: with every render slot taken, a new
// image is a 503 unavailable problem with Retry-After (validated against
// the document like every response here), while an image already rendered
// and a conditional request are still answered.
func TestQRCode503WhenRenderingIsSaturated(t *testing.T) {
	// Not parallel: it takes every render slot of the process's budget,
	// which every test server of this test process shares, so a parallel
	// test rendering a code meanwhile would be answered 503.
	f := newLinksFixture(t)
	id := f.create(t, `{"target_url":"https://example.com/menu"}`)["id"].(string)
	resp, cached := fetchQR(t, f, id, "?size=256")
	if resp.StatusCode != 200 {
		t.Fatalf("first render: %d", resp.StatusCode)
	}
	etag := resp.Header.Get("ETag")

	release := testkit.SaturateQR(t, f.srv.App.QR)
	resp = f.srv.Do(t, "GET", "/api/v1/links/"+id+"/qr?size=257", f.token, "")
	ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || ra < 1 {
		t.Errorf("Retry-After %q, want integer seconds >= 1", resp.Header.Get("Retry-After"))
	}
	if resp.Header.Get("ETag") != "" || resp.Header.Get("Cache-Control") == qrserve.CacheControl {
		t.Errorf("a refused render left ETag %q / Cache-Control %q", resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"))
	}
	p := testkit.Problem(t, resp, 503, "unavailable")
	if d, _ := p["detail"].(string); !strings.Contains(d, "QR") {
		t.Errorf("detail %q does not say what is busy", d)
	}

	if resp, body := fetchQR(t, f, id, "?size=256"); resp.StatusCode != 200 || !bytes.Equal(body, cached) || resp.Header.Get("ETag") != etag {
		t.Errorf("cached image while saturated: %d, same bytes %v", resp.StatusCode, bytes.Equal(body, cached))
	}
	if resp, _ := fetchQR(t, f, id, "?size=999", "If-None-Match", `"nope", `+qrETag(t, f, id, "?size=999")); resp.StatusCode != 304 {
		t.Errorf("conditional request while saturated: %d", resp.StatusCode)
	}

	release()
	if resp, body := fetchQR(t, f, id, "?size=257"); resp.StatusCode != 200 || len(body) == 0 {
		t.Errorf("after the load: %d", resp.StatusCode)
	}
}

// qrETag is the ETag the server sends for query on link id — qr.ETag of the
// link's short URL — so a conditional request needs no earlier render.
func qrETag(t *testing.T, f *linksFixture, id, query string) string {
	t.Helper()
	l := f.get(t, f.token, id)
	u, err := url.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := qr.ParseOptions(u.Query())
	if err != nil {
		t.Fatal(err)
	}
	return qr.ETag(l["short_url"].(string)+"?qr=1", opts)
}

// TestQRScanIsRecordedAsQR: the URL a QR code decodes to redirects like
// the short URL, the target receives none of its qr=1 (only its own
// query), and the scan is recorded with source qr; the short URL opened
// without it is a link scan. Scans list, analytics and the scan.created
// payload agree.
func TestQRScanIsRecordedAsQR(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	f := &linksFixture{srv: srv, tenant: testkit.NewTenant(t, srv.Pool)}
	f.token = srv.APIKey(t, f.tenant.WorkspaceID)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(hook.Close)
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/webhooks", f.token, `{"url":"`+hook.URL+`","events":["scan.created"]}`), 201)
	received := make(chan string, 4)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received <- r.URL.RawQuery
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(target.Close)
	l := f.create(t, `{"target_url":"`+target.URL+`/menu?utm_source=print"}`)
	id := l["id"].(string)

	resp, body := fetchQR(t, f, id, "")
	img, err := png.Decode(bytes.NewReader(body))
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("qr: %d %v", resp.StatusCode, err)
	}
	scanned := testkit.DecodeQR(t, img)
	for _, u := range []string{scanned, l["short_url"].(string) + "?qr=10&ref=mail"} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")
		resp, err := http.DefaultClient.Do(req) // follows the 302 to the target
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("GET %s: %v %v", u, resp, err)
		}
		resp.Body.Close()
		if q := <-received; q != "utm_source=print" {
			t.Errorf("GET %s: the target received the query %q, want only its own utm_source=print", u, q)
		}
	}

	var scans []any
	testkit.Eventually(t, 10*time.Second, func() bool {
		scans = testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+id+"/scans", f.token, ""), 200)["data"].([]any)
		return len(scans) == 2
	}, "both scans listed")
	if newest, oldest := scans[0].(map[string]any), scans[1].(map[string]any); newest["source"] != "link" || oldest["source"] != "qr" {
		t.Errorf("sources, newest first: %v, %v; want link, qr", newest["source"], oldest["source"])
	}
	if _, err := f.srv.App.Folder.Fold(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+id+"/analytics", f.token, ""), 200)
	if a["total"] != 2.0 || fmt.Sprint(a["sources"]) != "[map[key:link scans:1] map[key:qr scans:1]]" {
		t.Errorf("analytics total %v, sources %v", a["total"], a["sources"])
	}
	if c := a["countries"].([]any); len(c) != 1 || fmt.Sprint(c[0]) != "map[key:(unknown) scans:2]" {
		t.Errorf("countries %v; loopback has none", c)
	}
	sources := map[any]int{}
	for _, e := range f.events(t) {
		if e["_type"] == "scan.created" {
			sources[e["scan"].(map[string]any)["source"]]++
		}
	}
	if sources["qr"] != 1 || sources["link"] != 1 {
		t.Errorf("scan.created sources %v", sources)
	}
}
