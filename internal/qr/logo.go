package qr

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/draw"
	_ "image/jpeg" // logos may be uploaded as JPEG
	"image/png"
	"strings"
	"sync"
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
func ParseLogoDataURI(uri string) (*Logo, error) { return ParseLogoDataURIAdmitted(uri, nil) }

// Admit is asked, before a logo is decoded, to admit the decode's cost in
// bytes (LogoCost); an error refuses it and is returned as it is. The
// caller ends the admission when it no longer holds the logo. nil admits
// everything.
type Admit func(cost int64) error

// ParseLogoDataURIAdmitted is ParseLogoDataURI with the decode admitted
// by admit first.
func ParseLogoDataURIAdmitted(uri string, admit Admit) (*Logo, error) {
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
	return decodeLogo(raw, mediaType, admit)
}

// ParseLogo decodes an uploaded logo file (the UI's upload) with the
// checks of ParseLogoDataURI, its type read from its bytes.
func ParseLogo(raw []byte) (*Logo, error) { return ParseLogoAdmitted(raw, nil) }

// ParseLogoAdmitted is ParseLogo with the decode admitted by admit first.
func ParseLogoAdmitted(raw []byte, admit Admit) (*Logo, error) {
	if len(raw) > MaxLogoBytes {
		return nil, validate.Reject(detailLogoBytes)
	}
	_, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil || (format != "png" && format != "jpeg") {
		return nil, validate.Reject(detailLogoKind)
	}
	return decodeLogo(raw, "image/"+format, admit)
}

func decodeLogo(raw []byte, mediaType string, admit Admit) (*Logo, error) {
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
	if admit != nil {
		if err := admit(LogoCost(raw, cfg)); err != nil {
			return nil, err
		}
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, validate.Reject(detailLogoImage)
	}
	return encodeLogo(shrink(img, StoredLogoEdge))
}

// LogoCost estimates, from the header alone, the bytes decoding raw (whose
// image.DecodeConfig is cfg) and storing it take: its pixels × channels ×
// bytes per sample as Go's decoder holds them (a PNG's bit depth and
// colour type read from its IHDR: 16-bit samples take two bytes, RGB is
// held as RGBA; a JPEG's components, CMYK four), plus the stored copy
// (at most StoredLogoEdge², four bytes a pixel) and its PNG encoding. A
// 2048 × 2048 16-bit RGBA PNG costs 32 MiB + 4 MiB + change, whatever
// its file's size.
func LogoCost(raw []byte, cfg image.Config) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	perPixel := int64(4)
	if len(raw) >= 26 && bytes.HasPrefix(raw, []byte("\x89PNG\r\n\x1a\n")) && string(raw[12:16]) == "IHDR" {
		depth, colour := raw[24], raw[25]
		channels := map[byte]int64{0: 1, 2: 4, 3: 1, 4: 4, 6: 4}[colour] // as decoded: gray, RGBA, paletted, NRGBA, NRGBA
		if channels == 0 {
			channels = 4
		}
		perPixel = channels
		if depth == 16 {
			perPixel *= 2
		}
	} else if cfg.ColorModel == color.GrayModel {
		perPixel = 1
	}
	sw, sh := min(int64(cfg.Width), StoredLogoEdge), min(int64(cfg.Height), StoredLogoEdge)
	stored := sw * sh * 4
	return px*perPixel + 2*stored + int64(len(raw))
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
// PNG, from the database). The decoded logos of the last storedLogos
// distinct PNGs are kept and shared, so that a design read for every QR
// request of a link does not decode its logo (up to 4 MiB) each time.
func StoredLogo(pngBytes []byte) (*Logo, error) {
	if l := stored.get(pngBytes); l != nil {
		return l, nil
	}
	img, err := png.Decode(bytes.NewReader(pngBytes))
	if err != nil {
		return nil, errors.Join(errors.New("qr: stored logo does not decode"), err)
	}
	b := img.Bounds()
	l := &Logo{img: img, png: pngBytes, sum: sha256.Sum256(pngBytes), w: b.Dx(), h: b.Dy()}
	stored.put(l)
	return l, nil
}

// storedLogos bounds the shared decoded logos: each holds at most
// StoredLogoEdge² pixels and its last scaled copy.
const storedLogos = 8

// stored is the process's cache of decoded stored logos.
var stored = &logoCache{byPNG: map[string]*Logo{}}

type logoCache struct {
	mu    sync.Mutex
	byPNG map[string]*Logo
	order []string // oldest first
}

func (c *logoCache) get(pngBytes []byte) *Logo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byPNG[string(pngBytes)]
}

func (c *logoCache) put(l *Logo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := string(l.png)
	if _, ok := c.byPNG[k]; ok {
		return
	}
	if len(c.order) >= storedLogos {
		delete(c.byPNG, c.order[0])
		c.order = c.order[1:]
	}
	c.byPNG[k] = l
	c.order = append(c.order, k)
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
