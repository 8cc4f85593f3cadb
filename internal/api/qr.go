package api

import (
	"net/http"
	"strings"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/qr"
)

// getLinkQR answers GET /api/v1/links/{id}/qr: a PNG or SVG that encodes
// exactly the link's short_url. Output is deterministic, so the ETag is
// computed from the inputs and a matching If-None-Match is answered with 304
// before anything is rendered.
func (a *API) getLinkQR(w http.ResponseWriter, r *http.Request) error {
	id, err := linkID(r)
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	opts, err := qr.ParseOptions(q)
	if err != nil {
		return err
	}
	l, err := a.Links.Get(r.Context(), auth.FromContext(r.Context()).WorkspaceID, id)
	if err != nil {
		return err
	}
	etag := qr.ETag(l.ShortURL, opts)
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, max-age=3600")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	img, contentType, err := qr.Render(l.ShortURL, opts)
	if err != nil {
		h.Del("ETag")
		h.Del("Cache-Control")
		return err // a size too small for the code is a 422 on /query/size
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Disposition", `inline; filename="`+l.Code.String()+"."+string(opts.Format)+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(img)
	return nil
}

// etagMatches implements If-None-Match's weak comparison (RFC 9110 13.1.2).
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, candidate := range strings.Split(header, ",") {
		c := strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if c == "*" || c == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}
