package api_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

var logoRed = color.RGBA{0xE5, 0x39, 0x35, 0xff}

func redPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(logoRed), image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func dataURI(mediaType string, b []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(b)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (f *linksFixture) design(t *testing.T, path, body string, status int) map[string]any {
	t.Helper()
	return testkit.JSON(t, f.srv.Do(t, "PUT", path, f.token, body), status)
}

func isRed(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r>>8 == uint32(logoRed.R) && g>>8 == uint32(logoRed.G) && b>>8 == uint32(logoRed.B)
}

func pngOf(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("png: %v", err)
	}
	return img
}

// TestQRDesignLifecycle: defaults, a workspace default that links inherit,
// a link's own design with logo, dots and frame in every format, the
// overrides of one request, and DELETE back to the workspace default.
func TestQRDesignLifecycle(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com/menu"}`)
	id := l["id"].(string)
	want := l["short_url"].(string) + "?qr=1"
	path := "/api/v1/links/" + id + "/qr/design"

	d := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200)
	if d["object"] != "qr_design" || d["link_id"] != nil || d["fg"] != "000000" || d["modules"] != "square" || d["updated_at"] != nil {
		t.Fatalf("defaults: %v", d)
	}
	_, plain := fetchQR(t, f, id, "")
	plainResp, _ := fetchQR(t, f, id, "")

	def := f.design(t, "/api/v1/qr/design", `{"fg":"1a237e","modules":"rounded"}`, 200)
	if def["link_id"] != nil || def["fg"] != "1A237E" || def["modules"] != "rounded" || def["updated_at"] == nil {
		t.Fatalf("workspace default: %v", def)
	}
	if got := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200); got["fg"] != "1A237E" || got["link_id"] != nil {
		t.Fatalf("the link does not inherit the default: %v", got)
	}
	resp, inherited := fetchQR(t, f, id, "")
	if bytes.Equal(inherited, plain) || resp.Header.Get("ETag") == plainResp.Header.Get("ETag") {
		t.Fatal("the workspace default did not change the link's code or its ETag")
	}
	if got := testkit.DecodeQR(t, pngOf(t, inherited)); got != want {
		t.Fatalf("inherited design decodes to %q", got)
	}

	own := f.design(t, path, `{"modules":"dots","ecc":"L","frame":{"text":"Scan me"},"logo":`+jsonString(dataURI("image/png", redPNG(t, 300, 200)))+`}`, 200)
	if own["link_id"] != id || own["ecc"] != "H" || own["fg"] != "1A237E" || own["modules"] != "dots" {
		t.Fatalf("own design: %v", own)
	}
	if logo, _ := own["logo"].(map[string]any); logo["width"] != float64(300) || logo["height"] != float64(200) || logo["bytes"].(float64) < 1 {
		t.Fatalf("logo: %v", own["logo"])
	}
	if fr, _ := own["frame"].(map[string]any); fr["text"] != "Scan me" || fr["color"] != "1A237E" {
		t.Fatalf("frame: %v", own["frame"])
	}

	resp, b := fetchQR(t, f, id, "")
	img := pngOf(t, b)
	if got := testkit.DecodeQR(t, img); got != want {
		t.Fatalf("designed PNG decodes to %q", got)
	}
	bd := img.Bounds()
	if bd.Dy() <= bd.Dx() {
		t.Errorf("a framed code is %v: no band below the code", bd)
	}
	if c := img.At(bd.Dx()/2, bd.Dx()/2); !isRed(c) {
		t.Errorf("centre %v, want the logo's red", c)
	}
	_, noLogo := fetchQR(t, f, id, "?logo=false")
	if nl := pngOf(t, noLogo); isRed(nl.At(bd.Dx()/2, bd.Dx()/2)) {
		t.Error("logo=false still draws the logo")
	} else if got := testkit.DecodeQR(t, nl); got != want {
		t.Errorf("logo=false decodes to %q", got)
	}
	resp2, _ := fetchQR(t, f, id, "?fg=000000")
	if resp2.StatusCode != 200 || resp2.Header.Get("ETag") == resp.Header.Get("ETag") {
		t.Errorf("an override: %d, same ETag", resp2.StatusCode)
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/"+id+"/qr?bg=1A237E", f.token, ""), 422, "validation-failed")

	resp, svg := fetchQR(t, f, id, "?format=svg")
	if resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(svg), ">Scan me</text>") {
		t.Errorf("svg: %s", resp.Header.Get("Content-Type"))
	}
	resp, pdf := fetchQR(t, f, id, "?format=pdf")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" || resp.Header.Get("Content-Disposition") != `inline; filename="`+l["code"].(string)+`.pdf"` {
		t.Fatalf("pdf: %d %v", resp.StatusCode, resp.Header)
	}
	if got := testkit.DecodeQR(t, rasterisePDF(t, pdf)); got != want {
		t.Errorf("PDF decodes to %q", got)
	}

	f.srv.Do(t, "DELETE", path, f.token, "").Body.Close()
	if got := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200); got["link_id"] != nil || got["modules"] != "rounded" {
		t.Fatalf("after DELETE: %v, want the workspace default", got)
	}
	if resp := f.srv.Do(t, "DELETE", path, f.token, ""); resp.StatusCode != 204 {
		t.Errorf("DELETE again: %d", resp.StatusCode)
	}
}

