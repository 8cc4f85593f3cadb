package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/qrzip"
	"github.com/linkqr/linkqr/internal/validate"
)

// sectionQRStyle is Settings → QR style (every member: links are every
// member's business).
const sectionQRStyle = "qr-style"

// QRStyleView is Settings → QR style: the workspace's default design.
type QRStyleView struct {
	Nav  NavModel
	QR   qrDesign
	Path string // "/w/ws_…/settings/qr"
	Set  bool   // the workspace has a default of its own
}

// qrStyle shows the workspace default in the designer.
func (u *UI) qrStyle(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	d, err := u.Designs.Default(r.Context(), ws.ID)
	if u.failed(w, r, err) {
		return
	}
	u.renderQRStyle(w, r, http.StatusOK, parseQRDesign(r.URL.Query(), d), d.UpdatedAt != nil)
}

func (u *UI) renderQRStyle(w http.ResponseWriter, r *http.Request, status int, d qrDesign, set bool) {
	ws, _ := workspaceFrom(r.Context())
	v := QRStyleView{QR: d, Path: "/w/" + ws.ExternalID() + "/settings/qr", Set: set}
	v.Nav = u.nav(w, r, sectionQRStyle)
	Render(w, r, status, QRStylePage(v))
}

// qrStylePreview draws the workspace default (with the designer's
// parameters) for a sample short URL.
func (u *UI) qrStylePreview(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	d, err := u.Designs.Default(r.Context(), ws.ID)
	if u.failed(w, r, err) {
		return
	}
	q := r.URL.Query()
	q.Set("format", "svg")
	opts, err := previewOptions(q, d)
	if err != nil {
		u.errorPage(w, r, http.StatusUnprocessableEntity, "Invalid QR code options", err.Error())
		return
	}
	err = u.QR.Serve(w, r, qrserve.Image{Workspace: ws.ID, Content: u.Designs.Sample, Name: "qr-style", Options: opts})
	u.qrServeFailed(w, r, err)
}

// qrServeFailed answers a QR server's refusal (nothing when err is nil):
// options the code cannot meet, saturation (429 when the workspace has
// its share of renders running, 503 when the server is busy, both with
// Retry-After), or the browser having left while the render was queued.
func (u *UI) qrServeFailed(w http.ResponseWriter, r *http.Request, err error) {
	var (
		verrs validate.Errors
		busy  *qrserve.BusyError
	)
	switch {
	case err == nil:
	case errors.As(err, &verrs):
		u.errorPage(w, r, http.StatusUnprocessableEntity, "Invalid QR code options", err.Error())
	case errors.As(err, &busy) && busy.Status() == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(busy.Seconds()))
		u.errorPage(w, r, http.StatusTooManyRequests, "Too much at once",
			"This workspace already has its share of QR codes being drawn. Please try again in "+waitText(busy.RetryAfter)+", when they are done.")
	case errors.As(err, &busy):
		w.Header().Set("Retry-After", strconv.Itoa(busy.Seconds()))
		u.errorPage(w, r, http.StatusServiceUnavailable, "QR codes are busy",
			"Too many QR codes are being drawn right now. Please try again in "+waitText(busy.RetryAfter)+".")
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// Nobody reads an answer.
	default:
		u.serverError(w, r, err)
	}
}

// qrStyleSave saves the workspace default, proven to scan like the API's
// PUT /api/v1/qr/design.
func (u *UI) qrStyleSave(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	base, err := u.Designs.Default(r.Context(), ws.ID)
	if u.failed(w, r, err) {
		return
	}
	upd, view, release, err := designForm(r, base, ws.ID)
	defer release()
	if err == nil {
		_, err = u.Designs.PutDefault(r.Context(), ws.ID, upd)
	}
	if err != nil {
		if !designErrors(&view, err) {
			u.failed(w, r, err)
			return
		}
		u.renderQRStyle(w, r, http.StatusUnprocessableEntity, view, base.UpdatedAt != nil)
		return
	}
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/settings/qr", flashOK, "QR style saved: every link without a design of its own uses it now.")
}

// linksQRZip downloads the QR codes of the links page's filter (q,
// status, domain) as a ZIP, each link in its own design.
func (u *UI) linksQRZip(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	q := r.URL.Query()
	var (
		req  qrzip.Request
		errs validate.Errors
	)
	term, err := link.ParseSearchTerm(q.Get("q"))
	errs.Check("/q", err)
	state, err := link.ParseState(q.Get("status"))
	errs.Check("/status", err)
	req.Search.Term, req.Search.State = term, state
	if d := q.Get("domain"); d != "" {
		h, err := hostname.Parse(d)
		if errs.Check("/domain", err) {
			req.Search.Domain = &h
		}
	}
	pq, err := parseZipFormat(q.Get("format"))
	errs.Check("/format", err)
	req.Query = pq
	if err := errs.Err(); err != nil {
		u.errorPage(w, r, http.StatusUnprocessableEntity, "Invalid filter", err.Error())
		return
	}
	var many *qrzip.TooManyError
	if err := u.Zip.Check(r.Context(), ws.ID, req); errors.As(err, &many) {
		u.errorPage(w, r, http.StatusUnprocessableEntity, "Too many QR codes", "This filter selects "+i64toa(many.Count)+" links; one download holds at most 1,000 QR codes. Narrow the search, the status or the domain.")
		return
	} else if u.failed(w, r, err) {
		return
	}
	started, err := u.Zip.WriteResponse(r.Context(), ws.ID, req, w)
	if err != nil && started {
		u.Log.WarnContext(r.Context(), "QR ZIP aborted", "err", err)
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		u.failed(w, r, err)
	}
}

// parseZipFormat reads the download's format (png when empty).
func parseZipFormat(f string) (qr.Query, error) {
	vals := url.Values{}
	if f != "" {
		vals.Set("format", f)
	}
	return qr.ParseQuery(vals)
}
