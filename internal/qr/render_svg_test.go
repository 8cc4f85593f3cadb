package qr

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// TestRenderSVGScans rasterises the SVG with oksvg/rasterx at a whole number
// of pixels per module and decodes it with gozxing.
func TestRenderSVGScans(t *testing.T) {
	for _, content := range []string{shortURL, longURL} {
		for _, e := range []ECC{ECCLow, ECCMedium, ECCQuartile, ECCHigh} {
			for _, c := range []struct {
				margin int
				fg, bg string
			}{{0, "000000", "FFFFFF"}, {4, "000000", "FFFFFF"}, {16, "000000", "FFFFFF"}, {4, "1A237E", "FFF8E1"}} {
				t.Run(fmt.Sprintf("len%d/%s/m%d/%s", len(content), e, c.margin, c.fg), func(t *testing.T) {
					t.Parallel()
					o := DefaultOptions()
					o.Format, o.ECC, o.Margin, o.FG, o.BG = FormatSVG, e, c.margin, rgb(c.fg), rgb(c.bg)
					b, ct, err := Render(content, o)
					if err != nil {
						t.Fatal(err)
					}
					if ct != "image/svg+xml" {
						t.Errorf("content type %q", ct)
					}
					n := modulesFor(t, content, e) + 2*c.margin
					img := rasteriseSVG(t, b, n*6)
					if !isColour(img.At(c.margin*6+1, c.margin*6+1), o.FG) {
						t.Errorf("finder pattern corner is not fg in the raster")
					}
					text, err := scan(t, img, c.margin)
					if err != nil {
						t.Fatalf("decode: %v", err)
					}
					if text != content {
						t.Fatalf("decoded %q, want %q", text, content)
					}
				})
			}
		}
	}
}

var (
	reViewBox = regexp.MustCompile(`viewBox="0 0 (\d+) (\d+)"`)
	rePathD   = regexp.MustCompile(`^(M\d+ \d+h\d+v1h-\d+z)+$`)
)

// TestRenderSVGStructure pins the compact shape promised to integrators: well
// formed XML, a viewBox in module units including the margin, crispEdges,
// width/height of Size px, one background rect and exactly one path.
func TestRenderSVGStructure(t *testing.T) {
	o := DefaultOptions()
	o.Format, o.Margin, o.Size = FormatSVG, 3, 300
	o.FG, o.BG = rgb("1A237E"), rgb("FFF8E1")
	b := mustRender(t, shortURL, o)
	s := string(b)

	var doc struct {
		XMLName xml.Name
		Width   string `xml:"width,attr"`
		Height  string `xml:"height,attr"`
		Shape   string `xml:"shape-rendering,attr"`
		Rects   []struct {
			Width  string `xml:"width,attr"`
			Height string `xml:"height,attr"`
			Fill   string `xml:"fill,attr"`
		} `xml:"rect"`
		Paths []struct {
			D    string `xml:"d,attr"`
			Fill string `xml:"fill,attr"`
		} `xml:"path"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, s)
	}
	if doc.XMLName.Space != "http://www.w3.org/2000/svg" || doc.XMLName.Local != "svg" {
		t.Errorf("root %v", doc.XMLName)
	}
	if count(s, "<path") != 1 || len(doc.Paths) != 1 {
		t.Fatalf("want exactly one <path>, got %d", count(s, "<path"))
	}
	if count(s, "<rect") != 1 || len(doc.Rects) != 1 {
		t.Fatalf("want exactly one <rect>, got %d", count(s, "<rect"))
	}
	if doc.Shape != "crispEdges" {
		t.Errorf("shape-rendering=%q", doc.Shape)
	}
	if doc.Width != "300" || doc.Height != "300" {
		t.Errorf("width/height = %s/%s, want Size", doc.Width, doc.Height)
	}
	m := reViewBox.FindStringSubmatch(s)
	want := strconv.Itoa(modulesFor(t, shortURL, o.ECC) + 2*o.Margin)
	if m == nil || m[1] != want || m[2] != want {
		t.Fatalf("viewBox %v, want 0 0 %s %s", m, want, want)
	}
	if r := doc.Rects[0]; r.Width != want || r.Height != want || r.Fill != "#fff8e1" {
		t.Errorf("background rect %+v", r)
	}
	if p := doc.Paths[0]; p.Fill != "#1a237e" || !rePathD.MatchString(p.D) {
		t.Errorf("path fill %q, d %.80q…", p.Fill, p.D)
	}
	// The finder pattern's top edge is one merged 7-module run at (3,3).
	if !regexp.MustCompile(`^M3 3h7v1h-7z`).MatchString(doc.Paths[0].D) {
		t.Errorf("path does not start with the finder's top run: %.40q", doc.Paths[0].D)
	}
}
