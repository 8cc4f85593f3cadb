package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// linksPageSize is how many links one page of the Links page shows.
const linksPageSize = 50

// links is the workspace's links page: every live link with its QR code,
// target, scan count and creation time, newest first.
func (u *UI) links(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	var before *uuid.UUID
	if c := r.URL.Query().Get("before"); c != "" {
		id, ok := cursor.Decode(c)
		if !ok {
			u.notFound(w, r)
			return
		}
		before = &id
	}
	list, hasMore, err := u.Links.List(r.Context(), ws.ID, before, linksPageSize)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v := LinksView{Nav: u.nav(w, r, sectionLinks), ShortBase: u.Config.ShortBaseURL.String(), First: before == nil}
	for _, l := range list {
		v.Links = append(v.Links, linkRow(l))
	}
	if hasMore {
		v.Older = "?before=" + cursor.Encode(list[len(list)-1].ID)
	}
	Render(w, r, http.StatusOK, LinksPage(v))
}

// linkRow is the page's own view of a link; it formats the wire ID that
// the QR URLs use.
func linkRow(l link.Link) LinkRow {
	row := LinkRow{
		ID: store.FormatID(store.PrefixLink, l.ID), Code: l.Code.String(), ShortURL: l.ShortURL, TargetURL: l.TargetURL.String(), Status: string(l.Status),
		Scans: strconv.FormatInt(l.ScanCount, 10), CreatedAt: formatDate(l.CreatedAt), LastScan: "no scans yet",
	}
	if l.Title != nil {
		row.Title = l.Title.String()
	}
	if l.LastScannedAt != nil {
		row.LastScan = "last " + formatDate(*l.LastScannedAt)
	}
	if l.ExpiresAt != nil {
		row.Expires = formatTime(*l.ExpiresAt)
	}
	return row
}

// linkQR serves a link's QR code to signed-in members: /w/{ws}/links/{id}/qr.png
// or qr.svg, with the API's options (size, margin, ecc, fg, bg) and
// ?download=1 for an attachment. Conditional requests, caching, the render
// bound and the headers are the QR server's, shared with the API.
func (u *UI) linkQR(format qr.Format) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ws, _ := workspaceFrom(r.Context())
		id, ok := store.ParseID(store.PrefixLink, chi.URLParam(r, "link"))
		if !ok {
			u.notFound(w, r)
			return
		}
		l, err := u.Links.Get(r.Context(), ws.ID, id)
		if u.failed(w, r, err) {
			return
		}
		q := r.URL.Query()
		download := q.Get("download") == "1"
		q.Del("download")
		q.Set("format", string(format))
		opts, err := qr.ParseOptions(q)
		if err != nil {
			u.errorPage(w, r, http.StatusUnprocessableEntity, "Invalid QR code options", err.Error())
			return
		}
		err = u.QR.Serve(w, r, qrserve.Image{Content: l.ShortURL, Name: l.Code.String(), Options: opts, Attachment: download})
		var (
			verrs validate.Errors
			busy  *qrserve.BusyError
		)
		switch {
		case err == nil:
		case errors.As(err, &verrs):
			u.errorPage(w, r, http.StatusUnprocessableEntity, "Invalid QR code options", err.Error())
		case errors.As(err, &busy):
			w.Header().Set("Retry-After", strconv.Itoa(busy.Seconds()))
			u.errorPage(w, r, http.StatusServiceUnavailable, "QR codes are busy",
				"Too many QR codes are being drawn right now. Please try again in "+waitText(busy.RetryAfter)+".")
		case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
			// The browser left while the render was queued; nobody reads an answer.
		default:
			u.serverError(w, r, err)
		}
	}
}
