package web

import (
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/validate"
)

// maxDesignFormBytes bounds the designer's multipart post: a 256 KiB logo
// and the other fields.
const maxDesignFormBytes = 320 << 10

// designForm reads the designer's posted fields (a multipart form with
// the logo file) into a design update; the frame takes the foreground
// colour. view is the designer as posted, for showing it again with its
// errors.
//
// A logo's decode is admitted by the workspace's Logo budget first
// (internal/budget): its refusal is the error, and release, to be called
// when the request ends, gives the admission back.
func designForm(r *http.Request, base qrdesign.Design, ws uuid.UUID) (_ qrdesign.Update, _ qrDesign, release func(), _ error) {
	release = func() {}
	if err := r.ParseMultipartForm(maxDesignFormBytes); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		var errs validate.Errors
		errs.Add("/logo", "could not be read (at most 256 KiB)")
		return qrdesign.Update{}, parseQRDesign(nil, base), release, errs
	}
	q := r.Form
	view := parseQRDesign(q, base)
	var (
		u    qrdesign.Update
		errs validate.Errors
	)
	if errs.Check("/fg", view.fgErr) {
		u.FG = link.Some(view.fg)
	}
	if errs.Check("/bg", view.bgErr) {
		u.BG = link.Some(view.bg)
	}
	switch e := qr.ECC(q.Get("ecc")); e {
	case qr.ECCLow, qr.ECCMedium, qr.ECCQuartile, qr.ECCHigh:
		u.ECC = link.Some(e)
	default:
		errs.Add("/ecc", "must be one of L, M, Q, H")
	}
	if n, err := strconv.Atoi(q.Get("margin")); err == nil && n >= qr.MinMargin && n <= qr.MaxMargin {
		u.Margin = link.Some(n)
	} else {
		errs.Add("/margin", "must be a whole number from 0 to 16")
	}
	if m, err := qr.ParseModuleStyle(q.Get("modules")); errs.Check("/modules", err) {
		u.Modules = link.Some(m)
	}
	u.Frame = link.Some[*qrdesign.FrameInput](nil)
	if t := strings.TrimSpace(q.Get("frame")); t != "" {
		if text, err := qr.ParseFrameText(t); errs.Check("/frame/text", err) {
			u.Frame = link.Some(&qrdesign.FrameInput{Text: text})
		}
	}
	admit := func(cost int64) error {
		rel, err := budget.Admit(r.Context(), budget.Logo, ws, cost)
		if err == nil {
			release = rel
		}
		return err
	}
	logo, ok, err := uploadedLogo(r, &errs, admit)
	if err != nil {
		return u, view, release, err
	}
	if ok {
		u.Logo = link.Some(logo)
	} else if q.Get("nologo") == "1" {
		u.Logo = link.Some[*qr.Logo](nil)
	}
	return u, view, release, errs.Err()
}

// uploadedLogo reads the logo file, if one was chosen, through the API's
// checks (PNG or JPEG, ≤ 256 KiB, ≤ 2048 px), its decode admitted by
// admit; a refusal is the error, the rest field errors in errs.
func uploadedLogo(r *http.Request, errs *validate.Errors, admit qr.Admit) (*qr.Logo, bool, error) {
	if r.MultipartForm == nil || len(r.MultipartForm.File["logo"]) == 0 {
		return nil, false, nil
	}
	fh := r.MultipartForm.File["logo"][0]
	if fh.Size == 0 {
		return nil, false, nil
	}
	raw, err := readPart(fh)
	if err != nil {
		errs.Add("/logo", "could not be read")
		return nil, false, nil
	}
	logo, err := qr.ParseLogoAdmitted(raw, admit)
	var refused *budget.Refused
	if errors.As(err, &refused) || r.Context().Err() != nil {
		return nil, false, err
	}
	if !errs.Check("/logo", err) {
		return nil, false, nil
	}
	return logo, true, nil
}

func readPart(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, qr.MaxLogoBytes+1))
}

// designErrors shows a refused design on the designer: field errors next
// to their fields (the pointers' names), an unreadable design as a
// sentence under the preview.
func designErrors(view *qrDesign, err error) bool {
	if errors.Is(err, qrdesign.ErrUnreadable) {
		view.Errors["unreadable"] = "In this design the code does not scan: a QR decoder could not read it back. Raise the contrast or the margin, choose square modules, or leave the logo or the frame out."
		return true
	}
	fe, ok := fieldErrors(err)
	if !ok {
		return false
	}
	for pointer, msg := range fe {
		name := strings.TrimPrefix(pointer, "/")
		if name == "frame/text" || name == "frame/color" {
			name = "frame"
		}
		view.Errors[name] = msg
	}
	return true
}

// linkQRDesignSave saves the designer's fields as the link's own design
// (POST /w/{ws}/links/{link}/qr/design), proven to scan like the API's PUT.
func (u *UI) linkQRDesignSave(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	base, err := u.Designs.ForLink(r.Context(), ws.ID, l)
	if u.failed(w, r, err) {
		return
	}
	upd, view, release, err := designForm(r, base, ws.ID)
	defer release()
	if err == nil {
		_, err = u.Designs.PutLink(r.Context(), ws.ID, l, upd)
	}
	if err != nil {
		if !designErrors(&view, err) {
			u.failed(w, r, err)
			return
		}
		u.renderLinkWith(w, r, http.StatusUnprocessableEntity, l, editFormOf(l), destinationsFormOf(l), &view)
		return
	}
	u.redirectFlash(w, r, linkPath(ws, l.ID, "")+"#qr", flashOK, "QR design saved: every QR code of this link is drawn in it now.")
}

// linkQRDesignReset removes the link's own design: it follows the
// workspace's QR style again.
func (u *UI) linkQRDesignReset(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	if u.failed(w, r, u.Designs.DeleteLink(r.Context(), ws.ID, l)) {
		return
	}
	u.redirectFlash(w, r, linkPath(ws, l.ID, "")+"#qr", flashOK, "This link's QR codes follow the workspace's QR style again.")
}