// TestQRDesignRefusedLogos: each refused kind of logo is a 422 at /logo and
// leaves the stored design as it was.
func TestQRDesignRefusedLogos(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	id := f.create(t, `{"target_url":"https://example.com"}`)["id"].(string)
	path := "/api/v1/links/" + id + "/qr/design"
	f.design(t, path, `{"modules":"dots","logo":`+jsonString(dataURI("image/png", redPNG(t, 64, 64)))+`}`, 200)
	before := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200)

	var gifBuf bytes.Buffer
	_ = gif.Encode(&gifBuf, image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White}), nil)
	for name, logo := range map[string]string{
		"svg":          dataURI("image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)),
		"gif":          dataURI("image/gif", gifBuf.Bytes()),
		"webp":         "data:image/webp;base64,UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==",
		"gif as png":   dataURI("image/png", gifBuf.Bytes()),
		"bad base64":   "data:image/png;base64,%%%",
		"undecodable":  dataURI("image/jpeg", []byte("\xff\xd8\xff not really a jpeg")),
		"too large":    dataURI("image/png", redPNG(t, 2049, 1)),
		"url":          "https://example.com/logo.png",
		"not a string": "",
	} {
		body := `{"modules":"square","logo":` + jsonString(logo) + `}`
		if name == "not a string" {
			body = `{"modules":"square","logo":42}`
		}
		p := testkit.Problem(t, f.srv.Do(t, "PUT", path, f.token, body), 422, "validation-failed")
		errs, _ := p["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["pointer"] != "/logo" {
			t.Errorf("%s: errors %v, want one at /logo", name, errs)
		}
		if after := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: the design changed: %v", name, after)
		}
	}
	big := bytes.Repeat([]byte{0}, 256<<10+1)
	p := testkit.Problem(t, f.srv.Do(t, "PUT", path, f.token, `{"logo":`+jsonString(dataURI("image/png", big))+`}`), 422, "validation-failed")
	if errs, _ := p["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["pointer"] != "/logo" {
		t.Errorf("over 256 KiB: %v", p)
	}
}

// TestQRDesignRefusals: pointers for each field, contrast (frame too),
// and qr-unreadable for a design that does not scan.
func TestQRDesignRefusals(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	id := f.create(t, `{"target_url":"https://example.com"}`)["id"].(string)
	path := "/api/v1/links/" + id + "/qr/design"
	for body, pointer := range map[string]string{
		`{"fg":"12345"}`:           "/fg",
		`{"bg":"#FFFFFF"}`:         "/bg",
		`{"ecc":"h"}`:              "/ecc",
		`{"margin":17}`:            "/margin",
		`{"margin":1.5}`:           "/margin",
		`{"modules":"hearts"}`:     "/modules",
		`{"frame":{"text":""}}`:    "/frame/text",
		`{"frame":{"text":"   "}}`: "/frame/text",
		`{"frame":{"text":"` + strings.Repeat("x", 33) + `"}}`: "/frame/text",
		`{"frame":{"text":"a\u0007b"}}`:                        "/frame/text",
		`{"frame":{"text":"ok","color":"zzzzzz"}}`:             "/frame/color",
		`{"frame":{"text":"ok","size":3}}`:                     "/frame/size",
		`{"frame":"Scan me"}`:                                  "/frame",
		`{"fg":"777777","bg":"888888"}`:                        "/fg",
		`{"frame":{"text":"ok","color":"EEEEEE"}}`:             "/frame/color",
		`{"shape":"dots"}`:                                     "/shape",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "PUT", path, f.token, body), 422, "validation-failed")
		errs, _ := p["errors"].([]any)
		if len(errs) == 0 || errs[0].(map[string]any)["pointer"] != pointer {
			t.Errorf("%s: errors %v, want %s", body, errs, pointer)
		}
	}
	testkit.Problem(t, f.srv.Do(t, "PUT", path, f.token, `{"margin":0,"frame":{"text":"Scan me"}}`), 422, "qr-unreadable")
	if d := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200); d["link_id"] != nil {
		t.Errorf("a refused design was saved: %v", d)
	}
	testkit.Problem(t, f.srv.Do(t, "PUT", "/api/v1/qr/design", f.token, `{"margin":0,"frame":{"text":"Scan me"}}`), 422, "qr-unreadable")
	testkit.Problem(t, f.srv.Do(t, "PUT", path, f.token, `{}`, "Content-Type", "text/plain"), 415, "unsupported-media-type")
}

