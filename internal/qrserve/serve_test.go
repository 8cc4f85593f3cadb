package qrserve_test

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/validate"
)

const shortURL = "http://127.0.0.1:8080/spring-menu"

func serve(t *testing.T, s *qrserve.Server, img qrserve.Image, header ...string) (*httptest.ResponseRecorder, error) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/qr", nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	return w, s.Serve(w, r, img)
}

// TestServe: the image scans to the content, carries every header the
// contract names, and a repeat with its ETag is a bodiless 304.
func TestServe(t *testing.T) {
	s := qrserve.New(qrserve.Config{})
	o := qr.DefaultOptions()
	o.Size = 300
	img := qrserve.Image{Content: shortURL, Name: "spring-menu", Options: o}
	w, err := serve(t, s, img)
	if err != nil || w.Code != 200 {
		t.Fatalf("serve: %d %v", w.Code, err)
	}
	h := w.Header()
	etag := qr.ETag(shortURL, o)
	if h.Get("Content-Type") != "image/png" || h.Get("Content-Disposition") != `inline; filename="spring-menu.png"` ||
		h.Get("ETag") != etag || h.Get("Cache-Control") != qrserve.CacheControl {
		t.Fatalf("headers %v", h)
	}
	decoded, err := png.Decode(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if decoded.Bounds().Dx() != 300 {
		t.Fatalf("bounds %v", decoded.Bounds())
	}
	if got := testkit.DecodeQR(t, decoded); got != shortURL {
		t.Fatalf("decoded %q", got)
	}

	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		w, err = serve(t, s, img, "If-None-Match", inm)
		if err != nil || w.Code != 304 || w.Body.Len() != 0 || w.Header().Get("ETag") != etag || w.Header().Get("Content-Type") != "" {
			t.Fatalf("If-None-Match %s: %d, %d bytes, %v, %v", inm, w.Code, w.Body.Len(), w.Header(), err)
		}
	}
	if w, _ = serve(t, s, img, "If-None-Match", `"qr1-stale"`); w.Code != 200 {
		t.Fatalf("stale If-None-Match: %d", w.Code)
	}

	img.Options.Format, img.Attachment = qr.FormatSVG, true
	w, err = serve(t, s, img)
	if err != nil || w.Header().Get("Content-Type") != "image/svg+xml" || w.Header().Get("Content-Disposition") != `attachment; filename="spring-menu.svg"` {
		t.Fatalf("svg download: %v %v", err, w.Header())
	}
}

// TestServe304WhileSaturated: a conditional request costs no render, so it
// is answered even when rendering is saturated; an uncached one is refused
// with nothing written.
func TestServe304WhileSaturated(t *testing.T) {
	s := qrserve.New(qrserve.Config{Renders: 1, Waiting: 1, MaxWait: time.Millisecond})
	release, err := s.Reserve(context.Background(), uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	img := qrserve.Image{Content: shortURL, Name: "x", Options: qr.DefaultOptions()}
	w, err := serve(t, s, img, "If-None-Match", qr.ETag(shortURL, img.Options))
	if err != nil || w.Code != 304 {
		t.Fatalf("304 while saturated: %d %v", w.Code, err)
	}
	w, err = serve(t, s, img)
	var busy *qrserve.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, qrserve.ErrBusy) || busy.Seconds() < 1 {
		t.Fatalf("uncached while saturated: %v", err)
	}
	if len(w.Header()) != 0 || w.Body.Len() != 0 || w.Code != 200 || w.Flushed {
		t.Fatalf("an error left a response behind: %v, %d bytes", w.Header(), w.Body.Len())
	}
}

// TestServeTooSmall: an option the code cannot meet is a field error for
// the edge to answer, with nothing written.
func TestServeTooSmall(t *testing.T) {
	s := qrserve.New(qrserve.Config{})
	o := qr.DefaultOptions()
	o.Size, o.Margin, o.ECC = 64, 16, qr.ECCHigh
	w, err := serve(t, s, qrserve.Image{Content: shortURL, Name: "x", Options: o})
	var verrs validate.Errors
	if !errors.As(err, &verrs) || verrs[0].Pointer != "/query/size" || len(w.Header()) != 0 {
		t.Fatalf("too small: %v, headers %v", err, w.Header())
	}
}
