package api_test

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

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
	if got := testkit.DecodeQR(t, img); got != l["short_url"] {
		t.Errorf("PNG encodes %q, want %q", got, l["short_url"])
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
	if got := testkit.DecodeQR(t, rgba); got != l["short_url"] {
		t.Errorf("SVG encodes %q, want %q", got, l["short_url"])
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
	t.Parallel()
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
	l := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+id, f.token, ""), 200)
	u, err := url.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := qr.ParseOptions(u.Query())
	if err != nil {
		t.Fatal(err)
	}
	return qr.ETag(l["short_url"].(string), opts)
}
