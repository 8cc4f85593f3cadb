package testkit

import (
	"context"
	"errors"
	"image"
	"image/draw"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/linkqr/linkqr/internal/qrserve"
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

// SaturateQR takes every render slot of s, so that any render not served
// from its cache waits out the queue and is refused with *qrserve.BusyError
// — the state heavy QR traffic produces, reached without depending on how
// fast a render is. It returns a function that gives the slots back (also
// called when the test ends; calling it twice is harmless).
func SaturateQR(t testing.TB, s *qrserve.Server) (release func()) {
	t.Helper()
	var held []func()
	for {
		// A request that finds every slot taken queues; it is cancelled
		// after a moment, which frees its queue place again.
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		r, err := s.Reserve(ctx, uuid.Nil)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("testkit: saturate QR rendering: %v", err)
		}
		held = append(held, r)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			for _, r := range held {
				r()
			}
		})
	}
	t.Cleanup(release)
	return release
}
