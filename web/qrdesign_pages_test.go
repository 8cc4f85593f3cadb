package web_test

import (
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

// TestQRImagesFollowTheDesign: the UI's image routes (the links page's
// thumbnails, the designer's preview and downloads) draw the link's saved
// design, and the designer's parameters override it for a preview.
func TestQRImagesFollowTheDesign(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	l := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com"}`), 201)
	testkit.JSON(t, srv.Do(t, "PUT", "/api/v1/links/"+l["id"].(string)+"/qr/design", token, `{"modules":"dots","frame":{"text":"Scan me"}}`), 200)
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	base := "/w/" + tn.WorkspaceExternalID() + "/links/" + l["id"].(string)
	if p := b.get(base + "/qr.svg?margin=1"); p.status != 200 || !strings.Contains(p.body, ">Scan me</text>") {
		t.Errorf("thumbnail: %d %.200s", p.status, p.body)
	}
	if p := b.get(base + "/qr.svg?frame=Menu&modules=square"); p.status != 200 || !strings.Contains(p.body, ">Menu</text>") || !strings.Contains(p.body, "crispEdges") {
		t.Errorf("preview overrides: %d %.200s", p.status, p.body)
	}
	if p := b.get(base + "/qr.svg?frame="); p.status != 200 || strings.Contains(p.body, "<text") {
		t.Errorf("an empty frame text previews without a frame: %d", p.status)
	}
	if p := b.get(base + "/qr.pdf?download=1"); p.status != 200 || p.header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(p.body, "%PDF") {
		t.Errorf("pdf: %d %v", p.status, p.header)
	}
	if p := b.get(base + "/qr.svg?modules=hearts"); p.status != 422 {
		t.Errorf("a bad module style: %d", p.status)
	}
}
