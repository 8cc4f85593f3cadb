package qr

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srwiley/oksvg"
	"github.com/srwiley/rasterx"

	"github.com/linkqr/linkqr/internal/testkit/strict"
	"github.com/linkqr/linkqr/internal/validate"
)

// logoRed is the test logo's colour: no module or background has it, so
// finding it in the centre proves the logo was drawn there.
var logoRed = color.RGBA{0xE5, 0x39, 0x35, 0xff}

func testLogoPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(logoRed), image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func testLogo(t testing.TB) *Logo {
	t.Helper()
	l, err := ParseLogoDataURI("data:image/png;base64," + base64.StdEncoding.EncodeToString(testLogoPNG(t, 200, 120)))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func designed(style ModuleStyle, logo *Logo, frame bool) Options {
	o := DefaultOptions()
	o.FG = rgb("1A237E")
	o.Modules = style
	o.Logo = logo
	if frame {
		o.Frame = &Frame{Text: FrameText{"Scan me"}, Color: rgb("1A237E")}
	}
	return o
}

// rasterise turns any format's bytes into an image a decoder can read:
// PNG directly, SVG with oksvg (which skips <image> and <text>: the code
// must scan without them), PDF with poppler's pdftoppm.
func rasterise(t *testing.T, f Format, b []byte) image.Image {
	t.Helper()
	switch f {
	case FormatSVG:
		return rasteriseStyledSVG(t, b, 600)
	case FormatPDF:
		return rasterisePDF(t, b)
	}
	return decodePNGImage(t, b)
}

func rasteriseStyledSVG(t *testing.T, svg []byte, px int) image.Image {
	t.Helper()
	icon, err := oksvg.ReadIconStream(bytes.NewReader(svg), oksvg.IgnoreErrorMode)
	if err != nil {
		t.Fatalf("oksvg: %v", err)
	}
	h := int(float64(px) * icon.ViewBox.H / icon.ViewBox.W)
	icon.SetTarget(0, 0, float64(px), float64(h))
	img := image.NewRGBA(image.Rect(0, 0, px, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	scanner := rasterx.NewScannerGV(px, h, img, img.Bounds())
	icon.Draw(rasterx.NewDasher(px, h, scanner), 1)
	return img
}

// rasterisePDF runs pdftoppm (poppler-utils); without it the test is
// skipped locally and fails in CI, which installs it.
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
	out, err := exec.Command(bin, "-png", "-r", "150", "-singlefile", in, filepath.Join(dir, "page")).CombinedOutput()
	if err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "page.png"))
	if err != nil {
		t.Fatal(err)
	}
	return decodePNGImage(t, b)
}

// TestDesignsScan: every module style in every format, with and without a
// logo and a frame, decodes to the content with a real decoder.
func TestDesignsScan(t *testing.T) {
	logo := testLogo(t)
	for _, f := range []Format{FormatPNG, FormatSVG, FormatPDF} {
		for _, style := range []ModuleStyle{ModulesSquare, ModulesDots, ModulesRounded} {
			for _, withLogo := range []bool{false, true} {
				for _, frame := range []bool{false, true} {
					var l *Logo
					if withLogo {
						l = logo
					}
					o := designed(style, l, frame)
					o.Format = f
					name := string(f) + "/" + string(style) + map[bool]string{true: "/logo", false: ""}[withLogo] + map[bool]string{true: "/frame", false: ""}[frame]
					t.Run(name, func(t *testing.T) {
						b, ct, err := Render(shortURL+"?qr=1", o)
						if err != nil {
							t.Fatal(err)
						}
						if ct != f.ContentType() {
							t.Fatalf("content type %q", ct)
						}
						got, err := Decode(rasterise(t, f, b))
						if err != nil || got != shortURL+"?qr=1" {
							t.Fatalf("decoded %q, %v", got, err)
						}
					})
				}
			}
		}
	}
}

// TestLogoFillsCentre: the logo's colour is at the PNG's centre, and only
// with the logo.
func TestLogoFillsCentre(t *testing.T) {
	o := designed(ModulesDots, testLogo(t), false)
	img := decodePNGImage(t, mustRender(t, shortURL, o))
	b := img.Bounds()
	if c := img.At(b.Dx()/2, b.Dy()/2); !isColour(c, logoRed) {
		t.Fatalf("centre is %v, want the logo's %v", c, logoRed)
	}
	o.Logo = nil
	img = decodePNGImage(t, mustRender(t, shortURL, o))
	for y := 0; y < b.Dy(); y += 3 {
		for x := 0; x < b.Dx(); x += 3 {
			if isColour(img.At(x, y), logoRed) {
				t.Fatalf("logo colour at %d,%d without a logo", x, y)
			}
		}
	}
}

