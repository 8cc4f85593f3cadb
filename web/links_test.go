package web_test

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
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

	// The PNG download scans to the short URL.
	qr := b.get(base + "/" + ids[0] + "/qr.png?download=1")
	if qr.status != 200 || qr.header.Get("Content-Type") != "image/png" || !strings.HasPrefix(qr.header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("png download: %d %v", qr.status, qr.header)
	}
	img, err := png.Decode(bytes.NewReader([]byte(qr.body)))
	if err != nil {
		t.Fatal(err)
	}
	if got := testkit.DecodeQR(t, img); got != shortURLs[0] {
		t.Fatalf("the PNG encodes %q, want %q", got, shortURLs[0])
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
