// Package qrzip writes the QR codes of many links as one ZIP archive
// (docs/api.md#qr-designs), for the API's GET /api/v1/links/qr.zip and the UI's
// download of a filtered list. The archive is streamed: links are read
// with their designs a batch at a time and each code is rendered through
// the process's QR server (its render bound and cache) and written before
// the next is drawn, so memory stays flat in the number of codes.
package qrzip

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/qrserve"
)

// MaxLinks bounds one archive.
const MaxLinks = 1000

// batch is how many links are read (with their designs) at a time.
const batch = 100

// busyWait bounds how long one file waits for a render slot in all,
// retrying after each *qrserve.BusyError: the archive is already
// streaming, so waiting beats a truncated download.
const busyWait = 2 * time.Minute

// Request is what to put in an archive: the links Search selects (its
// Limit and Before are the writer's), drawn with Query laid over each
// link's design.
type Request struct {
	Search link.Search
	Query  qr.Query
}

// Format is the archive's file format (png unless the query names one).
func (r Request) Format() qr.Format {
	if f := r.Query.Format(); f != "" {
		return f
	}
	return qr.FormatPNG
}

// Writer makes archives.
type Writer struct {
	Links   *link.Service
	Designs *qrdesign.Service
	QR      *qrserve.Server
}

// TooManyError is a selection beyond MaxLinks; Count says how many.
type TooManyError struct{ Count int64 }

// Error names the count and the limit.
func (e *TooManyError) Error() string {
	return "the filters select " + itoa(e.Count) + " links; a ZIP holds at most " + itoa(MaxLinks)
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// Check counts the selection: a *TooManyError beyond MaxLinks.
func (zw *Writer) Check(ctx context.Context, ws uuid.UUID, req Request) error {
	count := req.Search
	count.Limit, count.Before, count.NoTotal = 1, nil, false
	res, err := zw.Links.Search(ctx, ws, count)
	if err != nil {
		return err
	}
	if res.Total > MaxLinks {
		return &TooManyError{Count: res.Total}
	}
	return nil
}

// Write streams the archive. start is called once, right before the
// first byte, and returns where to write (an HTTP handler sends its
// headers there); an error before it is an ordinary error, after it the
// archive is broken and the caller must abort the response. Started
// reports which.
//
// The archive is admitted by the Archive budget (internal/budget) first:
// its refusal is returned before anything is written.
func (zw *Writer) Write(ctx context.Context, ws uuid.UUID, req Request, start func() io.Writer) (started bool, err error) {
	release, err := budget.Admit(ctx, budget.Archive, ws, 1)
	if err != nil {
		return false, err
	}
	defer release()
	def, err := zw.Designs.Default(ctx, ws)
	if err != nil {
		return false, err
	}
	s := &stream{zw: zw, ws: ws, req: req, def: def, start: start}
	err = s.run(ctx)
	return s.z != nil, err
}

// WriteResponse is Write to an HTTP response: the archive's headers
// (Content-Type, an attachment named after the format, no caching) and 200
// go out right before its first byte, as the API and the UI both answer.
func (zw *Writer) WriteResponse(ctx context.Context, ws uuid.UUID, req Request, w http.ResponseWriter) (started bool, err error) {
	return zw.Write(ctx, ws, req, func() io.Writer {
		h := w.Header()
		h.Set("Content-Type", "application/zip")
		h.Set("Content-Disposition", `attachment; filename="qr-codes-`+string(req.Format())+`.zip"`)
		h.Set("Cache-Control", "private, no-store")
		w.WriteHeader(http.StatusOK)
		return w
	})
}

type stream struct {
	zw    *Writer
	ws    uuid.UUID
	req   Request
	def   qrdesign.Design
	start func() io.Writer
	z     *zip.Writer
}

func (s *stream) run(ctx context.Context) error {
	page := s.req.Search
	page.Limit, page.NoTotal, page.Before = batch, true, nil
	for {
		res, err := s.zw.Links.Search(ctx, s.ws, page)
		if err != nil {
			return err
		}
		if err := s.batch(ctx, res.Links); err != nil {
			return err
		}
		if !res.HasMore || len(res.Links) == 0 {
			break
		}
		last := res.Links[len(res.Links)-1].ID
		page.Before = &last
	}
	s.open()
	return s.z.Close()
}

func (s *stream) open() {
	if s.z == nil {
		s.z = zip.NewWriter(s.start())
	}
}

func (s *stream) batch(ctx context.Context, links []link.Link) error {
	ids := make([]uuid.UUID, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	designs, err := s.zw.Designs.ForLinks(ctx, s.ws, ids, s.def)
	if err != nil {
		return err
	}
	for _, l := range links {
		b, err := s.render(ctx, l, designs[l.ID])
		if err != nil {
			return err
		}
		s.open()
		if err := s.add(l, b); err != nil {
			return err
		}
	}
	return nil
}

// render draws one link's code under the render bound, at the smallest
// size that holds it when the asked size is too small for this one.
func (s *stream) render(ctx context.Context, l link.Link, d qrdesign.Design) ([]byte, error) {
	o, err := s.req.Query.Apply(d.Options())
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(busyWait)
	for {
		b, err := s.zw.QR.RenderBulk(ctx, s.ws, l.QRContent(), o)
		var small *qr.TooSmallError
		var busy *qrserve.BusyError
		switch {
		case errors.As(err, &small):
			o.Size = small.Min
			continue
		case errors.As(err, &busy) && time.Now().Before(deadline):
			if werr := wait(ctx, busy.RetryAfter); werr != nil {
				return nil, werr
			}
			continue
		}
		return b, err
	}
}

func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FileName is a link's file in the archive without extension: its code,
// or <domain>_<code> on a custom domain.
func FileName(l link.Link) string {
	if l.Domain != nil {
		return l.Domain.String() + "_" + l.Code.String()
	}
	return l.Code.String()
}

// add writes one file. PNG and PDF are stored (already compressed), SVG
// deflated.
func (s *stream) add(l link.Link, b []byte) error {
	f := s.req.Format()
	method := zip.Store
	if f == qr.FormatSVG {
		method = zip.Deflate
	}
	w, err := s.z.CreateHeader(&zip.FileHeader{Name: FileName(l) + "." + string(f), Method: method, Modified: l.UpdatedAt.UTC()})
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