func TestLogoForcesECCH(t *testing.T) {
	o := designed(ModulesSquare, testLogo(t), false)
	o.ECC = ECCLow
	withLogo := mustRender(t, shortURL, o)
	o.ECC = ECCHigh
	if !bytes.Equal(withLogo, mustRender(t, shortURL, o)) {
		t.Fatal("a logo design at ECC L did not render as ECC H")
	}
}

func TestFinderPatternsStaySolid(t *testing.T) {
	for _, style := range []ModuleStyle{ModulesDots, ModulesRounded} {
		o := designed(style, nil, false)
		o.Size = 29 * 10 // whole pixels a module for this content
		img := decodePNGImage(t, mustRender(t, shortURL, o))
		// the top-left finder's outer ring, module (0, 0) to (6, 0): every
		// pixel of it is fg, corners included (a dot would leave them bg).
		m := modulesFor(t, shortURL, ECCMedium)
		scale := o.Size / (m + 2*o.Margin)
		off := (o.Size-(m+2*o.Margin)*scale)/2 + o.Margin*scale
		for x := off; x < off+7*scale; x++ {
			if !isColour(img.At(x, off), o.FG) {
				t.Fatalf("%s: finder pixel %d,%d is %v", style, x, off, img.At(x, off))
			}
		}
	}
}

func TestFrameTextInSVG(t *testing.T) {
	o := designed(ModulesSquare, nil, true)
	o.Frame.Text = FrameText{`Scan <me> & "win"`}
	o.Format = FormatSVG
	svg := string(mustRender(t, shortURL, o))
	if !strings.Contains(svg, `<text `) || !strings.Contains(svg, `Scan &lt;me&gt; &amp; &#34;win&#34;</text>`) {
		t.Fatalf("no escaped <text> in %s", svg[len(svg)-300:])
	}
}

