package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrzip"

	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/validate"
)

// MaxZipLinks bounds a QR ZIP (docs/api.md#qr-designs).
const MaxZipLinks = qrzip.MaxLinks

// parseZipRequest reads the list's filters (q, status, domain, repeatable
// tag), the repeatable id, and format and size.
func parseZipRequest(r *http.Request) (qrzip.Request, error) {
	q, err := query(r)
	if err != nil {
		return qrzip.Request{}, err
	}
	var errs validate.Errors
	checkKnownParams(q, &errs, append([]string{"id", "format", "size"}, link.FilterParams...)...)
	repeated := url.Values{}
	for name, vs := range q {
		if name != "id" && name != "tag" {
			repeated[name] = vs
		}
	}
	checkOnce(repeated, &errs)
	var zr qrzip.Request
	zr.Search = link.ParseFilter(q, "/query", &errs).Search
	zr.Search.IDs = parseZipIDs(q["id"], &errs)
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
	zr.Query = pq
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
		linkID, ok := id.Parse(id.Link, v)
		if !ok {
			errs.Add("/query/id", "must be link ids (lnk_…); "+strconv.Quote(truncate(v, 40))+" is not one")
			return nil
		}
		ids = append(ids, linkID)
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
// in its own design, streamed as the archive is written (package qrzip).
func (a *API) getLinksQRZip(w http.ResponseWriter, r *http.Request) error {
	req, err := parseZipRequest(r)
	if err != nil {
		return err
	}
	ctx, ws := r.Context(), auth.FromContext(r.Context()).WorkspaceID
	zw := &qrzip.Writer{Links: a.Links, Designs: a.Designs, QR: a.QR}
	var many *qrzip.TooManyError
	if err := zw.Check(ctx, ws, req); errors.As(err, &many) {
		var errs validate.Errors
		errs.Add("/query", many.Error()+": narrow them (q, status, domain, tag, id)")
		return errs
	} else if err != nil {
		return err
	}
	started, err := zw.WriteResponse(ctx, ws, req, w)
	if err != nil && started {
		// The archive is half sent: end the response abruptly so the
		// client sees a failed download, not a complete-looking ZIP.
		a.Log.WarnContext(ctx, "QR ZIP aborted", "request_id", requestid.FromContext(ctx), "err", err)
		panic(http.ErrAbortHandler)
	}
	return err
}
