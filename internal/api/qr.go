package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrserve"
)

// getLinkQR answers GET /api/v1/links/{id}/qr: a PNG, SVG or PDF that
// encodes exactly the link's QR text, in the link's design (its own, else
// the workspace default, else the 6.3 defaults) with the query's
// parameters laid over it for this request. The query is checked before
// the link is loaded; conditional requests, caching, the render bound and
// the headers are the QR server's, shared with the UI's image routes.
func (a *API) getLinkQR(w http.ResponseWriter, r *http.Request) error {
	linkID, err := pathID(r, id.Link)
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	pq, err := qr.ParseQuery(q)
	if err != nil {
		return err
	}
	ws := auth.FromContext(r.Context()).WorkspaceID
	l, err := a.Links.Get(r.Context(), ws, linkID)
	if err != nil {
		return err
	}
	d, err := a.Designs.ForLink(r.Context(), ws, l)
	if err != nil {
		return err
	}
	opts, err := pq.Apply(d.Options())
	if err != nil {
		return err
	}
	err = a.QR.Serve(w, r, qrserve.Image{Content: l.QRContent(), Name: l.Code.String(), Options: opts})
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return nil // the client left while queued; nobody reads an answer
	}
	return err // a size too small for the code is a 422 on /query/size; busy is a 503
}
