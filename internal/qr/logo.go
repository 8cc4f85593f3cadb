package qr

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"image"
	"image/draw"
	_ "image/jpeg" // logos may be uploaded as JPEG
	"image/png"
	"strings"
	"sync/atomic"

	xdraw "golang.org/x/image/draw"

	"github.com/linkqr/linkqr/internal/validate"
)

// Logo limits (docs/api.md#qr-designs). MaxLogoBytes bounds the decoded upload,
// MaxLogoPixels each edge of it. StoredLogoEdge is the longest edge the
// server keeps: larger logos are scaled down once at upload (a logo covers
// at most 40 % of a code's edge, so 1024 px stay sharp on a 2,500 px print).
const (
	MaxLogoBytes   = 256 << 10
	MaxLogoPixels  = 2048
	StoredLogoEdge = 1024
)

// Logo is a decoded logo in the server's own encoding: always a PNG the
// server wrote, never the bytes a client sent.
type Logo struct {
	img  image.Image
	png  []byte
	sum  [sha256.Size]byte
	w, h int
	// scaled is the logo at the size it was last drawn: the codes of one
	// design (a ZIP of a workspace's links) draw it at one size again and
	// again, and scaling it was a tenth of a designed render.
	scaled atomic.Pointer[image.RGBA]
}

// at returns the logo scaled to w×h pixels, from the last draw when it
// had that size. The image is shared: do not modify it.
func (l *Logo) at(w, h int) *image.RGBA {
	if s := l.scaled.Load(); s != nil && s.Bounds().Dx() == w && s.Bounds().Dy() == h {
		return s
	}
	s := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(s, s.Bounds(), l.img, l.img.Bounds(), xdraw.Src, nil)
	l.scaled.Store(s)
	return s
}

// Refusals of a logo, each reported at /logo.
const (
	detailLogoURI    = "must be a data:image/png;base64,… or data:image/jpeg;base64,… URI, or null"
	detailLogoBase64 = "is not valid base64"
	detailLogoBytes  = "must be at most 256 KiB (262144 bytes) once decoded"
	detailLogoImage  = "does not decode as a PNG or JPEG image"
	detailLogoPixels = "must be at most 2048 × 2048 pixels"
	detailLogoKind   = "must be a PNG or JPEG image (SVG, GIF, WebP and others are refused)"
)

// ParseLogoDataURI decodes a logo upload: a data URI of a PNG or JPEG
// of at most MaxLogoBytes and MaxLogoPixels per edge. The image is
// decoded (the size is checked from the header first, so a decompression
// bomb costs nothing), scaled down to StoredLogoEdge when larger, and
// re-encoded as PNG. Every refusal is a validate.Reject for /logo.
func ParseLogoDataURI(uri string) (*Logo, error) {
	header, payload, ok := strings.Cut(uri, ",")
	if !ok || !strings.HasPrefix(header, "data:") {
		return nil, validate.Reject(detailLogoURI)
	}
	mediaType, isBase64 := strings.CutSuffix(strings.TrimPrefix(header, "data:"), ";base64")
	mediaType = strings.ToLower(mediaType)
	if mediaType != "image/png" && mediaType != "image/jpeg" {
		if strings.HasPrefix(mediaType, "image/") {
			return nil, validate.Reject(detailLogoKind)
		}
		return nil, validate.Reject(detailLogoURI)
	}
	if !isBase64 {
		return nil, validate.Reject(detailLogoURI)
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > MaxLogoBytes+3 {
		return nil, validate.Reject(detailLogoBytes)
	}
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, validate.Reject(detailLogoBase64)
	}
	if len(raw) > MaxLogoBytes {
		return nil, validate.Reject(detailLogoBytes)
	}
	return decodeLogo(raw, mediaType)
}

// ParseLogo decodes an uploaded logo file (the UI's upload) with the
// checks of ParseLogoDataURI, its type read from its bytes.
func ParseLogo(raw []byte) (*Logo, error) {
	if len(raw) > MaxLogoBytes {
		return nil, validate.Reject(detailLogoBytes)
	}
	_, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil || (format != "png" && format != "jpeg") {
		return nil, validate.Reject(detailLogoKind)
	}
	return decodeLogo(raw, "image/"+format)
}

func decodeLogo(raw []byte, mediaType string) (*Logo, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return nil, validate.Reject(detailLogoImage)
	}
	if "image/"+format != mediaType {
		return nil, validate.Reject(detailLogoImage + " of the type the URI names")
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoPixels || cfg.Height > MaxLogoPixels {
		return nil, validate.Reject(detailLogoPixels)
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, validate.Reject(detailLogoImage)
	}
	return encodeLogo(shrink(img, StoredLogoEdge))
}

// shrink scales img down so its longer edge is at most edge pixels, into
// non-premultiplied RGBA (what PNG stores).
func shrink(img image.Image, edge int) *image.NRGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > edge || h > edge {
		if w >= h {
			w, h = edge, max(1, h*edge/w)
		} else {
			w, h = max(1, w*edge/h), edge
		}
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	if w == b.Dx() && h == b.Dy() {
		draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Src)
		return dst
	}
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, b, xdraw.Src, nil)
	return dst
}

func encodeLogo(img *image.NRGBA) (*Logo, error) {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img); err != nil {
		return nil, err
	}
	b := img.Bounds()
	return &Logo{img: img, png: buf.Bytes(), sum: sha256.Sum256(buf.Bytes()), w: b.Dx(), h: b.Dy()}, nil
}

// StoredLogo reads back a logo the server encoded (ParseLogoDataURI's
// PNG, from the database).
func StoredLogo(pngBytes []byte) (*Logo, error) {
	img, err := png.Decode(bytes.NewReader(pngBytes))
	if err != nil {
		return nil, errors.Join(errors.New("qr: stored logo does not decode"), err)
	}
	b := img.Bounds()
	return &Logo{img: img, png: pngBytes, sum: sha256.Sum256(pngBytes), w: b.Dx(), h: b.Dy()}, nil
}

// PNG is the server's encoding of the logo, what is stored and embedded.
// The slice is shared: do not modify it.
func (l *Logo) PNG() []byte { return l.png }

// Width and Height are the stored logo's pixels.
func (l *Logo) Width() int { return l.w }

// Height is the stored logo's height in pixels.
func (l *Logo) Height() int { return l.h }

// Bytes is the size of the stored PNG.
func (l *Logo) Bytes() int { return len(l.png) }
