package web_test

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

func TestLinksPageListsLinksWithQRCodes(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	base := "/w/" + tn.WorkspaceExternalID() + "/links"

	if p := b.get(base); p.status != 200 || !hasTestID(p.body, "links-empty") {
		t.Fatalf("empty links page: %d %s", p.status, excerpt(p.body))
	}

	token := srv.APIKey(t, tn.WorkspaceID)
	var ids, shortURLs []string
	for i := range 3 {
		l := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, fmt.Sprintf(`{"target_url":"https://example.com/menu/%d","title":"Menu %d"}`, i, i)), 201)
		ids = append(ids, l["id"].(string))
		shortURLs = append(shortURLs, l["short_url"].(string))
	}
	theirs := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", srv.APIKey(t, other.WorkspaceID), `{"target_url":"https://other.example"}`), 201)

	p := b.get(base)
	if p.status != 200 || strings.Count(p.body, `data-testid="link-row"`) != 3 {
		t.Fatalf("links page: %d, rows %d", p.status, strings.Count(p.body, `data-testid="link-row"`))
	}
	for _, want := range []string{"https://example.com/menu/2", "Menu 1", `data-testid="scan-count">0<`, "qr.svg", "qr.png?download=1"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("links page lacks %q", want)
		}
	}
	if strings.Contains(p.body, "other.example") {
		t.Error("another workspace's link is listed")
	}
	if strings.Index(p.body, ids[2]) > strings.Index(p.body, ids[0]) {
		t.Error("links are not newest first")
	}

	// The PNG download scans to the short URL, marked as a QR code's.
	qr := b.get(base + "/" + ids[0] + "/qr.png?download=1")
	if qr.status != 200 || qr.header.Get("Content-Type") != "image/png" || !strings.HasPrefix(qr.header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("png download: %d %v", qr.status, qr.header)
	}
	img, err := png.Decode(bytes.NewReader([]byte(qr.body)))
	if err != nil {
		t.Fatal(err)
	}
	if got := testkit.DecodeQR(t, img); got != shortURLs[0]+"?qr=1" {
		t.Fatalf("the PNG encodes %q, want %q", got, shortURLs[0]+"?qr=1")
	}
	if svg := b.get(base + "/" + ids[0] + "/qr.svg"); svg.status != 200 || svg.header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(svg.body, "<path") {
		t.Errorf("svg preview: %d %v", svg.status, svg.header)
	}
	// Another workspace's link, or a bad id, is not found.
	for _, id := range []string{theirs["id"].(string), "lnk_nope"} {
		if p := b.get(base + "/" + id + "/qr.png"); p.status != http.StatusNotFound {
			t.Errorf("QR of %s: %d", id, p.status)
		}
	}
	if p := b.get(base + "/" + ids[0] + "/qr.png?size=9"); p.status != http.StatusUnprocessableEntity {
		t.Errorf("bad size: %d", p.status)
	}
}

// TestLinkQRBusyAndConditional: the UI's image route shares the API's QR
// server: a repeat with its ETag is a 304, a cached image is served while
// rendering is saturated, and a new one is a 503 page with Retry-After.
func TestLinkQRBusyAndConditional(t *testing.T) {
	// Not parallel: it takes every render slot of the process's budget,
	// which every test server of this test process shares, so a parallel
	// test rendering a code meanwhile would be answered 503.
	srv, tn, b, _ := signedIn(t)
	l := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", srv.APIKey(t, tn.WorkspaceID), `{"target_url":"https://example.com/menu"}`), 201)
	path := "/w/" + tn.WorkspaceExternalID() + "/links/" + l["id"].(string) + "/qr.png"

	first := b.get(path + "?size=300")
	etag := first.header.Get("ETag")
	if first.status != 200 || etag == "" || first.header.Get("Content-Disposition") != `inline; filename="`+l["code"].(string)+`.png"` {
		t.Fatalf("first: %d %v", first.status, first.header)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path+"?size=300", nil)
	req.Header.Set("If-None-Match", etag)
	if p := b.do(req); p.status != http.StatusNotModified || p.body != "" || p.header.Get("ETag") != etag {
		t.Errorf("If-None-Match: %d, %d bytes", p.status, len(p.body))
	}

	release := testkit.SaturateQR(t, srv.App.QR)
	if p := b.get(path + "?size=300"); p.status != 200 || p.body != first.body {
		t.Errorf("cached image while saturated: %d", p.status)
	}
	busy := b.get(path + "?size=301")
	if ra, err := strconv.Atoi(busy.header.Get("Retry-After")); busy.status != http.StatusServiceUnavailable || err != nil || ra < 1 {
		t.Fatalf("saturated: %d, Retry-After %q", busy.status, busy.header.Get("Retry-After"))
	}
	if !strings.HasPrefix(busy.header.Get("Content-Type"), "text/html") || !strings.Contains(busy.body, "try again in") || busy.header.Get("ETag") != "" {
		t.Errorf("503 page: %v %s", busy.header, excerpt(busy.body))
	}
	release()
	if p := b.get(path + "?size=301"); p.status != 200 || p.header.Get("Content-Type") != "image/png" {
		t.Errorf("after the load: %d", p.status)
	}
}
