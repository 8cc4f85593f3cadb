package web_test

import (
	"archive/zip"
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserQRDesign: on the link page a person uploads a logo, picks dots,
// navy and a frame text with a live preview, saves, downloads a PNG that
// scans with the logo in its centre, is told when a design does not scan;
// sets the workspace's QR style in Settings, downloads the links page's
// codes as a ZIP, and goes back to the workspace style — at 1280 and
// 390 px.
func TestBrowserQRDesign(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	tn := testkit.NewTenant(t, srv.Pool)
	ws := "/w/" + tn.WorkspaceExternalID()
	token := srv.APIKey(t, tn.WorkspaceID)
	l := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/menu","code":"menu-qr"}`), 201)
	linkURL := srv.URL + ws + "/links/" + l["id"].(string)
	want := l["short_url"].(string) + "?qr=1"

	logo := filepath.Join(t.TempDir(), "logo.png")
	red := color.RGBA{0xE5, 0x39, 0x35, 0xff}
	img := image.NewNRGBA(image.Rect(0, 0, 120, 120))
	draw.Draw(img, img.Bounds(), image.NewUniform(red), image.Point{}, draw.Src)
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	if err := os.WriteFile(logo, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	p.run(chromedp.Navigate(srv.URL+"/login"), chromedp.SendKeys(css("signin-email"), tn.Email), chromedp.SendKeys(css("signin-password"), tn.Password))
	p.submit(css("signin-submit"), "nav-email")
	p.run(chromedp.Navigate(linkURL+"#qr"), chromedp.WaitVisible(css("qr-designer")))
	if got := p.text("qr-design-source"); !strings.Contains(got, "workspace's QR style") {
		t.Errorf("source line %q", got)
	}
	p.run(
		chromedp.SetValue(css("qr-fg"), "#1a237e"),
		chromedp.SetValue(css("qr-modules"), "dots"),
		chromedp.SendKeys(css("qr-frame"), "Scan me"),
		chromedp.SetUploadFiles(css("qr-logo"), []string{logo}),
	)
	if src := p.eval(`document.querySelector('[data-testid="qr-designer-preview"]').getAttribute("src")`); !strings.Contains(src, "modules=dots") || !strings.Contains(src, "frame=Scan+me") {
		t.Errorf("live preview src %q", src)
	}
	p.submit(css("qr-save"), "flash-ok")
	if got := p.text("flash-ok"); !strings.HasPrefix(got, "QR design saved") {
		t.Errorf("flash %q", got)
	}
	if got := p.text("qr-design-source"); got != "This link has a QR design of its own." {
		t.Errorf("source line after saving %q", got)
	}
	p.run(chromedp.ScrollIntoView(css("qr-designer")))
	p.look("qr-designer-saved")
	png1, _ := p.download(p.eval(`document.querySelector('[data-testid="qr-download-png"]').href`))
	if got := testkit.DecodeQR(t, png1); got != want {
		t.Fatalf("the downloaded PNG encodes %q, want %q", got, want)
	}
	b := png1.Bounds()
	if c := color.RGBAModel.Convert(png1.At(b.Dx()/2, b.Dx()/2)).(color.RGBA); c != red {
		t.Errorf("centre %v, want the logo's red", c)
	}

	// A design that does not scan: said under the preview, nothing saved.
	p.run(chromedp.SetValue(css("qr-margin"), "0"))
	p.submit(css("qr-save"), "qr-unreadable")
	p.look("qr-designer-unreadable")

	// Settings → QR style: the workspace default.
	p.run(chromedp.Navigate(srv.URL+ws+"/settings/qr"), chromedp.WaitVisible(css("qr-style")))
	p.run(chromedp.SetValue(css("qr-modules"), "rounded"), chromedp.SendKeys(css("qr-frame"), "Menu"))
	p.submit(css("qr-save"), "flash-ok")
	if got := p.text("flash-ok"); !strings.HasPrefix(got, "QR style saved") {
		t.Errorf("flash %q", got)
	}
	p.look("qr-style")

	// The links page downloads the filter's codes as a ZIP.
	p.run(chromedp.Navigate(srv.URL+ws+"/links?q=menu"), chromedp.WaitVisible(css("links-qr-zip")))
	p.look("links-qr-zip")
	files := p.fetchZip(p.eval(`document.querySelector('[data-testid="links-qr-zip"]').href`))
	if len(files) != 1 || files["menu-qr.png"] == nil {
		t.Fatalf("zip files %d", len(files))
	}
	zimg, err := png.Decode(bytes.NewReader(files["menu-qr.png"]))
	if err != nil || testkit.DecodeQR(t, zimg) != want {
		t.Fatalf("zipped PNG: %v", err)
	}

	// Back to the workspace style.
	p.run(chromedp.Navigate(linkURL+"#qr"), chromedp.WaitVisible(css("qr-reset")))
	p.submit(css("qr-reset"), "flash-ok")
	if got := p.text("qr-design-source"); !strings.Contains(got, "workspace's QR style") {
		t.Errorf("source line after reset %q", got)
	}
	if v := p.eval(`document.querySelector('[data-testid="qr-modules"]').value`); v != "rounded" {
		t.Errorf("after reset the designer shows %q, want the workspace's rounded", v)
	}
}

// fetchZip downloads a ZIP with the browser's cookies and returns its files.
func (p *pilot) fetchZip(href string) map[string][]byte {
	p.t.Helper()
	cookies, err := chromedp.Call(p.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{p.srv.URL}})
	if err != nil {
		p.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, href, nil)
	for _, c := range cookies.Cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" {
		p.t.Fatalf("zip %s: %d %s", href, resp.StatusCode, body)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		p.t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		out[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	return out
}