func TestDesignETagChanges(t *testing.T) {
	plain := DefaultOptions()
	seen := map[string]string{ETag(shortURL, plain): "plain"}
	for name, o := range map[string]Options{
		"dots":  designed(ModulesDots, nil, false),
		"logo":  designed(ModulesSquare, testLogo(t), false),
		"frame": designed(ModulesSquare, nil, true),
		"pdf":   func() Options { o := plain; o.Format = FormatPDF; return o }(),
	} {
		e := ETag(shortURL, o)
		if prev, dup := seen[e]; dup {
			t.Fatalf("%s has the ETag of %s", name, prev)
		}
		seen[e] = name
	}
	o := designed(ModulesSquare, nil, true)
	o.Frame.Text = FrameText{"Other"}
	if _, dup := seen[ETag(shortURL, o)]; dup {
		t.Fatal("frame text not in the ETag")
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	for _, f := range []Format{FormatPNG, FormatSVG, FormatPDF} {
		o := designed(ModulesRounded, testLogo(t), true)
		o.Format = f
		if !bytes.Equal(mustRender(t, shortURL, o), mustRender(t, shortURL, o)) {
			t.Fatalf("%s: two renders differ; the ETag would lie", f)
		}
	}
}

// The logo scaled for one size is kept for the next render of that size:
// a render after one at another size, and one from the kept scaling, are
// byte for byte what a fresh logo gives.
func TestScaledLogoIsReused(t *testing.T) {
	o := designed(ModulesDots, testLogo(t), true)
	fresh := mustRender(t, shortURL, o)
	kept := o.Logo.scaled.Load()
	if kept == nil {
		t.Fatal("the scaled logo was not kept")
	}
	if again := mustRender(t, shortURL, o); !bytes.Equal(again, fresh) || o.Logo.scaled.Load() != kept {
		t.Fatal("a second render at the same size scaled again or drew another picture")
	}
	o.Size = 700
	mustRender(t, shortURL, o)
	if o.Logo.scaled.Load() == kept {
		t.Fatal("another size drew the logo kept for 512 px")
	}
	o.Size = 512
	if back := mustRender(t, shortURL, o); !bytes.Equal(back, fresh) {
		t.Fatal("back at 512 px the code differs from the first render")
	}
}

// A canvas's pixels are reused by the next render of its size: nothing of
// a code with a logo and a frame shows in a plain dotted one drawn after it.
func TestPooledCanvasKeepsNothing(t *testing.T) {
	plain := designed(ModulesDots, nil, false)
	first := mustRender(t, shortURL, plain)
	busy := designed(ModulesRounded, testLogo(t), true)
	busy.Size = plain.Size
	mustRender(t, shortURL, busy)
	if after := mustRender(t, shortURL, plain); !bytes.Equal(after, first) {
		t.Fatal("a plain code drawn after a designed one differs from the same code drawn first")
	}
}

func TestParseLogoRefusals(t *testing.T) {
	pngB64 := base64.StdEncoding.EncodeToString(testLogoPNG(t, 10, 10))
	huge := base64.StdEncoding.EncodeToString(testLogoPNG(t, 2049, 4))
	cases := map[string]string{
		"svg":        "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)),
		"gif":        "data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=",
		"webp":       "data:image/webp;base64,UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==",
		"bad base64": "data:image/png;base64,@@@not base64@@@",
		"not png":    "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("hello, not an image")),
		"jpeg label": "data:image/jpeg;base64," + pngB64,
		"too wide":   "data:image/png;base64," + huge,
		"too big":    "data:image/png;base64," + base64.StdEncoding.EncodeToString(make([]byte, MaxLogoBytes+1)),
		"url":        "https://example.com/logo.png",
		"not base64": "data:image/png," + pngB64,
	}
	for name, uri := range cases {
		_, err := ParseLogoDataURI(uri)
		var rej *validate.Rejection
		if err == nil || !errors.As(err, &rej) {
			t.Errorf("%s: err = %v, want a rejection", name, err)
		}
	}
	if _, err := ParseLogoDataURI("data:image/png;base64," + pngB64); err != nil {
		t.Fatalf("a valid PNG was refused: %v", err)
	}
}

func TestLogoReencodedAndShrunk(t *testing.T) {
	raw := testLogoPNG(t, 2048, 1024)
	l, err := ParseLogoDataURI("data:image/png;base64," + base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	if l.Width() != StoredLogoEdge || l.Height() != StoredLogoEdge/2 {
		t.Fatalf("stored %d×%d", l.Width(), l.Height())
	}
	if bytes.Equal(l.PNG(), raw) {
		t.Fatal("the upload was stored as sent")
	}
	if _, err := StoredLogo(l.PNG()); err != nil {
		t.Fatal(err)
	}
}

func TestVerify(t *testing.T) {
	if err := Verify(shortURL, designed(ModulesDots, testLogo(t), true)); err != nil {
		t.Fatalf("a good design: %v", err)
	}
	o := designed(ModulesSquare, nil, true)
	o.Margin = 0 // the frame's border touches the finder patterns
	if err := Verify(shortURL, o); !errors.Is(err, ErrUnreadable) {
		t.Fatalf("margin 0 inside a dark frame: %v, want ErrUnreadable", err)
	}
}

// LogoCost reads a PNG's bit depth and colour type from its IHDR: the
// same pixels cost twice as much in 16 bits, and RGB is held as RGBA.
func TestLogoCost(t *testing.T) {
	ihdr := func(w, h int, depth, colour byte) []byte {
		b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
		b = append(b, byte(w>>24), byte(w>>16), byte(w>>8), byte(w), byte(h>>24), byte(h>>16), byte(h>>8), byte(h), depth, colour, 0, 0, 0)
		return b
	}
	cfg := image.Config{Width: 2048, Height: 2048}
	stored := int64(2 * 1024 * 1024 * 4)
	for _, c := range []struct {
		depth, colour byte
		perPixel      int64
	}{{16, 6, 8}, {8, 6, 4}, {8, 2, 4}, {16, 2, 8}, {8, 0, 1}, {16, 0, 2}, {8, 3, 1}} {
		raw := ihdr(2048, 2048, c.depth, c.colour)
		if got, want := LogoCost(raw, cfg), 2048*2048*c.perPixel+stored+int64(len(raw)); got != want {
			t.Errorf("depth %d colour %d: %d, want %d", c.depth, c.colour, got, want)
		}
	}
}

// TestParseColourInput: a form's colour is "#RRGGBB", "RRGGBB" or "#RGB"
// in any case; anything else is refused with one sentence.
func TestParseColourInput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]color.RGBA{
		"#1f2a5c": {0x1f, 0x2a, 0x5c, 0xff}, "1F2A5C": {0x1f, 0x2a, 0x5c, 0xff}, " #1F2a5C ": {0x1f, 0x2a, 0x5c, 0xff},
		"#fff": {0xff, 0xff, 0xff, 0xff}, "#0A3": {0x00, 0xaa, 0x33, 0xff}, "abc": {0xaa, 0xbb, 0xcc, 0xff},
	} {
		if got, err := ParseColourInput(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "#", "#12", "#1234", "#12345", "#1234567", "##123456", "navy", "#ggg", "#12 456"} {
		if _, err := ParseColourInput(in); err == nil || err.Error() != detailColourInput {
			t.Errorf("%q: %v, want %q", in, err, detailColourInput)
		}
	}
}
