package qr

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	gozxingqr "github.com/makiuchi-d/gozxing/qrcode"
	"github.com/srwiley/oksvg"
	"github.com/srwiley/rasterx"
)

// Realistic contents: a typical short URL, and a long one (> 200 bytes) that
// needs a much denser symbol.
const (
	shortURL = "http://127.0.0.1:8080/Ab3xY9q"
	longURL  = "https://links.example.com/campaigns/2026/winter-sale/landing?utm_source=newsletter" +
		"&utm_medium=email&utm_campaign=winter_sale_2026&utm_content=hero_button_variant_b" +
		"&ref=Ab3xY9qZk2&lang=en-GB&region=eu-west&session=7f3a9c2e"
)

func rgb(hex string) color.RGBA {
	c, ok := parseHexColour(hex)
	if !ok {
		panic("bad test colour " + hex)
	}
	return c
}

// mustRender renders or fails the test.
func mustRender(t testing.TB, content string, o Options) []byte {
	t.Helper()
	b, _, err := Render(content, o)
	if err != nil {
		t.Fatalf("Render(%q, %+v): %v", content, o, err)
	}
	return b
}

func decodePNGImage(t testing.TB, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("png.Decode: %v", err)
	}
	return img
}

// scan decodes img with gozxing's QR reader, as a phone would.
//
// gozxing's finder-pattern detector needs light pixels around the symbol.
// margin 0 is legitimate in the contract (for users who put the code on their
// own white border), so for it we composite the image onto a larger white
// canvas first, which is exactly that use. With any margin ≥ 1 the image is
// decoded as rendered.
func scan(t testing.TB, img image.Image, margin int) (string, error) {
	t.Helper()
	if margin == 0 {
		img = onWhiteCanvas(img, 32)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatalf("NewBinaryBitmapFromImage: %v", err)
	}
	hints := map[gozxing.DecodeHintType]interface{}{gozxing.DecodeHintType_TRY_HARDER: true}
	res, err := gozxingqr.NewQRCodeReader().Decode(bmp, hints)
	if err != nil {
		return "", err
	}
	return res.GetText(), nil
}

func onWhiteCanvas(img image.Image, pad int) image.Image {
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx()+2*pad, b.Dy()+2*pad))
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(dst, b.Sub(b.Min).Add(image.Pt(pad, pad)), img, b.Min, draw.Src)
	return dst
}

// rasteriseSVG draws an SVG produced by Render into a px×px RGBA image with
// oksvg/rasterx, an independent SVG renderer.
func rasteriseSVG(t testing.TB, svg []byte, px int) image.Image {
	t.Helper()
	icon, err := oksvg.ReadIconStream(bytes.NewReader(svg), oksvg.StrictErrorMode)
	if err != nil {
		t.Fatalf("oksvg: %v", err)
	}
	icon.SetTarget(0, 0, float64(px), float64(px))
	img := image.NewRGBA(image.Rect(0, 0, px, px))
	scanner := rasterx.NewScannerGV(px, px, img, img.Bounds())
	icon.Draw(rasterx.NewDasher(px, px, scanner), 1)
	return img
}

func modulesFor(t testing.TB, content string, e ECC) int {
	t.Helper()
	m, err := encode(content, e)
	if err != nil {
		t.Fatal(err)
	}
	return m.size()
}

func isColour(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	return uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(b>>8) == want.B
}

func count(s, sub string) int { return strings.Count(s, sub) }
