package testkit_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"testing"

	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestDecodeQR checks the decoder helper on many codes, including the ones
// gozxing's detector misses (i = 30 here is one of them), and that it fails
// on an image without a code.
func TestDecodeQR(t *testing.T) {
	t.Parallel()
	for i := range 40 {
		url := fmt.Sprintf("http://127.0.0.1:%d/%07d", 30000+i*7, i*7919)
		b, _, err := qr.Render(url, qr.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if got := testkit.DecodeQR(t, img); got != url {
			t.Fatalf("decoded %q, want %q", got, url)
		}
	}
	rec := &recordingTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		testkit.DecodeQR(rec, image.NewGray(image.Rect(0, 0, 100, 100)))
	}()
	if !rec.failed {
		t.Error("DecodeQR did not fail on a blank image")
	}
}

// recordingTB records Fatalf instead of stopping the test.
type recordingTB struct {
	testing.TB
	failed bool
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fatalf(string, ...any) {
	r.failed = true
	panic("fatal")
}
