package testkit

import (
	"image"
	"image/draw"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
)

// DecodeQR reads a QR code from img with a real decoder (gozxing) and
// returns its text, failing the test when nothing decodes. The image is
// placed on a white canvas with room around it first, so codes rendered
// with a small margin decode too. gozxing's finder-pattern detector misses
// about 3 in 1000 pristine codes that other decoders (zbar) read; for those,
// the image is decoded again in pure-barcode mode, which reads the modules
// of an unrotated, undistorted code directly — what we render.
func DecodeQR(t testing.TB, img image.Image) string {
	t.Helper()
	if text, err := decodeQR(img, gozxing.DecodeHintType_TRY_HARDER); err == nil {
		return text
	}
	text, err := decodeQR(img, gozxing.DecodeHintType_PURE_BARCODE)
	if err != nil {
		t.Fatalf("decode QR: %v", err)
	}
	return text
}

func decodeQR(img image.Image, hint gozxing.DecodeHintType) (string, error) {
	b := img.Bounds()
	pad := b.Dx() / 4
	canvas := image.NewRGBA(image.Rect(0, 0, b.Dx()+2*pad, b.Dy()+2*pad))
	draw.Draw(canvas, canvas.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(canvas, b.Sub(b.Min).Add(image.Pt(pad, pad)), img, b.Min, draw.Src)
	if hint == gozxing.DecodeHintType_PURE_BARCODE {
		canvas = image.NewRGBA(b.Sub(b.Min))
		draw.Draw(canvas, canvas.Bounds(), img, b.Min, draw.Src)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(canvas)
	if err != nil {
		return "", err
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{hint: true})
	if err != nil {
		return "", err
	}
	return res.GetText(), nil
}