// TestQRDesignDefaultStopsApplying: a link with its own design keeps it
// when the workspace default changes; others follow the default.
func TestQRDesignDefaultStopsApplying(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	a := f.create(t, `{"target_url":"https://example.com/a"}`)["id"].(string)
	b := f.create(t, `{"target_url":"https://example.com/b"}`)["id"].(string)
	f.design(t, "/api/v1/links/"+a+"/qr/design", `{"fg":"004D40"}`, 200)
	f.design(t, "/api/v1/qr/design", `{"fg":"B71C1C","modules":"dots"}`, 200)
	if d := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+a+"/qr/design", f.token, ""), 200); d["fg"] != "004D40" || d["modules"] != "square" {
		t.Errorf("own design: %v", d)
	}
	if d := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+b+"/qr/design", f.token, ""), 200); d["fg"] != "B71C1C" || d["modules"] != "dots" {
		t.Errorf("inherited: %v", d)
	}
}

// TestQRDesignOtherWorkspace: every design route answers 404 for another
// workspace's link, and changes nothing there; the ZIP leaves it out.
func TestQRDesignOtherWorkspace(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	theirs := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com"}`), 201)["id"].(string)
	testkit.JSON(t, f.srv.Do(t, "PUT", "/api/v1/links/"+theirs+"/qr/design", f.otherTk, `{"fg":"004D40"}`), 200)
	path := "/api/v1/links/" + theirs + "/qr/design"
	testkit.Problem(t, f.srv.Do(t, "GET", path, f.token, ""), 404, "not-found")
	testkit.Problem(t, f.srv.Do(t, "PUT", path, f.token, `{"fg":"B71C1C"}`), 404, "not-found")
	testkit.Problem(t, f.srv.Do(t, "DELETE", path, f.token, ""), 404, "not-found")
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/"+theirs+"/qr", f.token, ""), 404, "not-found")
	if d := testkit.JSON(t, f.srv.Do(t, "GET", path, f.otherTk, ""), 200); d["fg"] != "004D40" || d["link_id"] != theirs {
		t.Errorf("their design changed: %v", d)
	}
	f.design(t, "/api/v1/qr/design", `{"fg":"B71C1C"}`, 200)
	if d := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/qr/design", f.otherTk, ""), 200); d["fg"] != "000000" {
		t.Errorf("their workspace default is ours: %v", d)
	}
	files := zipFiles(t, f, "?id="+theirs)
	if len(files) != 0 {
		t.Errorf("ZIP of another workspace's id: %v", files)
	}
}

