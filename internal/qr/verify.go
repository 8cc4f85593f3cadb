package qr

import (
	"bytes"
	"errors"
	"image"
	"image/draw"
	"image/png"

	"github.com/makiuchi-d/gozxing"
	gozxingqr "github.com/makiuchi-d/gozxing/qrcode"
)

// VerifySize is the edge at which a design is proven to scan before it is
// saved (CONTRACT.md 10.5).
const VerifySize = 512

// ErrUnreadable means a design's code does not decode to its content with
// a QR decoder: the API refuses it as qr-unreadable rather than let it be
// printed.
var ErrUnreadable = errors.New("qr: the designed code does not decode")

// Verify renders content with o as a PNG of VerifySize pixels (or the
// smallest size that holds the symbol) and decodes it with gozxing, the
// decoder the tests use too. It returns ErrUnreadable unless the decoded
// text is exactly content. A code without quiet zone and frame is decoded
// on a bg border, the use margin 0 is for.
func Verify(content string, o Options) error {
	o.Format = FormatPNG
	o.Size = VerifySize
	b, _, err := Render(content, o)
	var small *TooSmallError
	if errors.As(err, &small) {
		o.Size = small.Min
		b, _, err = Render(content, o)
	}
	if err != nil {
		return err
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if o.Margin == 0 && o.Frame == nil {
		img = onBorder(img, image.NewUniform(opaque(o.BG)), o.Size/8)
	}
	got, err := Decode(img)
	if err != nil || got != content {
		return ErrUnreadable
	}
	return nil
}

// Decode reads a QR code from img as a phone's scanner would (gozxing,
// trying harder); it is exported for the tests of other packages.
func Decode(img image.Image) (string, error) {
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		return "", err
	}
	hints := map[gozxing.DecodeHintType]interface{}{gozxing.DecodeHintType_TRY_HARDER: true}
	res, err := gozxingqr.NewQRCodeReader().Decode(bmp, hints)
	if err != nil {
		return "", err
	}
	return res.GetText(), nil
}

func onBorder(img image.Image, bg image.Image, pad int) image.Image {
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx()+2*pad, b.Dy()+2*pad))
	draw.Draw(dst, dst.Bounds(), bg, image.Point{}, draw.Src)
	draw.Draw(dst, b.Sub(b.Min).Add(image.Pt(pad, pad)), img, b.Min, draw.Src)
	return dst
}
