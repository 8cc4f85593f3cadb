package qr

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"strconv"

	"github.com/linkqr/linkqr/internal/validate"
)

// RendererVersion is mixed into every ETag. Bump it whenever the output for
// the same content and options may change (drawing code, PNG settings, or an
// upgrade of the QR encoder, which may pick another mask), so caches holding
// the old bytes under a strong ETag are invalidated.
const RendererVersion = 1

// ErrTooSmall means the requested PNG size cannot hold the symbol plus its
// margin at one pixel per module. Test for it with errors.Is; the concrete
// error is a *TooSmallError carrying the minimum.
var ErrTooSmall = errors.New("qr: size too small for the code")

// TooSmallError is the detailed form of ErrTooSmall. It also unwraps to a
// validate.Errors with pointer /query/size, so an API that maps
// validate.Errors to 422 validation-failed needs no special case.
type TooSmallError struct {
	Size int // the size asked for
	Min  int // the smallest size that fits: modules + 2*margin
}

// Error names the minimum, so the message alone tells the user what to ask for.
func (e *TooSmallError) Error() string {
	return "qr: size " + strconv.Itoa(e.Size) + " is too small for this code; at least " +
		strconv.Itoa(e.Min) + " is needed"
}

// Unwrap exposes both ErrTooSmall (for errors.Is) and the field error (for
// errors.As into validate.Errors).
func (e *TooSmallError) Unwrap() []error {
	return []error{ErrTooSmall, e.FieldErrors()}
}

// FieldErrors is the 422 body's errors[] entry for this failure.
func (e *TooSmallError) FieldErrors() validate.Errors {
	return validate.Errors{{
		Pointer: "/query/size",
		Detail: "is too small for this code at this margin and ecc; it must be at least " +
			strconv.Itoa(e.Min),
	}}
}

// Render encodes exactly content and draws it as o.Format, returning the
// bytes and their Content-Type. Invalid options return validate.Errors; a
// PNG Size too small for the symbol returns a *TooSmallError (ErrTooSmall);
// content the QR standard cannot hold returns a plain wrapped error. The
// output is a pure function of (content, o), which is what makes ETag valid.
func Render(content string, o Options) ([]byte, string, error) {
	if err := o.Validate(); err != nil {
		return nil, "", err
	}
	o = o.withDesignRules()
	m, err := encode(content, o.ECC)
	if err != nil {
		return nil, "", err
	}
	if o.Format == FormatPDF || o.styled() {
		b, err := renderScene(layout(m, o))
		return b, o.Format.ContentType(), err
	}
	if o.Format == FormatSVG {
		return renderSVG(m, o), o.Format.ContentType(), nil
	}
	b, err := renderPNG(m, o)
	if err != nil {
		return nil, "", err
	}
	return b, o.Format.ContentType(), nil
}

// renderScene draws a styled scene (or any PDF) in o.Format.
func renderScene(s scene) ([]byte, error) {
	switch s.o.Format {
	case FormatPDF:
		return renderPDF(s)
	case FormatSVG:
		return renderStyledSVG(s)
	}
	return renderStyledPNG(s)
}

// hashDesign adds the design's fields to an ETag's hash. Plain options
// add nothing, so their ETags are those of the 6.3 renderer.
func hashDesign(h hash.Hash, o Options) {
	b := make([]byte, 0, 96)
	b = append(b, 1)
	b = append(b, o.Modules...)
	b = append(b, 0)
	if o.Logo != nil {
		b = append(b, 'L')
		b = append(b, o.Logo.sum[:]...)
	}
	if o.Frame != nil {
		b = append(b, 'F', o.Frame.Color.R, o.Frame.Color.G, o.Frame.Color.B)
		b = binary.BigEndian.AppendUint32(b, uint32(len(o.Frame.Text.s)))
		b = append(b, o.Frame.Text.s...)
	}
	h.Write(b)
}

// ETag returns a strong, quoted entity tag for Render(content, o) without
// rendering: a hash of RendererVersion, every option and the content. A
// handler can therefore answer If-None-Match with 304 before spending CPU on
// encoding and compression. Alpha is excluded because Render ignores it.
func ETag(content string, o Options) string {
	h := sha256.New()
	var buf [64]byte
	b := buf[:0]
	b = binary.BigEndian.AppendUint32(b, RendererVersion)
	b = append(b, o.Format...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(o.Size))
	b = binary.BigEndian.AppendUint32(b, uint32(o.Margin))
	b = append(b, o.ECC...)
	b = append(b, 0, o.FG.R, o.FG.G, o.FG.B, o.BG.R, o.BG.G, o.BG.B)
	b = binary.BigEndian.AppendUint64(b, uint64(len(content)))
	h.Write(b)
	if o = o.withDesignRules(); o.styled() {
		hashDesign(h, o)
	}
	h.Write([]byte(content))
	var sum [sha256.Size]byte
	return `"qr` + strconv.Itoa(RendererVersion) + "-" + hex.EncodeToString(h.Sum(sum[:0])[:16]) + `"`
}
