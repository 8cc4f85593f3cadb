package api_test

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/srwiley/oksvg"
	"github.com/srwiley/rasterx"

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
