package web_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
)

// postLogo posts the QR style form with a logo file, as the designer does.
func (b *browser) postLogo(ws string, logo []byte) page {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{"fg": "#000000", "bg": "#ffffff", "ecc": "H", "margin": "4", "modules": "square"} {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("logo", "logo.png")
	_, _ = fw.Write(logo)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/w/"+ws+"/settings/qr", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

// TestLogoDecodeRefusedWithAPage: while the workspace's share of the Logo
// budget is taken, the QR style form's 16-bit 2048 × 2048 logo is not
// decoded: a 429 "Too much at once" page with Retry-After; while the
// server's is, a 503 "Server busy" page. Not parallel: it replaces the
// process's budgets.
func TestLogoDecodeRefusedWithAPage(t *testing.T) {
	limits := budget.Limits()
	limits[budget.Logo] = budget.Limit{Process: 80 * budget.MiB, Workspace: 64 * budget.MiB, RetryAfter: 2 * time.Second, What: "images being decoded"}
	bud := budget.New(limits)
	defer budget.SetProcess(bud)()

	_, tn, b, _ := signedIn(t)
	img := image.NewNRGBA64(image.Rect(0, 0, 2048, 2048))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.NRGBA64{0xE5E5, 0x3939, 0x3535, 0xffff}), image.Point{}, draw.Src)
	var logo bytes.Buffer
	if err := png.Encode(&logo, img); err != nil {
		t.Fatal(err)
	}

	held, err := bud.Admit(context.Background(), budget.Logo, tn.WorkspaceID, 30*budget.MiB)
	if err != nil {
		t.Fatal(err)
	}
	p := b.postLogo(tn.WorkspaceExternalID(), logo.Bytes())
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") != "2" || !strings.Contains(p.body, "Too much at once") ||
		!strings.Contains(p.body, "images being decoded") {
		t.Errorf("the workspace's share taken: %d, Retry-After %q: %s", p.status, p.header.Get("Retry-After"), excerpt(p.body))
	}
	held()
	held, err = bud.Admit(context.Background(), budget.Logo, uuid.New(), 50*budget.MiB)
	if err != nil {
		t.Fatal(err)
	}
	p = b.postLogo(tn.WorkspaceExternalID(), logo.Bytes())
	if p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") != "2" || !strings.Contains(p.body, "Server busy") {
		t.Errorf("the server's bound taken: %d, Retry-After %q: %s", p.status, p.header.Get("Retry-After"), excerpt(p.body))
	}
	held()
	if s := bud.Stats(budget.Logo); s.Admitted != 2 || s.Refusals != 2 {
		t.Errorf("stats %+v: a refused logo was decoded", s)
	}
}
