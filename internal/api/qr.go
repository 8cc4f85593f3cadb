package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/store"
)

// getLinkQR answers GET /api/v1/links/{id}/qr: a PNG or SVG that encodes
// exactly the link's short_url. Options are checked before the link is
// loaded; conditional requests, caching, the render bound and the headers
// are the QR server's, shared with the UI's image routes.
func (a *API) getLinkQR(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, store.PrefixLink)
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
	err = a.QR.Serve(w, r, qrserve.Image{Content: l.QRContent(), Name: l.Code.String(), Options: opts})
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return nil // the client left while queued; nobody reads an answer
	}
	return err // a size too small for the code is a 422 on /query/size; busy is a 503
}
