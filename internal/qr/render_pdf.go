package qr

import (
	"bytes"
	"image/color"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/goregular"
)

// PDFWidthMM is the width of a PDF code's page: 100 mm, a size printers
// and layout programs take as it is or scale without loss (every module
// is a vector shape).
const PDFWidthMM = 100.0

// pdfEpoch fixes the document's dates, so the same design always gives
// the same bytes (and the ETag stays true).
var pdfEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// renderPDF draws a scene on one page: rectangles, circles and rounded
// rectangles for the modules (no raster of the code), the logo as the
// server's PNG, the frame's text in embedded Go Regular.
func renderPDF(s scene) ([]byte, error) {
	u := PDFWidthMM / s.w // millimetres per module
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "mm", Size: fpdf.SizeType{Wd: PDFWidthMM, Ht: s.h * u}})
	pdf.SetCreationDate(pdfEpoch)
	pdf.SetModificationDate(pdfEpoch)
	pdf.SetCatalogSort(true)
	pdf.SetMargins(0, 0, 0)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetTitle("QR code", true)
	pdf.SetCreator("linkqr", true)
	pdf.AddPage()

	rect := func(b box, c color.RGBA) {
		setFill(pdf, c)
		pdf.Rect(b.x*u, b.y*u, b.w*u, b.h*u, "F")
	}
	if s.o.Frame != nil {
		rect(box{0, 0, s.w, s.h}, s.o.Frame.Color)
		rect(s.inner, s.o.BG)
	} else {
		rect(box{0, 0, s.w, s.h}, s.o.BG)
	}
	setFill(pdf, s.o.FG)
	s.shapes(func(sh shape) {
		switch sh.kind {
		case shapeDot:
			pdf.Circle((sh.x+0.5)*u, (sh.y+0.5)*u, 0.5*u, "F")
		case shapeRounded:
			pdf.RoundedRect(sh.x*u, sh.y*u, sh.w*u, u, roundRadius*u, "1234", "F")
		default:
			pdf.Rect(sh.x*u, sh.y*u, sh.w*u, u, "F")
		}
	})
	if s.o.Logo != nil {
		opts := fpdf.ImageOptions{ImageType: "PNG"}
		pdf.RegisterImageOptionsReader("logo", opts, bytes.NewReader(s.o.Logo.png))
		pdf.ImageOptions("logo", s.logo.x*u, s.logo.y*u, s.logo.w*u, s.logo.h*u, false, opts, 0, "")
	}
	if s.o.Frame != nil {
		if err := pdfText(pdf, s, u); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func setFill(pdf *fpdf.Fpdf, c color.RGBA) { pdf.SetFillColor(int(c.R), int(c.G), int(c.B)) }

// pdfText sets the frame's text centred on its baseline.
func pdfText(pdf *fpdf.Fpdf, s scene, u float64) error {
	tl, err := s.layoutText()
	if err != nil {
		return err
	}
	pdf.AddUTF8FontFromBytes("go", "", goregular.TTF)
	pdf.SetFont("go", "", tl.size*u*72/25.4)
	pdf.SetTextColor(int(s.o.BG.R), int(s.o.BG.G), int(s.o.BG.B))
	text := s.o.Frame.Text.String()
	w := pdf.GetStringWidth(text)
	pdf.Text(tl.cx*u-w/2, tl.base*u, text)
	return pdf.Error()
}
