package api

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// MaxZipLinks bounds a QR ZIP (CONTRACT.md 10.5).
const MaxZipLinks = 1000

// zipBatch is how many links a ZIP reads (with their designs) at a time:
// memory holds one batch of links and one rendered image, whatever the
// archive's size.
const zipBatch = 100

// zipBusyWait bounds how long one file of a ZIP waits for a render slot
// in all, retrying after each *qrserve.BusyError: the archive is already
// streaming, so waiting beats a truncated download.
const zipBusyWait = 2 * time.Minute

// zipRequest is a parsed GET /api/v1/links/qr.zip.
type zipRequest struct {
	search link.Search
	query  qr.Query // format and size, laid over each link's design
	format qr.Format
}

// parseZipRequest reads the list's filters (q, status, domain), the
// repeatable id, and format and size.
func parseZipRequest(r *http.Request) (zipRequest, error) {
	q, err := query(r)
	if err != nil {
		return zipRequest{}, err
	}
	var errs validate.Errors
	checkKnownParams(q, &errs, "q", "status", "domain", "id", "format", "size")
	repeated := url.Values{}
	for name, vs := range q {
		if name != "id" {
			repeated[name] = vs
		}
	}
	checkOnce(repeated, &errs)
	var zr zipRequest
	if q.Has("domain") {
		h, err := hostname.Parse(q.Get("domain"))
		errs.Check("/query/domain", err)
		zr.search.Domain = &h
	}
	term, err := link.ParseSearchTerm(q.Get("q"))
	errs.Check("/query/q", err)
	state, err := link.ParseState(q.Get("status"))
	errs.Check("/query/status", err)
	zr.search.Term, zr.search.State = term, state
	zr.search.IDs = parseZipIDs(q["id"], &errs)
	opts := url.Values{}
	for _, name := range []string{"format", "size"} {
		if q.Has(name) && len(q[name]) == 1 {
			opts[name] = q[name]
		}
	}
	pq, err := qr.ParseQuery(opts)
	if verrs, ok := err.(validate.Errors); ok {
		errs = append(errs, verrs...)
	}
	zr.query, zr.format = pq, pq.Format()
	if zr.format == "" {
		zr.format = qr.FormatPNG
	}
	return zr, errs.Err()
}

// parseZipIDs reads the repeatable id; ids of other workspaces are valid
// and simply match nothing.
func parseZipIDs(vs []string, errs *validate.Errors) []uuid.UUID {
	if len(vs) == 0 {
		return nil
	}
	if len(vs) > MaxZipLinks {
		errs.Add("/query/id", fmt.Sprintf("is given %d times; a ZIP holds at most %d links", len(vs), MaxZipLinks))
		return nil
	}
	ids := make([]uuid.UUID, 0, len(vs))
	for _, v := range vs {
		id, ok := store.ParseID(store.PrefixLink, v)
		if !ok {
			errs.Add("/query/id", "must be link ids (lnk_…); "+strconv.Quote(truncate(v, 40))+" is not one")
			return nil
		}
		ids = append(ids, id)
	}
	return ids
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// getLinksQRZip answers GET /api/v1/links/qr.zip: the QR codes of the
// links the list's filters select (at most MaxZipLinks), one file per link
// in its own design, streamed as the archive is written.
func (a *API) getLinksQRZip(w http.ResponseWriter, r *http.Request) error {
	zr, err := parseZipRequest(r)
	if err != nil {
		return err
	}
	ctx, ws := r.Context(), auth.FromContext(r.Context()).WorkspaceID
	count := zr.search
	count.Limit = 1
	res, err := a.Links.Search(ctx, ws, count)
	if err != nil {
		return err
	}
	if res.Total > MaxZipLinks {
		var errs validate.Errors
		errs.Add("/query", fmt.Sprintf("the filters select %d links; a ZIP holds at most %d: narrow them (q, status, domain, id)", res.Total, MaxZipLinks))
		return errs
	}
	def, err := a.Designs.Default(ctx, ws)
	if err != nil {
		return err
	}
	z := &zipWriter{a: a, ws: ws, zr: zr, def: def, w: w}
	if err := z.write(ctx); err != nil {
		if !z.started {
			return err
		}
		// The archive is half sent: end the response abruptly so the
		// client sees a failed download, not a complete-looking ZIP.
		a.Log.WarnContext(ctx, "QR ZIP aborted", "request_id", requestid.FromContext(ctx), "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// zipWriter streams one ZIP.
type zipWriter struct {
	a       *API
	ws      uuid.UUID
	zr      zipRequest
	def     qrdesign.Design
	w       http.ResponseWriter
	zw      *zip.Writer
	started bool
}

func (z *zipWriter) write(ctx context.Context) error {
	page := z.zr.search
	page.Limit, page.NoTotal = zipBatch, true
	for {
		res, err := z.a.Links.Search(ctx, z.ws, page)
		if err != nil {
			return err
		}
		if err := z.batch(ctx, res.Links); err != nil {
			return err
		}
		if !res.HasMore || len(res.Links) == 0 {
			break
		}
		last := res.Links[len(res.Links)-1].ID
		page.Before = &last
	}
	if !z.started {
		z.start()
	}
	return z.zw.Close()
}

// start sends the headers: from here on a failure cannot be a problem.
func (z *zipWriter) start() {
	h := z.w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", `attachment; filename="qr-codes-`+string(z.zr.format)+`.zip"`)
	h.Set("Cache-Control", "private, no-store")
	z.w.WriteHeader(http.StatusOK)
	z.zw = zip.NewWriter(z.w)
	z.started = true
}

func (z *zipWriter) batch(ctx context.Context, links []link.Link) error {
	ids := make([]uuid.UUID, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	designs, err := z.a.Designs.ForLinks(ctx, z.ws, ids, z.def)
	if err != nil {
		return err
	}
	for _, l := range links {
		b, err := z.render(ctx, l, designs[l.ID])
		if err != nil {
			return err
		}
		if !z.started {
			z.start()
		}
		if err := z.add(l, b); err != nil {
			return err
		}
	}
	return nil
}

// render draws one link's code under the render bound, at the smallest
// size that holds it when the asked size is too small for this one.
func (z *zipWriter) render(ctx context.Context, l link.Link, d qrdesign.Design) ([]byte, error) {
	o, err := z.zr.query.Apply(d.Options())
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(zipBusyWait)
	for {
		b, err := z.a.QR.Render(ctx, l.QRContent(), o)
		var small *qr.TooSmallError
		var busy *qrserve.BusyError
		switch {
		case errors.As(err, &small):
			o.Size = small.Min
			continue
		case errors.As(err, &busy) && time.Now().Before(deadline):
			if werr := waitCtx(ctx, busy.RetryAfter); werr != nil {
				return nil, werr
			}
			continue
		}
		return b, err
	}
}

// waitCtx waits d or until ctx ends.
func waitCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// add writes one file: <code>.<ext>, or <domain>_<code>.<ext> on a custom
// domain. PNG and PDF are stored (already compressed), SVG deflated.
func (z *zipWriter) add(l link.Link, b []byte) error {
	name := l.Code.String()
	if l.Domain != nil {
		name = l.Domain.String() + "_" + name
	}
	method := zip.Store
	if z.zr.format == qr.FormatSVG {
		method = zip.Deflate
	}
	f, err := z.zw.CreateHeader(&zip.FileHeader{Name: name + "." + string(z.zr.format), Method: method, Modified: l.UpdatedAt.UTC()})
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return err
}