func zipFiles(t *testing.T, f *linksFixture, query string) map[string][]byte {
	t.Helper()
	resp := f.srv.Do(t, "GET", "/api/v1/links/qr.zip"+query, f.token, "")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("qr.zip%s: %d %s", query, resp.StatusCode, b)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, file := range zr.File {
		rc, err := file.Open()
		if err != nil {
			t.Fatal(err)
		}
		out[file.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	return out
}

// TestQRZip: one file per link, each in its own design, filters and ids.
func TestQRZip(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	a := f.create(t, `{"target_url":"https://example.com/a","code":"zip-a","title":"print","tags":["flyer"]}`)
	b := f.create(t, `{"target_url":"https://example.com/b","code":"zip-b","title":"print","tags":["flyer","menu"]}`)
	f.create(t, `{"target_url":"https://example.com/c","code":"zip-c"}`)
	f.design(t, "/api/v1/links/"+a["id"].(string)+"/qr/design", `{"logo":`+jsonString(dataURI("image/png", redPNG(t, 50, 50)))+`}`, 200)

	files := zipFiles(t, f, "?q=print")
	if len(files) != 2 || files["zip-a.png"] == nil || files["zip-b.png"] == nil {
		t.Fatalf("files %v", fileNames(files))
	}
	for name, l := range map[string]map[string]any{"zip-a.png": a, "zip-b.png": b} {
		img := pngOf(t, files[name])
		if got := testkit.DecodeQR(t, img); got != l["short_url"].(string)+"?qr=1" {
			t.Errorf("%s decodes to %q", name, got)
		}
		centreRed := isRed(img.At(img.Bounds().Dx()/2, img.Bounds().Dy()/2))
		if centreRed != (name == "zip-a.png") {
			t.Errorf("%s: logo in the centre %v", name, centreRed)
		}
	}
	if files := zipFiles(t, f, "?tag=flyer&tag=menu"); len(files) != 1 || files["zip-b.png"] == nil {
		t.Errorf("tag=flyer&tag=menu: %v", fileNames(files))
	}
	if files := zipFiles(t, f, "?tag=flyer&id="+a["id"].(string)); len(files) != 1 || files["zip-a.png"] == nil {
		t.Errorf("tag and id: %v", fileNames(files))
	}
	files = zipFiles(t, f, "?format=svg&id="+a["id"].(string)+"&id="+b["id"].(string))
	if len(files) != 2 || !bytes.HasPrefix(files["zip-a.svg"], []byte("<svg")) {
		t.Fatalf("svg files %v", fileNames(files))
	}
	files = zipFiles(t, f, "?format=pdf&id="+b["id"].(string))
	if got := testkit.DecodeQR(t, rasterisePDF(t, files["zip-b.pdf"])); got != b["short_url"].(string)+"?qr=1" {
		t.Errorf("zip-b.pdf decodes to %q", got)
	}
	for _, q := range []string{"?format=gif", "?size=10", "?id=nope", "?status=gone", "?tag=" + strings.Repeat("x", 51), "?q=a&q=b", "?shape=dots"} {
		testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/qr.zip"+q, f.token, ""), 422, "validation-failed")
	}
}

func fileNames(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestQRZipThousand: 1,000 codes stream as one archive (Transfer-Encoding
// chunked: nothing buffers the whole archive to learn its length), and
// 1,001 are refused naming the count.
func TestQRZipThousand(t *testing.T) {
	strict.SkipShort(t, "a ZIP of 1,000 QR codes")
	t.Parallel()
	f := newLinksFixture(t)
	insertLinks(t, f, 1000)
	resp := f.srv.Do(t, "GET", "/api/v1/links/qr.zip?size=64", f.token, "")
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != -1 {
		t.Fatalf("status %d, content length %d: want a streamed 200", resp.StatusCode, resp.ContentLength)
	}
	b, _ := io.ReadAll(resp.Body)
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1000 {
		t.Fatalf("%d files, want 1000", len(zr.File))
	}
	rc, _ := zr.File[0].Open()
	first, _ := io.ReadAll(rc)
	if got := testkit.DecodeQR(t, pngOf(t, first)); !strings.HasSuffix(got, "/"+strings.TrimSuffix(zr.File[0].Name, ".png")+"?qr=1") {
		t.Errorf("%s decodes to %q", zr.File[0].Name, got)
	}
	insertLinks(t, f, 1)
	p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/qr.zip", f.token, ""), 422, "validation-failed")
	if !strings.Contains(p["detail"].(string), "1001") {
		t.Errorf("detail %q does not name the count", p["detail"])
	}
}

func insertLinks(t testing.TB, f *linksFixture, n int) {
	t.Helper()
	_, err := f.srv.Pool.Exec(context.Background(), `
		INSERT INTO links (id, workspace_id, code, target_url)
		SELECT gen_random_uuid(), $1, 'z' || substr(md5(random()::text), 1, 12), 'https://example.com/' || i
		FROM generate_series(1, $2) i`, f.tenant.WorkspaceID, n)
	if err != nil {
		t.Fatal(err)
	}
}

// rasterisePDF renders a PDF's page with poppler's pdftoppm.
func rasterisePDF(t *testing.T, pdf []byte) image.Image {
	t.Helper()
	bin, err := exec.LookPath("pdftoppm")
	if err != nil {
		strict.Skip(t, "pdftoppm (poppler-utils) is not installed")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "code.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-png", "-r", "300", "-singlefile", in, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "page.png"))
	if err != nil {
		t.Fatal(err)
	}
	return pngOf(t, b)
}

var _ = http.StatusOK
