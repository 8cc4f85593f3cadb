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
// saved (docs/api.md#qr-designs).
const VerifySize = 512

// ErrUnreadable means a design's code does not decode to its content with
// a QR decoder: the API refuses it as qr-unreadable rather than let it be
// printed.
var ErrUnreadable = errors.New("qr: the designed code does not decode")

// Verify renders content with o as a PNG of VerifySize pixels (or the
// smallest size that holds the symbol) and decodes it with gozxing, the
// decoder the tests use too. It returns ErrUnreadable unless the decoded
// text is exactly content. The picture is decoded on a border of bg (what
// margin 0 is for: codes placed on the user's own border). gozxing's
// finder-pattern detector misses a few in a thousand pristine codes, so a
// miss is retried in its pure-barcode mode, which reads the modules of an
// unrotated code directly — from the code without its frame, since that
// mode needs the code alone; only with a quiet zone of at least
// minPureMargin modules, which scanners need to find the code. Both read the modules and correct errors as
// any scanner does, so a design whose logo or style hides too much fails.
func Verify(content string, o Options) error {
	img, err := verifyImage(content, o)
	if err != nil {
		return err
	}
	pad := img.Bounds().Dx() / 8
	if got, err := Decode(onBorder(img, image.NewUniform(opaque(o.BG)), pad)); err == nil && got == content {
		return nil
	}
	if o.Margin < minPureMargin {
		return ErrUnreadable // the frame or the user's border touches the code: no second chance
	}
	if o.Frame != nil {
		o.Frame = nil
		if img, err = verifyImage(content, o); err != nil {
			return err
		}
	}
	if got, err := decodePure(img); err == nil && got == content {
		return nil
	}
	return ErrUnreadable
}

// minPureMargin is the quiet zone below which no second decode is tried.
const minPureMargin = 2

func verifyImage(content string, o Options) (image.Image, error) {
	o.Format = FormatPNG
	o.Size = VerifySize
	b, _, err := Render(content, o)
	var small *TooSmallError
	if errors.As(err, &small) {
		o.Size = small.Min
		b, _, err = Render(content, o)
	}
	if err != nil {
		return nil, err
	}
	return png.Decode(bytes.NewReader(b))
}

// Decode reads a QR code from img as a phone's scanner would (gozxing,
// trying harder); it is exported for the tests of other packages.
func Decode(img image.Image) (string, error) {
	return decodeWith(img, gozxing.DecodeHintType_TRY_HARDER)
}

func decodePure(img image.Image) (string, error) {
	return decodeWith(img, gozxing.DecodeHintType_PURE_BARCODE)
}

func decodeWith(img image.Image, hint gozxing.DecodeHintType) (string, error) {
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		return "", err
	}
	hints := map[gozxing.DecodeHintType]interface{}{hint: true}
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
